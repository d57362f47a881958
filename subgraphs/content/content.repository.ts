import { and, desc, eq, inArray, isNotNull, isNull, or, sql, type SQL } from 'drizzle-orm';
import { preparedOnce, SteppedKeys, type Executor } from '../../db/src/index.js';
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
 * skips nothing, reads its rows straight from that index's order. An offset of `POST_PAGE_STEP` or more seeks from
 * the sort key of the row at the step below it, remembered for `POST_PAGE_KEY_TTL_MS` per tribe and filter (as the
 * Platform API's members list does): page 1,000 costs about what page 50 costs. While a key stands, a post published
 * or removed above it shifts the deep pages by one, as between two requests of a plain offset list; the rows are
 * always read now.
 */
export async function listPosts(
  db: Executor,
  communityId: string,
  filter: { pinned?: boolean; authorId?: string; visibilities?: Visibility[]; removedVisibleTo?: 'all' | 'none' | string },
  limit: number,
  offset: number,
  now: Date,
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
    if (offset === 0) return firstPageOfTribe(db).execute(values);
    if (offset < POST_PAGE_STEP) return pageOfTribe(db).execute({ ...values, offset });
    // A deep page seeks from the remembered key of the step below it (see `SteppedKeys`), counted for this filter.
    const step = offset - (offset % POST_PAGE_STEP);
    const scope = [communityId, values.visibilities.join(','), values.seesRemoved, values.removedOf ?? ''].join('|');
    const key = await pageKeys.at(db, scope, step, now.getTime(), (from, skip) =>
      firstRow(from ? keyAfter(db).execute({ ...values, keyCreatedAt: from.createdAt, keyId: from.id, skip }) : keyFromStart(db).execute({ ...values, skip })),
    );
    if (!key) return [];
    return pageAfterKey(db).execute({ ...values, keyCreatedAt: key.createdAt, keyId: key.id, offset: offset - step });
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

/** A later page of it, by the deferred join, optionally from a sort key (`after`): prepared once per database. */
const deferredPageOfTribe = (db: Executor, after: SQL | undefined, name: string) =>
  db
    .select()
    .from(posts)
    .where(
      inArray(
        posts.id,
        db
          .select({ id: posts.id })
          .from(posts)
          .where(and(inPageOfTribe, after))
          .orderBy(desc(posts.createdAt), desc(posts.id))
          .limit(sql.placeholder('limit'))
          .offset(sql.placeholder('offset')),
      ),
    )
    .orderBy(desc(posts.createdAt), desc(posts.id))
    .prepare(name);

/** Deep pages seek from a remembered key every `POST_PAGE_STEP` rows (see `listPosts`). */
export const POST_PAGE_STEP = 5_000;
/** How long a remembered key stands for its offset. */
export const POST_PAGE_KEY_TTL_MS = 5_000;

/** The sort key of a row: `created_at` as PostgreSQL's text (microseconds kept) and the id. */
interface PageKey {
  createdAt: string;
  id: string;
}
const pageKeys = new SteppedKeys<PageKey>(POST_PAGE_STEP, POST_PAGE_KEY_TTL_MS);
const atOrAfterKey = sql`(${posts.createdAt}, ${posts.id}) <= (${sql.placeholder('keyCreatedAt')}::timestamptz, ${sql.placeholder('keyId')}::uuid)`;

const pageOfTribe = preparedOnce((db) => deferredPageOfTribe(db, undefined, 'content_page_of_tribe'));
const pageAfterKey = preparedOnce((db) => deferredPageOfTribe(db, atOrAfterKey, 'content_page_of_tribe_after_key'));

/** The key of the row `skip` entries into the list (from a key, included, or from the start). */
const keySelect = (db: Executor, after: SQL | undefined, name: string) =>
  db
    .select({ createdAt: sql<string>`${posts.createdAt}::text`, id: posts.id })
    .from(posts)
    .where(and(inPageOfTribe, after))
    .orderBy(desc(posts.createdAt), desc(posts.id))
    .limit(1)
    .offset(sql.placeholder('skip'))
    .prepare(name);
const keyFromStart = preparedOnce((db) => keySelect(db, undefined, 'content_page_key'));
const keyAfter = preparedOnce((db) => keySelect(db, atOrAfterKey, 'content_page_key_after'));
const firstRow = async <T>(rows: Promise<T[]>): Promise<T | undefined> => (await rows)[0];

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
