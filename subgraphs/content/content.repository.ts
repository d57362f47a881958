import { and, desc, eq, inArray, isNotNull, isNull, or, sql, type SQL } from 'drizzle-orm';
import { preparedOnce, type Executor } from '../../db/src/index.js';
import { posts, type Post, type Visibility } from './content.tables.js';

export async function insertPost(db: Executor, values: typeof posts.$inferInsert): Promise<Post> {
  const [row] = await db.insert(posts).values(values).returning();
  return row;
}

export async function findPostsByIds(db: Executor, ids: readonly string[]): Promise<Post[]> {
  if (ids.length === 0) return [];
  return db.select().from(posts).where(inArray(posts.id, [...ids]));
}

/**
 * A page of a tribe's published posts, newest first, by offset (the resource API's page numbers). The offset is
 * taken over ids alone, by an index-only scan of `posts_community_published_created_idx` (migration 0021), and only
 * the page's rows are read (a deferred join): a deep page skips index entries, not table rows. The first page, which
 * skips nothing, reads its rows straight from that index's order.
 */
export async function listPosts(
  db: Executor,
  communityId: string,
  filter: { pinned?: boolean; authorId?: string; visibilities?: Visibility[]; removedVisibleTo?: 'all' | 'none' | string },
  limit: number,
  offset: number,
): Promise<Post[]> {
  if (filter.pinned === undefined && !filter.authorId && filter.visibilities) {
    const who = filter.removedVisibleTo;
    const values = {
      communityId,
      visibilities: filter.visibilities,
      seesRemoved: who === 'all',
      removedOf: who && who !== 'all' && who !== 'none' ? who : null,
      limit,
    };
    return offset === 0 ? firstPageOfTribe(db).execute(values) : pageOfTribe(db).execute({ ...values, offset });
  }
  const page = db
    .select({ id: posts.id })
    .from(posts)
    .where(
      and(
        eq(posts.communityId, communityId),
        eq(posts.status, 'published'),
        filter.pinned === undefined ? undefined : filter.pinned ? isNotNull(posts.pinnedAt) : isNull(posts.pinnedAt),
        filter.authorId ? eq(posts.authorId, filter.authorId) : undefined,
        filter.visibilities ? inArray(posts.visibility, filter.visibilities) : undefined,
        removedFilter(filter.removedVisibleTo),
      ),
    )
    .orderBy(desc(posts.createdAt), desc(posts.id))
    .limit(limit)
    .offset(offset);
  return db.select().from(posts).where(inArray(posts.id, page)).orderBy(desc(posts.createdAt), desc(posts.id));
}

/**
 * What the list without the pinned and author filters (the common request) keeps. `status` is written in the text,
 * not sent as a parameter, so that the plan PostgreSQL keeps for the prepared statement can use the partial index.
 */
const inPageOfTribe = and(
  eq(posts.communityId, sql.placeholder('communityId')),
  sql`${posts.status} = 'published'`,
  sql`${posts.visibility} = any(${sql.placeholder('visibilities')}::text[])`,
  sql`(${sql.placeholder('seesRemoved')}::boolean or ${posts.removedAt} is null or ${posts.authorId} = ${sql.placeholder('removedOf')}::uuid)`,
);

/** That list's first page: one statement prepared once per database. */
const firstPageOfTribe = preparedOnce((db) =>
  db
    .select()
    .from(posts)
    .where(inPageOfTribe)
    .orderBy(desc(posts.createdAt), desc(posts.id))
    .limit(sql.placeholder('limit'))
    .prepare('content_first_page_of_tribe'),
);

/** Any later page of it, by the deferred join: one statement prepared once per database. */
const pageOfTribe = preparedOnce((db) =>
  db
    .select()
    .from(posts)
    .where(
      inArray(
        posts.id,
        db
          .select({ id: posts.id })
          .from(posts)
          .where(inPageOfTribe)
          .orderBy(desc(posts.createdAt), desc(posts.id))
          .limit(sql.placeholder('limit'))
          .offset(sql.placeholder('offset')),
      ),
    )
    .orderBy(desc(posts.createdAt), desc(posts.id))
    .prepare('content_page_of_tribe'),
);

/**
 * Which removed posts a list keeps: `all` (moderators), a user id (only that author's), `none` or absent (none).
 */
function removedFilter(who: 'all' | 'none' | string | undefined): SQL | undefined {
  if (who === 'all') return undefined;
  if (!who || who === 'none') return isNull(posts.removedAt);
  return or(isNull(posts.removedAt), eq(posts.authorId, who));
}

/** Published public posts of a tribe by publication date (creation date when none), newest first. */
export async function listPublicPublished(db: Executor, communityId: string, limit: number, offset: number): Promise<Post[]> {
  return db
    .select()
    .from(posts)
    .where(and(eq(posts.communityId, communityId), eq(posts.status, 'published'), eq(posts.visibility, 'public'), isNull(posts.removedAt)))
    .orderBy(desc(sql`coalesce(${posts.publishedAt}, ${posts.createdAt})`), desc(posts.id))
    .limit(limit)
    .offset(offset);
}

export async function updatePost(db: Executor, id: string, patch: Partial<typeof posts.$inferInsert>): Promise<Post> {
  const [row] = await db.update(posts).set({ ...patch, updatedAt: new Date() }).where(eq(posts.id, id)).returning();
  return row;
}

export async function deletePost(db: Executor, id: string): Promise<void> {
  await db.delete(posts).where(eq(posts.id, id));
}

/**
 * The TOP score of a post, time decay without "now": log10(1 + reactions + 2 × comments) + epoch(published_at) / 45000.
 * Ten times the engagement is worth 12.5 hours of recency; the order of two posts never changes by itself, so a keyset
 * cursor over it stays valid. `reactions` and `comments` are SQL for the new counts.
 */
const hotScore = (reactions: SQL, comments: SQL) =>
  sql`log(greatest(1, 1 + ${reactions} + 2 * ${comments})) + coalesce(extract(epoch from ${posts.publishedAt})::double precision / 45000, 0)`;

/**
 * Moves a post's counters by `reactions` and `comments` (+1, -1 or 0), recomputes its TOP score and, with `activeAt`,
 * its ACTIVE time, in one statement (call it in the transaction of the change it counts).
 */
export async function bumpPostCounters(db: Executor, postId: string, by: { reactions?: number; comments?: number; activeAt?: Date }): Promise<void> {
  const r = sql`${posts.reactionCount} + ${by.reactions ?? 0}`;
  const c = sql`${posts.commentCount} + ${by.comments ?? 0}`;
  await db
    .update(posts)
    .set({
      reactionCount: sql`greatest(0, ${r})`,
      commentCount: sql`greatest(0, ${c})`,
      hotScore: hotScore(r, c),
      ...(by.activeAt ? { activeAt: sql`greatest(${posts.activeAt}, ${by.activeAt.toISOString()}::timestamptz)` } : {}),
    })
    .where(eq(posts.id, postId));
}

/** The TOP score and ACTIVE time of a post being published at `publishedAt` (no reactions or comments counted yet). */
export const publishedScores = (publishedAt: Date) => ({ hotScore: publishedAt.getTime() / 1000 / 45000, activeAt: publishedAt });
