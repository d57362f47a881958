import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { createTribe, join, setRole, signupUser, unique, type TestUser } from './factory.js';
import { gql, sqlRows, startService, type TestService, ok, failure, tamperedCursor } from './support.js';


const SEARCH = `query($q: String!, $c: ID, $first: Int, $after: String) {
  search(query: $q, communityId: $c, first: $first, after: $after) {
    edges { cursor node { post { id community { id } } comment { id body } snippet rank } }
    pageInfo { hasNextPage endCursor }
  }
}`;
const CREATE_POST = 'mutation($c: ID!, $i: CreatePostInput!){ createPost(communityId: $c, input: $i){ id } }';
const CREATE_COMMENT = 'mutation($p: ID!, $i: CreateCommentInput!){ createComment(postId: $p, input: $i){ id } }';

interface Hit {
  post: { id: string; community: { id: string } };
  comment: { id: string; body: string | null } | null;
  snippet: string;
  rank: number;
}

/** A word no other test uses (letters only, so the parser sees one plain word and the stemmer keeps it). */
const word = (): string => `zq${unique().replace(/[0-9]/g, (d) => 'ghijklmnop'[Number(d)])}`;

describe('search', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startService();
  });
  afterAll(async () => {
    await t.stop();
  });

  const search = (as: TestUser | null, vars: { q: string; c?: string; first?: number; after?: string }) => gql(t, as, SEARCH, vars);
  const hits = async (as: TestUser | null, vars: { q: string; c?: string; first?: number; after?: string }): Promise<Hit[]> =>
    ok(await search(as, vars)).search.edges.map((e: { node: Hit }) => e.node);
  const postIds = async (as: TestUser | null, vars: { q: string; c?: string }) => (await hits(as, vars)).map((h) => h.post.id).sort();
  const post = async (as: TestUser, communityId: string, content: string, extra: Record<string, unknown> = {}): Promise<string> =>
    ok(await gql(t, as, CREATE_POST, { c: communityId, i: { content, ...extra } })).createPost.id;
  const comment = async (as: TestUser, postId: string, content: string): Promise<string> =>
    ok(await gql(t, as, CREATE_COMMENT, { p: postId, i: { content } })).createComment.id;

  /** A public tribe (owner, moderator, member), a private tribe (owner, member) and an outsider of both. */
  const world = async () => {
    const [owner, moderator, member, outsider, privateOwner] = await Promise.all([1, 2, 3, 4, 5].map(() => signupUser(t)));
    const open = await createTribe(t, owner);
    await join(t, moderator, open.handle);
    await join(t, member, open.handle);
    await setRole(t, owner, open.id, moderator.id, 'moderator');
    const closed = await createTribe(t, privateOwner, { isPublic: false });
    const code = ok(await gql(t, privateOwner, 'mutation($c: ID!){ createInvite(communityId: $c) }', { c: closed.id })).createInvite;
    await join(t, member, closed.handle, code);
    return { owner, moderator, member, outsider, privateOwner, open, closed };
  };

  describe('ranking and snippets', () => {
    it('ranks the post that says the word more often first, each hit with its rank', async () => {
      const w = await world();
      const term = word();
      const once = await post(w.owner, w.open.id, `<p>${term} once among many other words about running and training</p>`);
      const thrice = await post(w.owner, w.open.id, `<p>${term} ${term} ${term}</p>`);
      const found = await hits(w.member, { q: term, c: w.open.id });
      expect(found.map((h) => h.post.id)).toEqual([thrice, once]);
      expect(found[0].rank).toBeGreaterThan(found[1].rank);
      expect(found.every((h) => h.comment === null && h.post.community.id === w.open.id)).toBe(true);
    });

    it('matches English word forms (stemming) and phrases', async () => {
      const w = await world();
      const term = word();
      const id = await post(w.owner, w.open.id, `<p>${term} runners were running quickly</p>`);
      await post(w.owner, w.open.id, `<p>${term} quickly, but nobody ran</p>`);
      expect(await postIds(w.member, { q: `${term} run`, c: w.open.id })).toEqual([id]);
      expect(await postIds(w.member, { q: `"running quickly" ${term}`, c: w.open.id })).toEqual([id]);
    });

    it('gives an escaped snippet whose only markup is <mark> around the matches', async () => {
      const w = await world();
      const term = word();
      await post(w.owner, w.open.id, `<p>Tom &amp; Jerry wrote &lt;script&gt;alert(1)&lt;/script&gt; next to <b>${term}</b> and "quotes" <script>steal()</script></p>`);
      const [hit] = await hits(w.member, { q: term, c: w.open.id });
      expect(hit.snippet).toBe(`Tom &amp; Jerry wrote &lt;script&gt;alert(1)&lt;/script&gt; next to <mark>${term}</mark> and &quot;quotes&quot;`);
      expect(hit.snippet.replace(/<\/?mark>/g, '')).not.toMatch(/[<>]/);
    });

    it('escapes markup written as text right against the matched word', async () => {
      const w = await world();
      const term = word();
      await post(w.owner, w.open.id, `<p>&lt;b&gt;${term}&lt;/b&gt; &amp;${term}&amp; <i>x</i>${term}</p>`);
      const [hit] = await hits(w.member, { q: term, c: w.open.id });
      expect(hit.snippet).toBe(`&lt;b&gt;<mark>${term}</mark>&lt;/b&gt; &amp;<mark>${term}</mark>&amp; x${term}`);
    });

    it('keeps a long text to an extract around the match', async () => {
      const w = await world();
      const term = word();
      const filler = Array.from({ length: 200 }, (_, i) => `filler${i}`).join(' ');
      await post(w.owner, w.open.id, `<p>${filler} ${term} ${filler}</p>`);
      const [hit] = await hits(w.member, { q: term, c: w.open.id });
      expect(hit.snippet).toContain(`<mark>${term}</mark>`);
      expect(hit.snippet.split(' ').length).toBeLessThanOrEqual(41);
    });
  });

  describe('visibility', () => {
    let w: Awaited<ReturnType<typeof world>>;
    let term: string;
    const ids: Record<string, string> = {};
    beforeAll(async () => {
      w = await world();
      term = word();
      ids.public = await post(w.owner, w.open.id, `<p>${term} public</p>`);
      ids.members = await post(w.owner, w.open.id, `<p>${term} members</p>`, { visibility: 'members' });
      ids.paid = await post(w.owner, w.open.id, `<p>${term} paid</p>`, { visibility: 'paid' });
      ids.ownPaid = await post(w.member, w.open.id, `<p>${term} my own paid</p>`, { visibility: 'paid' });
      ids.draft = await post(w.owner, w.open.id, `<p>${term} draft</p>`, { status: 'draft' });
      ids.closed = await post(w.privateOwner, w.closed.id, `<p>${term} private tribe</p>`);
      // Tribe isolation: the same word in a tribe none of them belongs to.
      const stranger = await signupUser(t);
      const elsewhere = await createTribe(t, stranger);
      ids.elsewhere = await post(stranger, elsewhere.id, `<p>${term} elsewhere</p>`);
    });
    const sorted = (...keys: string[]) => keys.map((k) => ids[k]).sort();

    it('shows anyone, anonymous included, only the public posts of a public tribe', async () => {
      expect(await postIds(null, { q: term, c: w.open.id })).toEqual(sorted('public'));
      expect(await postIds(w.outsider, { q: term, c: w.open.id })).toEqual(sorted('public'));
    });

    it('shows members members-only posts too, and an author their own paid post, never drafts', async () => {
      expect(await postIds(w.member, { q: term, c: w.open.id })).toEqual(sorted('public', 'members', 'ownPaid'));
    });

    it('shows moderators every published post, never drafts', async () => {
      expect(await postIds(w.moderator, { q: term, c: w.open.id })).toEqual(sorted('public', 'members', 'paid', 'ownPaid'));
      expect(await postIds(w.owner, { q: term, c: w.open.id })).toEqual(sorted('public', 'members', 'paid', 'ownPaid'));
    });

    it("refuses a private tribe's search to outsiders (FORBIDDEN) and to signed-out callers (UNAUTHENTICATED)", async () => {
      expect(failure(await search(w.outsider, { q: term, c: w.closed.id }))).toEqual({ code: 'FORBIDDEN', reason: 'forbidden' });
      expect(failure(await search(null, { q: term, c: w.closed.id }))).toEqual({ code: 'UNAUTHENTICATED', reason: 'unauthorized' });
      expect(await postIds(w.member, { q: term, c: w.closed.id })).toEqual(sorted('closed'));
    });

    it('answers NOT_FOUND for an unknown tribe', async () => {
      expect(failure(await search(w.member, { q: term, c: '00000000-0000-4000-8000-000000000000' })).code).toBe('NOT_FOUND');
    });

    it("searches every tribe of the viewer without communityId, with each tribe's rules, and no other tribe", async () => {
      expect(await postIds(w.member, { q: term })).toEqual(sorted('public', 'members', 'ownPaid', 'closed'));
      expect(await postIds(w.moderator, { q: term })).toEqual(sorted('public', 'members', 'paid', 'ownPaid'));
      expect(await postIds(w.outsider, { q: term })).toEqual([]);
    });

    it('refuses the all-tribes search to signed-out callers', async () => {
      expect(failure(await search(null, { q: term }))).toEqual({ code: 'UNAUTHENTICATED', reason: 'unauthorized' });
    });

    it('drops a removed member at once', async () => {
      const leaver = await signupUser(t);
      const code = ok(await gql(t, w.privateOwner, 'mutation($c: ID!){ createInvite(communityId: $c) }', { c: w.closed.id })).createInvite;
      await join(t, leaver, w.closed.handle, code);
      expect(await postIds(leaver, { q: term })).toEqual(sorted('closed'));
      ok(await gql(t, w.privateOwner, 'mutation($c: ID!, $u: ID!){ removeMember(communityId: $c, userId: $u) }', { c: w.closed.id, u: leaver.id }));
      expect(await postIds(leaver, { q: term })).toEqual([]);
      expect(failure(await search(leaver, { q: term, c: w.closed.id })).code).toBe('FORBIDDEN');
    });
  });

  describe('comments', () => {
    it('finds comments of visible posts as hits with their post, never comments of hidden posts or tombstones', async () => {
      const w = await world();
      const term = word();
      const open = await post(w.owner, w.open.id, '<p>an ordinary public post</p>');
      const hidden = await post(w.owner, w.open.id, '<p>an ordinary members post</p>', { visibility: 'members' });
      const visibleComment = await comment(w.member, open, `<p>I agree: ${term}!</p>`);
      const hiddenComment = await comment(w.member, hidden, `<p>${term} among members</p>`);
      const gone = await comment(w.member, open, `<p>${term} soon deleted</p>`);
      await sqlRows(t, sql`update comments set deleted_at = now() where id = ${gone}`);

      const anonymous = await hits(null, { q: term, c: w.open.id });
      expect(anonymous).toEqual([
        { post: { id: open, community: { id: w.open.id } }, comment: { id: visibleComment, body: `<p>I agree: ${term}!</p>` }, snippet: `I agree: <mark>${term}</mark>!`, rank: expect.any(Number) },
      ]);
      const member = await hits(w.member, { q: term, c: w.open.id });
      expect(member.map((h) => h.comment?.id).sort()).toEqual([visibleComment, hiddenComment].sort());
      expect(member.find((h) => h.comment?.id === hiddenComment)!.post.id).toBe(hidden);
    });

    it('lists a post and its comment as two hits, the post first on equal rank', async () => {
      const w = await world();
      const term = word();
      const id = await post(w.owner, w.open.id, `<p>${term}</p>`);
      const c = await comment(w.member, id, `<p>${term}</p>`);
      const found = await hits(w.member, { q: term, c: w.open.id });
      expect(found.map((h) => [h.post.id, h.comment?.id ?? null])).toEqual([
        [id, null],
        [id, c],
      ]);
    });
  });

  describe('hostile queries', () => {
    let w: Awaited<ReturnType<typeof world>>;
    let term: string;
    let id: string;
    beforeAll(async () => {
      w = await world();
      term = word();
      id = await post(w.owner, w.open.id, `<p>${term} backslash \\ quote " apostrophe ' emoji 🎉 and more</p>`);
    });

    it.each([
      ['double quotes', (x: string) => `"${x}"`],
      ['an unbalanced quote', (x: string) => `"${x}`],
      ['a leading minus on another word', (x: string) => `${x} -nothingmatches`],
      ['OR', (x: string) => `${x} OR nothingmatches`],
      ['a prefix operator', (x: string) => `${x}:*`],
      ['tsquery operators', (x: string) => `&|!() ${x} !!(( &&`],
      ['backslashes', (x: string) => `\\\\${x}\\`],
      ['apostrophes and SQL', (x: string) => `${x} OR '; drop table posts; --`],
      ['emoji', (x: string) => `🎉 ${x} 👩‍👩‍👧`],
      ['10,000 characters', (x: string) => `${x} OR ${'a'.repeat(10_000)}`],
      ['10,000 emoji', (x: string) => `${x} ${'🎉'.repeat(10_000)}`],
      ['a word longer than a tsquery allows', (x: string) => `${x} OR ${'é'.repeat(3000)}`],
    ])('finds the post with %s', async (_name, make) => {
      expect(await postIds(w.member, { q: make(term), c: w.open.id })).toEqual([id]);
    });

    it.each([
      ['only stop words', 'the and of a'],
      ['only punctuation', '!!! ??? ... ()'],
      ['only operators', '& | ! <-> :* -'],
      ['only emoji', '🎉🎉🎉'],
      ['an empty string', ''],
      ['white space', ' \t\n '],
      ['a lone minus', '-'],
      ['a lone quote', '"'],
    ])('answers an empty list for %s', async (_name, q) => {
      const out = ok(await search(w.member, { q, c: w.open.id }));
      expect(out.search).toEqual({ edges: [], pageInfo: { hasNextPage: false, endCursor: null } });
    });

    it('searches only the first 500 characters of a query', async () => {
      expect(await postIds(w.member, { q: `${'x'.repeat(10)} OR ${term}`, c: w.open.id })).toEqual([id]);
      expect(await postIds(w.member, { q: `${'🎉'.repeat(500)} ${term}`, c: w.open.id })).toEqual([]);
    });

    it('refuses a NUL byte with BAD_USER_INPUT invalid_text (HTTP 400), not a 500', async () => {
      const res = await t.api
        .post('/graphql')
        .set('cookie', w.member.cookie)
        .set('content-type', 'application/json')
        .send({ query: SEARCH, variables: { q: `${term}\u0000`, c: w.open.id } });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'invalid_text', field: 'q' });
      const literal = await gql(t, w.member, `{ search(query: "a\\u0000b", communityId: "${w.open.id}") { edges { cursor } } }`);
      expect(literal.errors![0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'invalid_text' });
    });
  });

  describe('pagination', () => {
    let w: Awaited<ReturnType<typeof world>>;
    let term: string;
    let ids: string[];
    beforeAll(async () => {
      w = await world();
      term = word();
      // Equal text, so equal rank: the order rests on the tie-breakers (kind, then id).
      ids = [];
      for (let i = 0; i < 5; i += 1) ids.push(await post(w.owner, w.open.id, `<p>${term} same text</p>`));
      ids.push(await post(w.owner, w.open.id, `<p>${term} ${term} stronger</p>`));
    });

    it('walks every hit once across pages, most relevant first, then by id', async () => {
      const seen: Hit[] = [];
      let after: string | undefined;
      const pages: number[] = [];
      for (;;) {
        const out = ok(await search(w.member, { q: term, c: w.open.id, first: 2, after })).search;
        pages.push(out.edges.length);
        seen.push(...out.edges.map((e: { node: Hit }) => e.node));
        if (!out.pageInfo.hasNextPage) break;
        after = out.pageInfo.endCursor;
        // A matching post arriving between pages neither repeats nor shifts what was already seen.
        if (pages.length === 1) ids.push(await post(w.owner, w.open.id, `<p>${term} same text</p>`));
      }
      const seenIds = seen.map((h) => h.post.id);
      expect(new Set(seenIds).size).toBe(seenIds.length);
      expect(seenIds[0]).toBe(ids[5]);
      const tied = seen.slice(1);
      expect(tied.every((h) => h.rank === tied[0].rank)).toBe(true);
      expect(tied.map((h) => h.post.id)).toEqual([...tied.map((h) => h.post.id)].sort().reverse());
      expect(new Set(seenIds)).toEqual(new Set(ids.slice(0, 6).concat(seenIds.includes(ids[6]) ? [ids[6]] : [])));
      expect(pages[0]).toBe(2);
    });

    it('refuses a tampered cursor, or one of another query, tribe or viewer, with invalid_cursor', async () => {
      const first = ok(await search(w.member, { q: term, c: w.open.id, first: 1 })).search.pageInfo.endCursor as string;
      expect(ok(await search(w.member, { q: term, c: w.open.id, first: 1, after: first })).search.edges).toHaveLength(1);
      const refused = async (as: TestUser | null, vars: { q: string; c?: string; after: string }) =>
        expect(failure(await search(as, { first: 1, ...vars }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_cursor' });
      await refused(w.member, { q: term, c: w.open.id, after: 'garbage' });
      await refused(w.member, { q: term, c: w.open.id, after: tamperedCursor(first) });
      await refused(w.member, { q: `${term} other`, c: w.open.id, after: first });
      await refused(w.member, { q: term, after: first });
      await refused(w.moderator, { q: term, c: w.open.id, after: first });
      await refused(null, { q: term, c: w.open.id, after: first });
    });

    it('refuses first outside 1..50 with invalid_first', async () => {
      for (const first of [0, 51, -1]) {
        expect(failure(await search(w.member, { q: term, c: w.open.id, first }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_first' });
      }
    });
  });
});

describe('search that runs out of time', () => {
  let t: TestService;
  beforeAll(async () => {
    // A 1 ms budget that ranking 3,000 matches always outruns, and a second try over 100 matches of each kind.
    t = await startService({ SEARCH_TIMEOUT_MS: '1', SEARCH_FALLBACK_CANDIDATES: '100' });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('answers from a bounded share of the matches instead of failing or running on, and pages through it once', async () => {
    const owner = await signupUser(t);
    const tribe = await createTribe(t, owner);
    const term = word();
    await sqlRows(t, sql`insert into posts (community_id, author_id, body, status, visibility, published_at)
      select ${tribe.id}::uuid, ${owner.id}::uuid, '<p>' || ${term} || ' number ' || n || '</p>', 'published', 'public', now()
      from generate_series(1, 3000) n`);
    const seen: string[] = [];
    let after: string | undefined;
    for (let page = 0; page < 10; page += 1) {
      const out = ok(await gql(t, owner, SEARCH, { q: term, c: tribe.id, first: 50, after })).search;
      seen.push(...out.edges.map((e: { node: Hit }) => e.node.post.id));
      expect(out.edges.every((e: { node: Hit }) => e.node.snippet.includes(`<mark>${term}</mark>`))).toBe(true);
      if (!out.pageInfo.hasNextPage) break;
      after = out.pageInfo.endCursor;
    }
    expect(seen).toHaveLength(100);
    expect(new Set(seen).size).toBe(100);
  });
});
