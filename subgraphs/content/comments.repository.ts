import { and, asc, eq, isNull, or, sql } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import { comments, type Comment } from './content.tables.js';

export async function insertComment(db: Executor, values: typeof comments.$inferInsert): Promise<Comment> {
  const [row] = await db.insert(comments).values(values).returning();
  return row;
}

export async function findComment(db: Executor, id: string): Promise<Comment | undefined> {
  const [row] = await db.select().from(comments).where(eq(comments.id, id)).limit(1);
  return row;
}

/**
 * The comment, locked until the transaction ends: `update` for a change of the comment itself (edit, delete),
 * `share` for a reply being attached to it. A delete and a new reply to the same comment thus never interleave.
 */
export async function lockComment(tx: Executor, id: string, mode: 'update' | 'share'): Promise<Comment | undefined> {
  const [row] = await tx.select().from(comments).where(eq(comments.id, id)).for(mode);
  return row;
}

/**
 * Comments of a post, tombstones included, oldest first. Removed ones, and ones automod holds for review: all with
 * `all`, else only those of the author `removedVisibleTo` (none when null).
 */
export async function listComments(db: Executor, postId: string, removedVisibleTo: 'all' | string | null, limit: number, offset: number): Promise<Comment[]> {
  const removed =
    removedVisibleTo === 'all'
      ? undefined
      : removedVisibleTo
        ? or(and(isNull(comments.removedAt), eq(comments.status, 'published')), eq(comments.authorId, removedVisibleTo))
        : and(isNull(comments.removedAt), eq(comments.status, 'published'));
  return db
    .select()
    .from(comments)
    .where(and(eq(comments.postId, postId), removed))
    .orderBy(asc(comments.createdAt), asc(comments.id))
    .limit(limit)
    .offset(offset);
}

/** Replaces a live comment's text; undefined when it is gone or a tombstone. */
export async function updateCommentBody(db: Executor, id: string, body: string, at: Date): Promise<Comment | undefined> {
  const [row] = await db
    .update(comments)
    .set({ body, updatedAt: at })
    .where(and(eq(comments.id, id), isNull(comments.deletedAt)))
    .returning();
  return row;
}

/** True when any comment (a tombstone too) replies to `id`. */
export async function hasReplies(db: Executor, id: string): Promise<boolean> {
  const rows = await db.select({ one: sql<number>`1` }).from(comments).where(eq(comments.parentId, id)).limit(1);
  return rows.length > 0;
}

/** Turns a live comment into a tombstone (no text, `deleted_at` set); false when it was not live. */
export async function tombstoneComment(db: Executor, id: string, at: Date): Promise<boolean> {
  const rows = await db
    .update(comments)
    .set({ body: null, deletedAt: at })
    .where(and(eq(comments.id, id), isNull(comments.deletedAt)))
    .returning({ id: comments.id });
  return rows.length === 1;
}

/** Deletes a comment row (its mentions go with it); false when it was already gone. */
export async function deleteComment(db: Executor, id: string): Promise<boolean> {
  const rows = await db.delete(comments).where(eq(comments.id, id)).returning({ id: comments.id });
  return rows.length === 1;
}
