import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';

/** Takes the author's posting lock until the transaction ends: two writes of one author count one after the other. */
export async function lockAuthor(tx: Executor, authorId: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`posting:${authorId}`}, 0))`);
}

/**
 * How many posts and comments `authorId` created after `since` (any tribe), and the oldest of those creation times,
 * in one statement over the `(author_id, created_at)` indexes.
 */
export async function createdSince(tx: Executor, authorId: string, since: Date): Promise<{ count: number; oldest: Date | null }> {
  const at = since.toISOString();
  const result = (await tx.execute(sql`
    select count(*)::int as n, min(created_at) as oldest from (
      select created_at from posts where author_id = ${authorId}::uuid and created_at > ${at}::timestamptz
      union all
      select created_at from comments where author_id = ${authorId}::uuid and created_at > ${at}::timestamptz
    ) recent`)) as unknown as { rows: Array<{ n: unknown; oldest: unknown }> };
  const row = result.rows[0];
  return { count: Number(row?.n ?? 0), oldest: row?.oldest == null ? null : new Date(row.oldest as string) };
}
