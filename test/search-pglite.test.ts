import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTribe, join, signupUser } from './factory.js';
import { gql, startPgliteService, type TestService } from './support.js';

const SEARCH = `query($q: String!, $c: ID, $first: Int, $after: String) {
  search(query: $q, communityId: $c, first: $first, after: $after) {
    edges { node { post { id } comment { id } snippet rank } }
    pageInfo { hasNextPage endCursor }
  }
}`;

/** The same search SQL (websearch_to_tsquery, ts_rank, ts_headline, keyset) and discover on the embedded PGlite. */
describe('search and discover on embedded PGlite', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startPgliteService();
  }, 120_000);
  afterAll(async () => {
    await t.stop();
  });

  it('ranks, highlights, pages and scopes search as on PostgreSQL', async () => {
    expect(t.deps.database.kind).toBe('pglite');
    const owner = await signupUser(t);
    const member = await signupUser(t);
    const tribe = await createTribe(t, owner, { category: 'tech' });
    await join(t, member, tribe.handle);
    const post = async (content: string, extra: Record<string, unknown> = {}) => {
      const out = await gql(t, owner, 'mutation($c: ID!, $i: CreatePostInput!){ createPost(communityId: $c, input: $i){ id } }', { c: tribe.id, i: { content, ...extra } });
      expect(out.errors).toBeUndefined();
      return out.data.createPost.id as string;
    };
    const strong = await post('<p>Gardening &amp; <b>gardens</b>: garden tips</p>');
    const weak = await post('<p>One garden among other words</p>');
    const hidden = await post('<p>garden for members</p>', { visibility: 'members' });
    await post('<p>garden draft</p>', { status: 'draft' });
    const out = await gql(t, member, 'mutation($p: ID!, $i: CreateCommentInput!){ createComment(postId: $p, input: $i){ id } }', { p: weak, i: { content: 'my garden too' } });
    const comment = out.data.createComment.id as string;

    const first = await gql(t, member, SEARCH, { q: 'gardens', c: tribe.id, first: 2 });
    expect(first.errors).toBeUndefined();
    expect(first.data.search.edges[0].node).toEqual({ post: { id: strong }, comment: null, snippet: '<mark>Gardening</mark> &amp; <mark>gardens</mark>: <mark>garden</mark> tips', rank: expect.any(Number) });
    expect(first.data.search.pageInfo.hasNextPage).toBe(true);
    const rest = await gql(t, member, SEARCH, { q: 'gardens', c: tribe.id, first: 50, after: first.data.search.pageInfo.endCursor });
    const all = [...first.data.search.edges, ...rest.data.search.edges].map((e: { node: { post: { id: string }; comment: { id: string } | null } }) => e.node.comment?.id ?? e.node.post.id);
    expect(all.sort()).toEqual([strong, weak, hidden, comment].sort());
    expect(new Set(all).size).toBe(4);

    const anonymous = await gql(t, null, SEARCH, { q: 'garden', c: tribe.id });
    expect(anonymous.data.search.edges.map((e: { node: { post: { id: string } } }) => e.node.post.id).sort()).toEqual([strong, weak, weak].sort());
    for (const q of ['"unbalanced', 'the and of', '&|!():*', '\\', '🎉', 'x'.repeat(10_000)]) {
      const hostile = await gql(t, member, SEARCH, { q });
      expect(hostile.errors).toBeUndefined();
    }
  }, 60_000);

  it('discovers public tribes and counts categories', async () => {
    const owner = await signupUser(t);
    const open = await createTribe(t, owner, { name: 'Pglite 100% open', category: 'music' });
    await createTribe(t, owner, { name: 'Pglite 100% closed', category: 'music', isPublic: false });
    for (const sort of ['TRENDING', 'NEWEST', 'LARGEST']) {
      const out = await gql(t, null, 'query($s: DiscoverSort){ discoverCommunities(query: "pglite 100%", sort: $s){ edges { node { id } } } }', { s: sort });
      expect(out.errors).toBeUndefined();
      expect(out.data.discoverCommunities.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([open.id]);
    }
    const counts = await gql(t, null, '{ communityCategories { category count } }');
    expect(counts.data.communityCategories.find((c: { category: string }) => c.category === 'music').count).toBe(1);
  }, 60_000);
});
