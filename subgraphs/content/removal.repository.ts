import { and, eq, inArray, isNotNull, isNull } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import { comments, posts } from './content.tables.js';

/** A post or comment as the moderation queue shows it. */
export interface ModeratedRow {
  id: string;
  communityId: string;
  authorId: string | null;
  postId: string | null;
  body: string | null;
  removedAt: Date | null;
  removedReason: string | null;
}

export async function postsByIds(db: Executor, ids: readonly string[]): Promise<ModeratedRow[]> {
  if (ids.length === 0) return [];
  return db
    .select({
      id: posts.id,
      communityId: posts.communityId,
      authorId: posts.authorId,
      postId: posts.id,
      body: posts.body,
      removedAt: posts.removedAt,
      removedReason: posts.removedReason,
    })
    .from(posts)
    .where(inArray(posts.id, [...ids]));
}

export async function commentsByIds(db: Executor, ids: readonly string[]): Promise<ModeratedRow[]> {
  if (ids.length === 0) return [];
  return db
    .select({
      id: comments.id,
      communityId: comments.communityId,
      authorId: comments.authorId,
      postId: comments.postId,
      body: comments.body,
      removedAt: comments.removedAt,
      removedReason: comments.removedReason,
    })
    .from(comments)
    .where(inArray(comments.id, [...ids]));
}

/** Marks a live post or comment removed; false when it is gone or already removed. */
export async function markRemoved(db: Executor, kind: 'post' | 'comment', id: string, by: string, reason: string | null, at: Date): Promise<boolean> {
  const table = kind === 'post' ? posts : comments;
  const rows = await db
    .update(table)
    .set({ removedAt: at, removedBy: by, removedReason: reason })
    .where(and(eq(table.id, id), isNull(table.removedAt)))
    .returning({ id: table.id });
  return rows.length === 1;
}

/** Clears a removal; false when the post or comment was not removed. */
export async function clearRemoved(db: Executor, kind: 'post' | 'comment', id: string): Promise<boolean> {
  const table = kind === 'post' ? posts : comments;
  const rows = await db
    .update(table)
    .set({ removedAt: null, removedBy: null, removedReason: null })
    .where(and(eq(table.id, id), isNotNull(table.removedAt)))
    .returning({ id: table.id });
  return rows.length === 1;
}
