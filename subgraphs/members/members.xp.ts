import type { Executor } from '../../db/src/index.js';
import * as repo from './members.repository.js';

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
  if (!(await repo.lockMembership(tx, award.communityId, award.userId))) return false;
  if (!(await repo.insertXpAwardIfNew(tx, award))) return false;
  await repo.addXp(tx, award.communityId, award.userId, award.amount);
  return true;
}
