import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';

/** One counter of `sign_in_attempts` after an attempt was counted. */
export interface AttemptCount {
  key: string;
  attempts: number;
  windowStart: Date;
}

/**
 * Counts one attempt on each key (hashes of counter names), in one statement: a key whose window ended at or before
 * `expiredBefore` (or that has no row) starts a new window at `now` with 1. Returns every key's count after it. Keys are
 * taken in sorted order, so two concurrent attempts never wait on each other's rows in opposite orders.
 */
export async function countAttempt(db: Executor, keys: readonly string[], now: Date, expiredBefore: Date): Promise<AttemptCount[]> {
  const at = now.toISOString();
  const values = sql.join([...new Set(keys)].sort().map((key) => sql`(${key}, ${at}::timestamptz, 1)`), sql`, `);
  const result = (await db.execute(sql`
    insert into sign_in_attempts as a (key, window_start, attempts) values ${values}
    on conflict (key) do update set
      attempts = case when a.window_start <= ${expiredBefore.toISOString()}::timestamptz then 1 else a.attempts + 1 end,
      window_start = case when a.window_start <= ${expiredBefore.toISOString()}::timestamptz then excluded.window_start else a.window_start end
    returning key, attempts, window_start`)) as unknown as { rows: Array<{ key: unknown; attempts: unknown; window_start: unknown }> };
  return result.rows.map((r) => ({ key: String(r.key), attempts: Number(r.attempts), windowStart: new Date(r.window_start as string) }));
}

/** Forgets `cleared` entirely and takes one attempt back from each of `refunded` (never below zero). */
export async function proveAttempt(db: Executor, cleared: readonly string[], refunded: readonly string[]): Promise<void> {
  if (cleared.length) await db.execute(sql`delete from sign_in_attempts where key in (${sql.join(cleared.map((k) => sql`${k}`), sql`, `)})`);
  if (refunded.length) {
    await db.execute(sql`
      update sign_in_attempts set attempts = greatest(attempts - 1, 0)
      where key in (${sql.join(refunded.map((k) => sql`${k}`), sql`, `)})`);
  }
}

/** Deletes the counters whose window started before `before` (ended ones count nothing). */
export async function purgeEnded(db: Executor, before: Date): Promise<void> {
  await db.execute(sql`delete from sign_in_attempts where window_start < ${before.toISOString()}::timestamptz`);
}
