import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';

/**
 * Posts created per UTC day from `since` (inclusive) to `until` (exclusive), in one grouped statement: only days
 * with posts, as `YYYY-MM-DD`, oldest first.
 */
export async function postsPerDay(db: Executor, since: Date, until: Date): Promise<Array<{ day: string; count: number }>> {
  const result = await db.execute(sql`
    select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*)::int as n
    from posts
    where created_at >= ${since.toISOString()}::timestamptz and created_at < ${until.toISOString()}::timestamptz
    group by 1 order by 1`);
  return (result as unknown as { rows: Array<{ day: string; n: number }> }).rows.map((r) => ({ day: r.day, count: Number(r.n) }));
}
