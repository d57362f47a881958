import { getCommunity } from '../communities/index.js';
import {
  type Connection,
  type RequestContext,
  isNumberAndId,
  isTimeAndId,
  pageRequest,
  requireUser,
  toConnection,
} from '../kernel/index.js';
import { RANK, requireView, viewerTribes } from '../members/index.js';
import { seesRemoved, visibleTo } from './content.service.js';
import type { Post } from './content.tables.js';
import * as repo from './feed.repository.js';
import type { FeedRow, FeedSort } from './feed.repository.js';

export type { FeedSort } from './feed.repository.js';

interface PageArgs {
  first?: number | null;
  after?: string | null;
}

/** Keys before every real row of a sort (`desc` order): where a pinned post's cursor continues. */
const START = {
  TIME: ['9999-12-31T23:59:59.999Z', 'ffffffff-ffff-ffff-ffff-ffffffffffff'],
  TOP: [Number.MAX_VALUE, 'ffffffff-ffff-ffff-ffff-ffffffffffff'],
} as const;

const toPosts = (connection: Connection<FeedRow>): Connection<Post> => ({
  edges: connection.edges.map((e) => ({ node: e.node.post, cursor: e.cursor })),
  pageInfo: connection.pageInfo,
});

/**
 * The viewer's home feed: published posts of every tribe they belong to that they may see, newest publication first
 * (`published_at desc, id desc`). Signed-in only. Memberships are read in this request, so a removed member loses a
 * tribe's posts at once.
 */
export async function homeFeed(ctx: RequestContext, args: PageArgs): Promise<Connection<Post>> {
  const viewerId = requireUser(ctx);
  const list = `homeFeed:${viewerId}`;
  const { limit, after } = pageRequest(ctx, list, args, isTimeAndId);
  const tribes = (await viewerTribes(ctx)).map((m) => ({ communityId: m.communityId, seesAll: RANK[m.role] >= RANK.moderator }));
  const rows = await repo.homeFeed(ctx.app.database.db, { viewerId, tribes, after, limit: limit + 1 });
  return toPosts(toConnection(ctx, list, rows, limit, (r) => [r.key as string, r.post.id]));
}

/**
 * A tribe's feed (anyone for a public tribe, members for a private one). The first page starts with every pinned
 * post (most recently pinned first, not counted in `first`); then the other posts by `sort`: NEW (publication),
 * TOP (`hot_score`) or ACTIVE (latest comment, else publication), each `desc, id desc`.
 */
export async function communityFeed(ctx: RequestContext, communityId: string, args: PageArgs & { sort?: FeedSort | null }): Promise<Connection<Post>> {
  const community = await getCommunity(ctx, communityId);
  const role = await requireView(ctx, community);
  const sort = args.sort ?? 'NEW';
  const list = `communityFeed:${community.id}:${sort}`;
  const { limit, after } = sort === 'TOP' ? pageRequest(ctx, list, args, isNumberAndId) : pageRequest(ctx, list, args, isTimeAndId);
  const scope = { communityId: community.id, visibilities: visibleTo(role), viewerId: ctx.caller?.userId ?? null, seesRemoved: seesRemoved(role) };
  const [pinned, rows] = await Promise.all([
    after ? Promise.resolve([]) : repo.pinnedPosts(ctx.app.database.db, scope),
    repo.communityFeed(ctx.app.database.db, { ...scope, sort, after, limit: limit + 1 }),
  ]);
  const sorted = toPosts(toConnection(ctx, list, rows, limit, (r) => [r.key, r.post.id]));
  // A pinned post's cursor is the start of the sorted posts: continuing after it gives them from the top, unpinned.
  const head = toConnection(ctx, list, pinned, pinned.length, () => (sort === 'TOP' ? START.TOP : START.TIME));
  return { edges: [...head.edges, ...sorted.edges], pageInfo: sorted.pageInfo };
}
