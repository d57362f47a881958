import { and, desc, eq, inArray, or, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import { wins, type Win, type WinStatus } from './wins.tables.js';

export async function insertWin(db: Executor, values: typeof wins.$inferInsert): Promise<Win> {
  const [row] = await db.insert(wins).values(values).returning();
  return row;
}

export async function findWinsByIds(db: Executor, ids: readonly string[]): Promise<Win[]> {
  if (ids.length === 0) return [];
  return db.select().from(wins).where(inArray(wins.id, [...ids]));
}

/**
 * Wins of a tribe, newest first. `visibleTo`: null lists every win (moderators); a user id lists approved
 * wins plus that user's own pending ones.
 */
export async function listWins(
  db: Executor,
  communityId: string,
  filter: { status?: WinStatus; visibleTo: string | null | 'approved-only' },
  limit: number,
  offset: number,
): Promise<Win[]> {
  let visibility: SQL | undefined;
  if (filter.visibleTo === 'approved-only') visibility = eq(wins.status, 'approved');
  else if (filter.visibleTo) visibility = or(eq(wins.status, 'approved'), eq(wins.authorId, filter.visibleTo));
  return db
    .select()
    .from(wins)
    .where(and(eq(wins.communityId, communityId), filter.status ? eq(wins.status, filter.status) : undefined, visibility))
    .orderBy(desc(wins.createdAt), desc(wins.id))
    .limit(limit)
    .offset(offset);
}

/** Approves a pending win; undefined when it was not pending (approved before). */
export async function approvePending(db: Executor, id: string, approvedBy: string, at: Date): Promise<Win | undefined> {
  const [row] = await db
    .update(wins)
    .set({ status: 'approved', approvedBy, approvedAt: at })
    .where(and(eq(wins.id, id), eq(wins.status, 'pending')))
    .returning();
  return row;
}
