import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';

type Rows<T> = { rows: T[] };

/** Takes the user's upload lock until the transaction ends: two uploads of one user count one after the other. */
export async function lockUploader(tx: Executor, userId: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`media_upload:${userId}`}, 0))`);
}

/**
 * The upload attempts of `userId` after `since`: how many, and the oldest one's time. Drops the user's attempts from
 * before `since` on the way (they count no more).
 */
export async function attemptsSince(tx: Executor, userId: string, since: Date): Promise<{ count: number; oldest: Date | null }> {
  const at = since.toISOString();
  await tx.execute(sql`delete from media_upload_attempts where user_id = ${userId}::uuid and at <= ${at}::timestamptz`);
  const result = (await tx.execute(sql`
    select count(*)::int as n, min(at) as oldest from media_upload_attempts where user_id = ${userId}::uuid and at > ${at}::timestamptz`)) as unknown as Rows<{
    n: unknown;
    oldest: unknown;
  }>;
  const row = result.rows[0];
  return { count: Number(row?.n ?? 0), oldest: row?.oldest == null ? null : new Date(row.oldest as string) };
}

/** Records one upload attempt of `userId` at `at`. */
export async function insertAttempt(tx: Executor, userId: string, at: Date): Promise<void> {
  await tx.execute(sql`insert into media_upload_attempts (user_id, at) values (${userId}::uuid, ${at.toISOString()}::timestamptz)`);
}

/**
 * The bytes of the uploads `userId` wrote after `since` (`media.size_bytes`, the files as sent), and the creation time
 * of the upload whose leaving the window frees enough for `more` bytes within `quota` (null: never enough).
 */
export async function bytesSince(tx: Executor, userId: string, since: Date, more: number, quota: number): Promise<{ used: number; freesAfter: Date | null }> {
  const result = (await tx.execute(sql`
    with recent as (
      select created_at, sum(size_bytes) over (order by created_at, id) as through
      from media where owner_id = ${userId}::uuid and created_at > ${since.toISOString()}::timestamptz
    ), total as (select coalesce(max(through), 0) as used from recent)
    select (select used from total) as used,
      (select min(created_at) from recent, total where total.used - recent.through + ${more}::bigint <= ${quota}::bigint) as frees_after`)) as unknown as Rows<{
    used: unknown;
    frees_after: unknown;
  }>;
  const row = result.rows[0];
  return { used: Number(row?.used ?? 0), freesAfter: row?.frees_after == null ? null : new Date(row.frees_after as string) };
}
