import { and, eq, gt, inArray, sql } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import { communityModerationSettings, type ModerationSettingsRow } from './automod.tables.js';
import { comments, posts, type Comment, type Post } from './content.tables.js';

export async function findSettings(db: Executor, communityId: string): Promise<ModerationSettingsRow | undefined> {
  const [row] = await db.select().from(communityModerationSettings).where(eq(communityModerationSettings.communityId, communityId)).limit(1);
  return row;
}

export async function upsertSettings(db: Executor, values: typeof communityModerationSettings.$inferInsert): Promise<ModerationSettingsRow> {
  const { communityId: _id, ...set } = values;
  const [row] = await db
    .insert(communityModerationSettings)
    .values(values)
    .onConflictDoUpdate({ target: communityModerationSettings.communityId, set })
    .returning();
  return row;
}

/** How many posts the author created in the tribe after `since` (drafts and held posts too). */
export async function postsSince(db: Executor, communityId: string, authorId: string, since: Date): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(posts)
    .where(and(eq(posts.communityId, communityId), eq(posts.authorId, authorId), gt(posts.createdAt, since)));
  return Number(row?.n ?? 0);
}

/** One held item of a tribe's review list: a post or a comment, with its sort key. */
export interface HeldRow {
  kind: 'post' | 'comment';
  id: string;
  createdAt: Date;
}

/**
 * A page of a tribe's held posts and comments, oldest first (keyset on created_at, id), over the partial indexes of
 * held rows.
 */
export async function heldPage(db: Executor, communityId: string, after: [string, string] | null, limit: number): Promise<HeldRow[]> {
  const keyset = after ? sql`and (created_at, id) > (${after[0]}::timestamptz, ${after[1]}::uuid)` : sql``;
  const result = (await db.execute(sql`
    select kind, id, created_at from (
      (select 'post'::text as kind, id, created_at from posts
        where community_id = ${communityId}::uuid and status = 'pending_review' ${keyset} order by created_at, id limit ${limit})
      union all
      (select 'comment'::text as kind, id, created_at from comments
        where community_id = ${communityId}::uuid and status = 'pending_review' ${keyset} order by created_at, id limit ${limit})
    ) held order by created_at, id limit ${limit}`)) as unknown as { rows: Array<{ kind: 'post' | 'comment'; id: string; created_at: string | Date }> };
  return result.rows.map((r) => ({ kind: r.kind, id: r.id, createdAt: new Date(r.created_at) }));
}

/** The held post, locked; undefined unless it is held. */
export async function lockHeldPost(tx: Executor, id: string): Promise<Post | undefined> {
  const [row] = await tx.select().from(posts).where(and(eq(posts.id, id), eq(posts.status, 'pending_review'))).for('update');
  return row;
}

/** The held comment, locked; undefined unless it is held. */
export async function lockHeldComment(tx: Executor, id: string): Promise<Comment | undefined> {
  const [row] = await tx.select().from(comments).where(and(eq(comments.id, id), eq(comments.status, 'pending_review'))).for('update');
  return row;
}

export async function publishPost(tx: Executor, id: string, values: Partial<typeof posts.$inferInsert>): Promise<Post> {
  const [row] = await tx.update(posts).set({ ...values, status: 'published', heldReason: null }).where(eq(posts.id, id)).returning();
  return row;
}

export async function publishComment(tx: Executor, id: string): Promise<Comment> {
  const [row] = await tx.update(comments).set({ status: 'published', heldReason: null }).where(eq(comments.id, id)).returning();
  return row;
}

export async function findCommentsByIds(db: Executor, ids: readonly string[]): Promise<Comment[]> {
  if (ids.length === 0) return [];
  return db.select().from(comments).where(inArray(comments.id, [...ids]));
}
