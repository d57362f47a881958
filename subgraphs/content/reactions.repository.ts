import { and, eq, isNotNull, or, sql } from 'drizzle-orm';
import { preparedOnce, type Executor } from '../../db/src/index.js';
import { comments } from './content.tables.js';
import { reactions, type ReactionKind } from './reactions.tables.js';

/** What a reaction is on: a post, or a comment (with its post). */
export type ReactionTargetRef = { postId: string; commentId?: undefined } | { commentId: string; postId?: undefined };

/** The comment a reaction would be on: its post, tribe, author and whether it is a tombstone. */
export async function findCommentTarget(
  db: Executor,
  id: string,
): Promise<{ id: string; postId: string; communityId: string; authorId: string | null; deletedAt: Date | null } | undefined> {
  const [row] = await db
    .select({ id: comments.id, postId: comments.postId, communityId: comments.communityId, authorId: comments.authorId, deletedAt: comments.deletedAt })
    .from(comments)
    .where(eq(comments.id, id))
    .limit(1);
  return row;
}

/**
 * Sets the user's reaction on a target to `kind` (one per user per target: the unique partial indexes arbitrate
 * concurrent calls). True when a reaction was added, false when an existing one was replaced (or already that kind).
 */
export async function upsertReaction(
  tx: Executor,
  values: { communityId: string; userId: string; kind: ReactionKind } & ReactionTargetRef,
): Promise<boolean> {
  const onPost = values.postId !== undefined;
  const [row] = await tx
    .insert(reactions)
    .values({ communityId: values.communityId, userId: values.userId, kind: values.kind, postId: values.postId ?? null, commentId: values.commentId ?? null })
    .onConflictDoUpdate({
      target: onPost ? [reactions.postId, reactions.userId] : [reactions.commentId, reactions.userId],
      targetWhere: onPost ? isNotNull(reactions.postId) : isNotNull(reactions.commentId),
      set: { kind: values.kind },
    })
    .returning({ inserted: sql<boolean>`(xmax = 0)` });
  return row.inserted;
}

/** Removes the user's reaction on a target; true when there was one. */
export async function deleteReaction(tx: Executor, userId: string, target: ReactionTargetRef): Promise<boolean> {
  const on = target.postId !== undefined ? eq(reactions.postId, target.postId) : eq(reactions.commentId, target.commentId);
  const rows = await tx.delete(reactions).where(and(on, eq(reactions.userId, userId))).returning({ id: reactions.id });
  return rows.length > 0;
}

/** Moves a comment's reaction counter by `by` (never below zero), in the transaction of the change. */
export async function bumpCommentReactions(tx: Executor, commentId: string, by: number): Promise<void> {
  await tx
    .update(comments)
    .set({ reactionCount: sql`greatest(0, ${comments.reactionCount} + ${by})` })
    .where(eq(comments.id, commentId));
}

/** Rows of the given posts or comments: two uuid[] placeholders, `postIds` and `commentIds`. */
const onTargets = or(
  sql`${reactions.postId} = any(${sql.placeholder('postIds')}::uuid[])`,
  sql`${reactions.commentId} = any(${sql.placeholder('commentIds')}::uuid[])`,
);
const countsStatement = preparedOnce((db) =>
  db
    .select({
      postId: reactions.postId,
      commentId: reactions.commentId,
      kind: reactions.kind,
      n: sql<number>`count(*)::int`,
      mine: sql<boolean>`coalesce(bool_or(${reactions.userId} = ${sql.placeholder('viewerId')}::uuid), false)`,
    })
    .from(reactions)
    .where(onTargets)
    .groupBy(reactions.postId, reactions.commentId, reactions.kind)
    .prepare('content_reaction_counts'),
);

/**
 * Reaction counts per kind for every given post and comment, and whether `viewerId` (null: nobody) is among each
 * kind's reactors: one prepared statement, one array parameter each for posts and comments.
 */
export async function countsFor(
  db: Executor,
  viewerId: string | null,
  postIds: readonly string[],
  commentIds: readonly string[],
): Promise<Array<{ postId: string | null; commentId: string | null; kind: ReactionKind; n: number; mine: boolean }>> {
  return countsStatement(db).execute({ viewerId, postIds: [...postIds], commentIds: [...commentIds] });
}
