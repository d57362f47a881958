import { and, eq, sql } from 'drizzle-orm';
import { integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import type { Executor } from '../../db/src/index.js';
import { members } from './members.tables.js';

export const xpAwards = pgTable('xp_awards', {
  id: uuid('id').primaryKey().defaultRandom(),
  communityId: uuid('community_id').notNull(),
  userId: uuid('user_id').notNull(),
  amount: integer('amount').notNull(),
  source: text('source').notNull(),
  sourceKey: text('source_key').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * The level curve: level = floor(sqrt(xp / 100)) + 1, so level 2 starts at 100 XP, 3 at 400, 4 at 900,
 * 5 at 1600 (level n needs 100 * (n - 1)^2 XP).
 */
export const levelFor = (xp: number): number => Math.floor(Math.sqrt(Math.max(0, xp) / 100)) + 1;

/** The XP where `level` starts. */
export const xpForLevel = (level: number): number => 100 * (Math.max(1, level) - 1) ** 2;

export interface XpAward {
  communityId: string;
  userId: string;
  amount: number;
  /** What earned it: `course.completed`, `challenge.checkin`, `challenge.completed`, `win.approved`, ... */
  source: string;
  /** Unique per award, e.g. `challenge.checkin:<checkin id>`: awarding the same key again does nothing. */
  sourceKey: string;
}

/**
 * Awards XP once per `sourceKey`, inside the caller's transaction, and moves the member's xp and level.
 * Returns false when that key was awarded before (a retry), the amount is not positive, or the user is no
 * longer a member of the tribe (nothing is recorded then, so the award is not used up without XP moving).
 */
export async function awardXp(tx: Executor, award: XpAward): Promise<boolean> {
  if (!Number.isInteger(award.amount) || award.amount <= 0) return false;
  const member = and(eq(members.communityId, award.communityId), eq(members.userId, award.userId));
  const [current] = await tx.select({ userId: members.userId }).from(members).where(member).for('update');
  if (!current) return false;
  const inserted = await tx.insert(xpAwards).values(award).onConflictDoNothing({ target: xpAwards.sourceKey }).returning({ id: xpAwards.id });
  if (inserted.length === 0) return false;
  await tx
    .update(members)
    .set({
      xp: sql`${members.xp} + ${award.amount}`,
      level: sql`floor(sqrt((${members.xp} + ${award.amount}) / 100.0))::int + 1`,
    })
    .where(member);
  return true;
}
