import { inArray, sql } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import { digestState } from './digest.tables.js';

/** The `sentThrough` of each of these users that has one. */
export async function watermarksOf(db: Executor, userIds: readonly string[]): Promise<Map<string, Date>> {
  if (userIds.length === 0) return new Map();
  const rows = await db.select().from(digestState).where(inArray(digestState.userId, [...userIds]));
  return new Map(rows.map((r) => [r.userId, r.sentThrough]));
}

/**
 * Moves the user's watermark to `through` inside `tx`, only forward; false when another run moved it there (or past)
 * first (then this run's digest is not sent).
 */
export async function advance(tx: Executor, userId: string, through: Date, now: Date): Promise<boolean> {
  const rows = await tx
    .insert(digestState)
    .values({ userId, sentThrough: through, updatedAt: now })
    .onConflictDoUpdate({
      target: digestState.userId,
      set: { sentThrough: through, updatedAt: now },
      setWhere: sql`${digestState.sentThrough} < ${through.toISOString()}::timestamptz`,
    })
    .returning({ userId: digestState.userId });
  return rows.length === 1;
}
