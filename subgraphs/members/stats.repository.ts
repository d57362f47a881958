import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';

/**
 * Distinct users active in any tribe (a join, post, comment or reaction moves `members.last_active_at`) since `day`
 * and since `month`, in one statement.
 */
export async function activeUsers(db: Executor, day: Date, month: Date): Promise<{ day: number; month: number }> {
  const result = await db.execute(sql`
    select count(distinct user_id) filter (where last_active_at >= ${day.toISOString()}::timestamptz)::int as d,
           count(distinct user_id)::int as m
    from members where last_active_at >= ${month.toISOString()}::timestamptz`);
  const [row] = (result as unknown as { rows: Array<{ d: number; m: number }> }).rows;
  return { day: Number(row.d), month: Number(row.m) };
}
