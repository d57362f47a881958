import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createPost, createTribe, join, signupUser } from './factory.js';
import { gql, movableClock, startPgliteService, type TestService } from './support.js';

const PAGE = 'edges { node { id isPinned commentCount reactions { total viewerReaction } } } pageInfo { hasNextPage endCursor }';
const HOME = `query($f: Int, $a: String){ homeFeed(first: $f, after: $a){ ${PAGE} } }`;
const COMMUNITY = `query($c: ID!, $s: FeedSort, $f: Int, $a: String){ communityFeed(communityId: $c, sort: $s, first: $f, after: $a){ ${PAGE} } }`;
const REACT = 'mutation($p: ID!){ react(target: { postId: $p }, kind: LIKE){ total } }';

/** The feeds' SQL (unnest + LATERAL keyset, row comparisons, to_char of timestamps) on the embedded PGlite. */
describe('feeds on embedded PGlite', () => {
  let t: TestService;
  const clock = movableClock();
  beforeAll(async () => {
    t = await startPgliteService(clock.now);
  }, 120_000);
  afterAll(async () => {
    await t.stop();
  });

  it('pages homeFeed across tribes and communityFeed by NEW, TOP and ACTIVE', async () => {
    expect(t.deps.database.kind).toBe('pglite');
    const [owner, viewer] = await Promise.all([signupUser(t), signupUser(t)]);
    const [a, b] = await Promise.all([createTribe(t, owner), createTribe(t, owner)]);
    await join(t, viewer, a.handle);
    await join(t, viewer, b.handle);
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      clock.advance(60_000);
      made.unshift((await createPost(t, owner, i % 2 ? a.id : b.id, i === 4 ? { isPinned: true } : {})).id);
    }
    const page1 = (await gql(t, viewer, HOME, { f: 2 })).data.homeFeed;
    const page2 = (await gql(t, viewer, HOME, { f: 2, a: page1.pageInfo.endCursor })).data.homeFeed;
    const page3 = (await gql(t, viewer, HOME, { f: 2, a: page2.pageInfo.endCursor })).data.homeFeed;
    const ids = (p: any) => p.edges.map((e: any) => e.node.id);
    expect([...ids(page1), ...ids(page2), ...ids(page3)]).toEqual(made);
    expect(page3.pageInfo.hasNextPage).toBe(false);

    // Tribe b holds made[0] (pinned), made[2], made[4], oldest last.
    const [pinned, newer, older] = [made[0], made[2], made[4]];
    expect((await gql(t, viewer, REACT, { p: older })).data.react.total).toBe(1);
    const feed = async (s: string, f?: number, after?: string) => (await gql(t, viewer, COMMUNITY, { c: b.id, s, f, a: after })).data.communityFeed;
    const first = await feed('NEW', 1);
    expect(ids(first)).toEqual([pinned, newer]);
    expect(ids(await feed('NEW', 1, first.pageInfo.endCursor))).toEqual([older]);
    // TOP: one reaction is worth log10(2) × 45000 s ≈ 3.8 hours, more than the two minutes between them.
    const top = await feed('TOP', 1);
    expect(ids(top)).toEqual([pinned, older]);
    expect(ids(await feed('TOP', 1, top.pageInfo.endCursor))).toEqual([newer]);
    expect(ids(await feed('ACTIVE'))).toEqual([pinned, newer, older]);
    expect((await feed('TOP')).edges[1].node.reactions).toEqual({ total: 1, viewerReaction: 'LIKE' });
  }, 60_000);
});
