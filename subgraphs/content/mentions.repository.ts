import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import { mentions, type MentionTarget } from './mentions.tables.js';

const ofTarget = (target: MentionTarget) => (target.commentId ? eq(mentions.commentId, target.commentId) : eq(mentions.postId, target.postId!));

/** The users mentioned in one post's or comment's text. */
export async function mentionedUserIds(db: Executor, target: MentionTarget): Promise<string[]> {
  const rows = await db.select({ userId: mentions.userId }).from(mentions).where(ofTarget(target));
  return rows.map((r) => r.userId);
}

/** Records mentions of `userIds` in the target's text (already-recorded ones are left alone). */
export async function insertMentions(db: Executor, communityId: string, target: MentionTarget, userIds: readonly string[], at: Date): Promise<void> {
  if (userIds.length === 0) return;
  await db
    .insert(mentions)
    .values(userIds.map((userId) => ({ communityId, postId: target.postId ?? null, commentId: target.commentId ?? null, userId, createdAt: at })))
    .onConflictDoNothing();
}

/** Removes the mentions of `userIds` (every mention of the target when `userIds` is omitted). */
export async function deleteMentions(db: Executor, target: MentionTarget, userIds?: readonly string[]): Promise<void> {
  if (userIds && userIds.length === 0) return;
  await db.delete(mentions).where(and(ofTarget(target), userIds ? inArray(mentions.userId, [...userIds]) : undefined));
}

/** The mentioned user ids per post (or per comment with `of: 'comment'`), in order of mention time, for many at once. */
export async function mentionsOf(db: Executor, of: 'post' | 'comment', ids: readonly string[]): Promise<Map<string, string[]>> {
  const byId = new Map<string, string[]>();
  if (ids.length === 0) return byId;
  const column = of === 'post' ? mentions.postId : mentions.commentId;
  const rows = await db
    .select({ id: column, userId: mentions.userId })
    .from(mentions)
    .where(sql`${column} = any(${sql.param([...ids])}::uuid[])`)
    .orderBy(asc(mentions.createdAt), asc(mentions.userId));
  for (const r of rows) {
    if (!r.id) continue;
    const list = byId.get(r.id) ?? [];
    list.push(r.userId);
    byId.set(r.id, list);
  }
  return byId;
}
