import { and, desc, eq, isNotNull, isNull, sql, type AnyColumn, type Placeholder, type SQL } from 'drizzle-orm';
import { preparedOnce, type Executor } from '../../db/src/index.js';
import { posts, type Post, type Visibility } from './content.tables.js';

/**
 * The feeds' SQL: keyset pages over the partial indexes of migration 0008 (`posts_feed_new_idx`, `posts_feed_top_idx`,
 * `posts_feed_active_idx`, all `where status = 'published'`). Every page is `order by <key> desc, id desc limit n`
 * after `(<key>, id) < (cursor)`, so a page costs the same at any depth and new posts never shift the pages behind
 * the cursor.
 */

/** A feed row: the post and its sort key as exact text (timestamps keep their microseconds, so no tie is lost). */
export interface FeedRow {
  post: Post;
  /** NEW and homeFeed: published_at; ACTIVE: active_at (ISO 8601 UTC, microseconds); TOP: hot_score. */
  key: string | number;
}

/** A tribe of the home feed and whether the viewer sees all of its posts (moderator and above) or not paid ones. */
export interface FeedTribe {
  communityId: string;
  seesAll: boolean;
}

export interface HomeFeedArgs {
  viewerId: string;
  tribes: readonly FeedTribe[];
  /** The last row seen: `[published_at ISO string, post id]`, or null for the first page. */
  after: readonly [string, string] | null;
  /** Rows to return: the page size plus one (the extra row says there is a next page). */
  limit: number;
}

/** A timestamp as ISO 8601 UTC text with its microseconds (a JS Date would round them away). */
const isoText = (column: AnyColumn | SQL) =>
  sql<string>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** The home feed's values, or placeholders of the same names for its prepared form. */
interface HomeFeedParams {
  ids: Placeholder | readonly string[];
  seesAll: Placeholder | readonly boolean[];
  viewerId: Placeholder | string;
  limit: Placeholder | number;
  /** The cursor's published_at and id; absent for a first page. */
  after?: { key: Placeholder | string; id: Placeholder | string };
}

/** An array value goes as one parameter (drizzle would otherwise spread it into a list). */
const param = (value: Placeholder | readonly unknown[]) => (Array.isArray(value) ? sql.param(value) : value);

/**
 * The home feed's one statement: for each tribe of the viewer (two array parameters, unnested), a LATERAL keyset
 * subquery on `posts_feed_new_idx` takes at most `limit` rows after the cursor; the union is ordered and cut to
 * `limit`. Work is (tribes × limit) index rows, whatever the depth. Visibility per tribe: moderators and above all
 * posts, members public and members-only ones, and everyone their own.
 */
function homeFeedSelect(db: Executor, p: HomeFeedParams) {
  const keyset = p.after ? sql`and (p.published_at, p.id) < (${p.after.key}::timestamptz, ${p.after.id}::uuid)` : sql``;
  const page = sql`
    select f.id from unnest(${param(p.ids)}::uuid[], ${param(p.seesAll)}::boolean[]) as m(community_id, sees_all)
    cross join lateral (
      select p.id, p.published_at from posts p
      where p.community_id = m.community_id and p.status = 'published'
        and (m.sees_all or p.visibility <> 'paid' or p.author_id = ${p.viewerId}::uuid)
        and (m.sees_all or p.removed_at is null or p.author_id = ${p.viewerId}::uuid)
        ${keyset}
      order by p.published_at desc, p.id desc
      limit ${p.limit}
    ) f
    order by f.published_at desc, f.id desc
    limit ${p.limit}`;
  return db
    .select({ post: posts, key: isoText(posts.publishedAt) })
    .from(posts)
    .where(sql`${posts.id} in (${page})`)
    .orderBy(desc(posts.publishedAt), desc(posts.id));
}

const placeholders = {
  ids: sql.placeholder('ids'),
  seesAll: sql.placeholder('seesAll'),
  viewerId: sql.placeholder('viewerId'),
  limit: sql.placeholder('limit'),
};
/** The home feed prepared once per database: a first page, and a page after a cursor. */
const firstPage = preparedOnce((db) => homeFeedSelect(db, placeholders).prepare('content_home_feed'));
const pageAfter = preparedOnce((db) =>
  homeFeedSelect(db, { ...placeholders, after: { key: sql.placeholder('afterKey'), id: sql.placeholder('afterId') } }).prepare('content_home_feed_after'),
);

const valuesOf = (args: HomeFeedArgs) => ({
  ids: args.tribes.map((t) => t.communityId),
  seesAll: args.tribes.map((t) => t.seesAll),
  viewerId: args.viewerId,
  limit: args.limit,
});

/**
 * The home feed's statement with `args` in place (see `homeFeedSelect`). Awaiting the builder runs it (`FeedRow`s,
 * newest publication first); `.toSQL()` gives `{ sql, params }` for a raw driver, and it embeds in a template
 * (`sql\`explain (format json) ${homeFeedQuery(db, args)}\``).
 */
export function homeFeedQuery(db: Executor, args: HomeFeedArgs) {
  const after = args.after ? { key: args.after[0], id: args.after[1] } : undefined;
  return homeFeedSelect(db, { ...valuesOf(args), after });
}

/** A page of the home feed (see `homeFeedSelect`), as a prepared statement. */
export async function homeFeed(db: Executor, args: HomeFeedArgs): Promise<FeedRow[]> {
  if (args.tribes.length === 0) return [];
  if (!args.after) return firstPage(db).execute(valuesOf(args));
  return pageAfter(db).execute({ ...valuesOf(args), afterKey: args.after[0], afterId: args.after[1] });
}

export type FeedSort = 'NEW' | 'TOP' | 'ACTIVE';

export interface CommunityFeedArgs {
  communityId: string;
  sort: FeedSort;
  /** Which visibilities the viewer sees; their own posts are always included (`authorId`). */
  visibilities: readonly Visibility[];
  viewerId: string | null;
  /** Moderators and above: posts removed by moderators are listed too (others see only their own removed posts). */
  seesRemoved?: boolean;
  /** The last row seen: `[key, post id]` (key: ISO timestamp for NEW and ACTIVE, the score for TOP), or null. */
  after: readonly [string | number, string] | null;
  limit: number;
}

const sortColumn = { NEW: posts.publishedAt, TOP: posts.hotScore, ACTIVE: posts.activeAt } as const;

/**
 * What a viewer sees of a tribe's published posts, as parameters (`communityId`, `visibilities` as one text[], a
 * `viewerId` that may be null and then matches no author, `seesRemoved`), so that one prepared statement serves every
 * viewer. `status = 'published'` stays a literal: the partial indexes' predicate, which a parameter would hide from a
 * generic plan.
 */
const visible = and(
  eq(posts.communityId, sql.placeholder('communityId')),
  sql`${posts.status} = 'published'`,
  sql`(${posts.visibility} = any(${sql.placeholder('visibilities')}::text[]) or ${posts.authorId} = ${sql.placeholder('viewerId')}::uuid)`,
  sql`(${sql.placeholder('seesRemoved')}::boolean or ${posts.removedAt} is null or ${posts.authorId} = ${sql.placeholder('viewerId')}::uuid)`,
);

/** Whose posts of which tribe a feed shows (see `visible`). */
type FeedScope = Pick<CommunityFeedArgs, 'communityId' | 'visibilities' | 'viewerId' | 'seesRemoved'>;

/** The placeholders' values for a viewer's scope. */
const scopeValues = (args: FeedScope) => ({
  communityId: args.communityId,
  visibilities: [...args.visibilities],
  viewerId: args.viewerId,
  seesRemoved: !!args.seesRemoved,
});

/**
 * A page of a tribe's non-pinned published posts by `sort` (`desc, id desc`), keyset on the matching partial index
 * after the cursor's key when `after`; the key compares as the index orders it: `(hot_score, id) < ($1::float8,
 * $2::uuid)` for TOP, timestamps otherwise.
 */
function communityFeedSelect(db: Executor, sort: FeedSort, after: boolean) {
  const column = sortColumn[sort];
  const keyset = !after
    ? undefined
    : sql`(${column}, ${posts.id}) < (${sql.placeholder('afterKey')}::${sql.raw(sort === 'TOP' ? 'float8' : 'timestamptz')}, ${sql.placeholder('afterId')}::uuid)`;
  const key = sort === 'TOP' ? posts.hotScore : isoText(column);
  return db
    .select({ post: posts, key })
    .from(posts)
    .where(and(visible, isNull(posts.pinnedAt), keyset))
    .orderBy(desc(column), desc(posts.id))
    .limit(sql.placeholder('limit'));
}

/** The community feed prepared once per database: per sort, a first page and a page after a cursor. */
const preparedFeed = (sort: FeedSort, after: boolean) =>
  preparedOnce((db) => communityFeedSelect(db, sort, after).prepare(`content_community_feed_${sort.toLowerCase()}${after ? '_after' : ''}`));
const communityFeedStatements = {
  NEW: { first: preparedFeed('NEW', false), after: preparedFeed('NEW', true) },
  TOP: { first: preparedFeed('TOP', false), after: preparedFeed('TOP', true) },
  ACTIVE: { first: preparedFeed('ACTIVE', false), after: preparedFeed('ACTIVE', true) },
};

/** A page of a tribe's non-pinned published posts by `sort` (see `communityFeedSelect`), as a prepared statement. */
export async function communityFeed(db: Executor, args: CommunityFeedArgs): Promise<FeedRow[]> {
  const statements = communityFeedStatements[args.sort];
  const values = { ...scopeValues(args), limit: args.limit };
  if (!args.after) return statements.first(db).execute(values);
  return statements.after(db).execute({ ...values, afterKey: args.after[0], afterId: args.after[1] });
}

/** The pinned posts' statement, prepared once per database. */
const pinnedStatement = preparedOnce((db) =>
  db
    .select()
    .from(posts)
    .where(and(visible, isNotNull(posts.pinnedAt)))
    .orderBy(desc(posts.pinnedAt), desc(posts.id))
    .prepare('content_community_pinned'),
);

/** Every pinned published post of a tribe the viewer sees, most recently pinned first (the first page's head). */
export async function pinnedPosts(db: Executor, args: FeedScope): Promise<Post[]> {
  return pinnedStatement(db).execute(scopeValues(args));
}
