import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Supergraph } from '@apollo/federation-internals';
import { Lexer, parse, Source, TokenKind, validate } from 'graphql';
import { composeSupergraph } from '../gateway/src/compose.js';
import { measureDocument, QUERY_LIMITS } from '../gateway/src/limits.js';
import { loadManifest, operationHash } from '../gateway/src/persisted.js';
import { REST_DOCUMENTS } from '../rest-facade/src/documents.js';
import { Docs } from '../rest-facade/src/resource/documents.js';
import { accessToken, createKey, createPost, createTribe, signupUser, unique } from './factory.js';
import { gql, platformGet, startService, type TestService } from './support.js';

const schema = Supergraph.build(composeSupergraph()).apiSchema().toGraphQLJSSchema();

const tokenCount = (text: string): number => {
  const lexer = new Lexer(new Source(text));
  let n = 0;
  while (lexer.advance().kind !== TokenKind.EOF) n++;
  return n;
};

/** POST /graphql with a body as given; the status, the body and how long the answer took. */
async function post(t: TestService, body: Record<string, unknown>) {
  const started = performance.now();
  const res = await t.api.post('/graphql').set('content-type', 'application/json').send(body);
  return { status: res.status, body: res.body as { data?: any; errors?: Array<{ message: string; extensions?: any }> }, ms: performance.now() - started };
}

const aliases = (n: number, field: string) => Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(' ');
/** `event { viewerRegistration { event { ... } } }` with `depth` field levels in all. */
const deepEvent = (depth: number): string => {
  let inner = 'id';
  for (let level = depth - 1; level >= 1; level--) inner = level === 1 ? `event(id: $id) { ${inner} }` : `${level % 2 ? 'event' : 'viewerRegistration'} { ${inner} }`;
  return `query Deep($id: ID!) { ${inner} }`;
};
const COMMUNITY_FIELDS = 'id name handle description isPublic category createdAt updatedAt memberCount viewerRole';
/** `n` root fields of 100 communities of 10 fields each: cost 1002 apiece. */
const costly = (n: number) => `{ ${aliases(n, `communities(perPage: 100) { items { ${COMMUNITY_FIELDS} } }`)} }`;

/** A realistic web-app feed: the tribe's header, a page of posts with authors, comment previews with authors. */
const FEED = `query CommunityFeed($id: ID!, $p1: ID!, $p2: ID!, $p3: ID!) {
  community(id: $id) { id name handle description isPublic memberCount viewerRole }
  posts(communityId: $id, perPage: 20) {
    items { id body mediaUrls visibility isPinned publishedAt createdAt author { id username displayName avatarUrl } community { id } }
    page perPage hasMore
  }
  first: comments(postId: $p1, communityId: $id, perPage: 3) { ...CommentPreview }
  second: comments(postId: $p2, communityId: $id, perPage: 3) { ...CommentPreview }
  third: comments(postId: $p3, communityId: $id, perPage: 3) { ...CommentPreview }
}
fragment CommentPreview on CommentPage { items { id parentId body createdAt author { id username displayName avatarUrl } } hasMore }`;

const expectTooComplex = (r: Awaited<ReturnType<typeof post>>, ...messages: string[]) => {
  expect(r.status).toBe(400);
  expect(r.body.data).toBeUndefined();
  expect(r.body.errors!.map((e) => e.message)).toEqual(messages);
  for (const e of r.body.errors!) expect(e.extensions).toEqual({ code: 'QUERY_TOO_COMPLEX', status: 400 });
};

describe('GraphQL limits', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startService();
    await post(t, { query: '{ __typename }' }); // the first request of a process pays for warming up; timings below do not
  });
  afterAll(async () => {
    await t.stop();
  });

  describe('refusals before execution', () => {
    it('refuses 2,000 aliases of communities while parsing, without running them', async () => {
      const query = `{ ${aliases(2000, 'communities { items { id } }')} }`;
      const r = await post(t, { query });
      console.log(`2,000 aliases of communities: ${tokenCount(query)} tokens, refused in ${r.ms.toFixed(1)} ms`);
      expectTooComplex(r, `Query has more than ${QUERY_LIMITS.tokens} tokens, the limit.`);
      expect(r.ms).toBeLessThan(2000); // executing them took 2.4 s of CPU on an idle machine
    });

    it('refuses 31 aliased root fields under the token limit, naming both limits and the numbers', async () => {
      const r = await post(t, { query: `{ ${aliases(31, 'communities { items { id } }')} }` });
      expectTooComplex(r, 'Query has 31 aliases; the limit is 30.', 'Query has 31 root fields; the limit is 15.');
    });

    it('accepts 30 aliases and refuses 31', async () => {
      const ok = await post(t, { query: `{ communities(perPage: 1) { items { ${aliases(30, 'id')} } } }` });
      expect(ok.status).toBe(200);
      expect(ok.body.errors).toBeUndefined();
      expect(Array.isArray(ok.body.data.communities.items)).toBe(true);
      const refused = await post(t, { query: `{ communities(perPage: 1) { items { ${aliases(31, 'id')} } } }` });
      expectTooComplex(refused, 'Query has 31 aliases; the limit is 30.');
    });

    it('accepts depth 10 and refuses depth 11', async () => {
      const id = '00000000-0000-4000-8000-000000000000';
      const ok = await post(t, { query: deepEvent(10), variables: { id } });
      // It ran: the event resolver answered (there is no such event).
      expect(ok.body.data).toEqual({ event: null });
      expect(ok.body.errors!.map((e) => e.extensions.reason)).toEqual(['not_found']);
      const refused = await post(t, { query: deepEvent(11), variables: { id } });
      expectTooComplex(refused, 'Query depth 11 exceeds the limit of 10.');
    });

    it('counts depth through fragments', async () => {
      const query = `query($id: ID!) { event(id: $id) { ...E } }
        fragment E on Event { viewerRegistration { event { viewerRegistration { event { viewerRegistration { ...R } } } } } }
        fragment R on EventRegistration { event { viewerRegistration { event { viewerRegistration { id } } } } }`;
      expectTooComplex(await post(t, { query, variables: { id: '00000000-0000-4000-8000-000000000000' } }), 'Query depth 11 exceeds the limit of 10.');
    });

    it('accepts 15 root fields and refuses 16', async () => {
      const ok = await post(t, { query: `{ ${aliases(15, 'me { id }')} }` });
      expect(ok.status).toBe(200);
      expect(Object.keys(ok.body.data)).toHaveLength(15);
      expectTooComplex(await post(t, { query: `{ ${aliases(16, 'me { id }')} }` }), 'Query has 16 root fields; the limit is 15.');
    });

    it('accepts an estimated cost under the limit and refuses one above it', async () => {
      expect(measureDocument(schema, parse(costly(9)))[0]!.cost).toBe(9018);
      const ok = await post(t, { query: costly(9) });
      expect(ok.status).toBe(200);
      expect(ok.body.errors).toBeUndefined();
      expectTooComplex(await post(t, { query: costly(10) }), `Query cost 10020 exceeds the limit of ${QUERY_LIMITS.cost}.`);
    });

    it('counts a fragment once per place it is spread, in linear time', async () => {
      // Each level spreads the one below twice: 2^20 leaves if expanded naively.
      const levels = Array.from({ length: 20 }, (_, i) => `fragment F${i} on Community { ...F${i + 1} ...F${i + 1} }`).join('\n');
      const query = `{ community(id: "00000000-0000-4000-8000-000000000000") { ...F0 } }\n${levels}\nfragment F20 on Community { a: id }`;
      const r = await post(t, { query });
      expectTooComplex(r, `Query has ${2 ** 20} aliases; the limit is 30.`, `Query cost ${2 ** 20 + 1} exceeds the limit of ${QUERY_LIMITS.cost}.`);
      expect(r.ms).toBeLessThan(2000);
    });
  });

  describe('the web app and the REST facade stay under the limits', () => {
    it('measures every fixed document of the REST facade well under each limit', () => {
      const rows = Object.entries(REST_DOCUMENTS).map(([name, text]) => {
        expect(validate(schema, parse(text))).toEqual([]);
        const [m] = measureDocument(schema, parse(text));
        return { ...m!, name, tokens: tokenCount(text) };
      });
      expect(rows.length).toBeGreaterThanOrEqual(50);
      const worst = {
        depth: Math.max(...rows.map((r) => r.depth)),
        aliases: Math.max(...rows.map((r) => r.aliases)),
        rootFields: Math.max(...rows.map((r) => r.rootFields)),
        cost: Math.max(...rows.map((r) => r.cost)),
        tokens: Math.max(...rows.map((r) => r.tokens)),
      };
      console.log(
        `REST facade documents (${rows.length}), worst against the limit: ` +
          Object.entries(worst).map(([k, v]) => `${k} ${v}/${QUERY_LIMITS[k as keyof typeof worst]}`).join(', ') +
          `\nmost costly: ${[...rows].sort((a, b) => b.cost - a.cost).slice(0, 3).map((r) => `${r.name} ${r.cost}`).join(', ')}`,
      );
      for (const r of rows) {
        expect({ name: r.name, under: r.depth <= QUERY_LIMITS.depth / 2 && r.aliases <= QUERY_LIMITS.aliases && r.rootFields <= QUERY_LIMITS.rootFields / 5 }).toEqual({ name: r.name, under: true });
        expect({ name: r.name, cost: r.cost <= QUERY_LIMITS.cost / 3, tokens: r.tokens <= QUERY_LIMITS.tokens / 10 }).toEqual({ name: r.name, cost: true, tokens: true });
      }
    });

    it('runs a realistic feed query (posts with authors, comment previews with authors, counts)', async () => {
      const [m] = measureDocument(schema, parse(FEED));
      console.log(`feed query: depth ${m!.depth}, aliases ${m!.aliases}, root fields ${m!.rootFields}, cost ${m!.cost}, tokens ${tokenCount(FEED)}`);
      expect(m!.cost).toBeLessThan(QUERY_LIMITS.cost / 5);

      const owner = await signupUser(t);
      const tribe = await createTribe(t, owner);
      const posts = [await createPost(t, owner, tribe.id), await createPost(t, owner, tribe.id), await createPost(t, owner, tribe.id)];
      const out = await gql(t, owner, FEED, { id: tribe.id, p1: posts[0]!.id, p2: posts[1]!.id, p3: posts[2]!.id });
      expect(out.errors).toBeUndefined();
      expect(out.data.community).toMatchObject({ id: tribe.id, memberCount: 1, viewerRole: 'owner' });
      expect(out.data.posts.items).toHaveLength(3);
      expect(out.data.posts.items[0].author.id).toBe(owner.id);
      expect(out.data.first).toEqual({ items: [], hasMore: false });
    });
  });
});

describe('GraphQL schema details per environment', () => {
  const INTROSPECTION = '{ __schema { queryType { name } } }';
  const TYPO = '{ communitie { items { id } } }';

  it('development: introspection on, suggestions shown', async () => {
    const t = await startService({ NODE_ENV: 'development' });
    try {
      expect((await post(t, { query: INTROSPECTION })).body).toEqual({ data: { __schema: { queryType: { name: 'Query' } } }, extensions: { cost: expect.any(Object) } });
      const typo = await post(t, { query: TYPO });
      expect(typo.body.errors![0]!.message).toMatch(/^Cannot query field "communitie" on type "Query"\. Did you mean "communities"/);
    } finally {
      await t.stop();
    }
  });

  it('production: introspection refused, suggestions hidden', async () => {
    const t = await startService({ NODE_ENV: 'production' });
    try {
      const intro = await post(t, { query: INTROSPECTION });
      expect(intro.status).toBe(400);
      expect(intro.body.data).toBeUndefined();
      expect(intro.body.errors![0]!.extensions!.code).toBe('GRAPHQL_VALIDATION_FAILED');
      expect(intro.body.errors![0]!.message).toMatch(/introspection is not allowed/);
      const typo = await post(t, { query: TYPO });
      expect(typo.body.errors!.map((e) => e.message)).toEqual(['Cannot query field "communitie" on type "Query".']);
      // Variables are checked after validation: their messages lose suggestions too.
      const owner = await signupUser(t);
      const handle = `h-${unique()}`;
      const misnamed = await gql(t, owner, 'mutation($i: CreateCommunityInput!){ createCommunity(input: $i){ id } }', { i: { name: 'x', handle, descripton: 'x' } });
      expect(misnamed.errors!.map((e) => e.message)).toEqual([
        `Variable "$i" got invalid value { name: "x", handle: "${handle}", descripton: "x" }; Field "descripton" is not defined by type "CreateCommunityInput".`,
      ]);
      // __typename is not introspection of the schema: clients (Apollo Client) add it everywhere.
      expect((await post(t, { query: '{ __typename }' })).body).toEqual({ data: { __typename: 'Query' }, extensions: { cost: expect.any(Object) } });
    } finally {
      await t.stop();
    }
  });

  it('production with GRAPHQL_INTROSPECTION=true: introspection and suggestions on', async () => {
    const t = await startService({ NODE_ENV: 'production', GRAPHQL_INTROSPECTION: 'true' });
    try {
      expect((await post(t, { query: INTROSPECTION })).body).toEqual({ data: { __schema: { queryType: { name: 'Query' } } }, extensions: { cost: expect.any(Object) } });
      expect((await post(t, { query: TYPO })).body.errors![0]!.message).toMatch(/Did you mean "communities"/);
    } finally {
      await t.stop();
    }
  });
});

describe('GRAPHQL_PERSISTED_ONLY=true', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startService({ GRAPHQL_PERSISTED_ONLY: 'true' });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('keeps the resource API and the Platform API working (their documents are in the manifest)', async () => {
    const owner = await signupUser(t);
    const token = await accessToken(t, owner);
    const handle = `p-${unique()}`;
    const created = await t.api.post('/v1/communities').set('authorization', `Bearer ${token}`).send({ name: 'Persisted', handle });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ handle, name: 'Persisted' });
    const key = await createKey(t, owner, handle);
    const me = await platformGet(t, '/v1/me', key.key);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ community: { handle } });
  });

  it('refuses an ad-hoc query before parsing it', async () => {
    const r = await post(t, { query: '{ communities { items { id } } }' });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      errors: [{ message: 'Only persisted operations run on this server, and this operation is not one of them.', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND', status: 400 } }],
    });
    // Not even parsed: a syntax error gets the same answer.
    expect((await post(t, { query: '{ communities {' })).body.errors![0]!.extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
  });

  it('runs a manifest operation sent as its full text', async () => {
    expect(loadManifest().has(operationHash(Docs.listCommunities))).toBe(true);
    const r = await post(t, { query: Docs.listCommunities, variables: { perPage: 1 } });
    expect(r.status).toBe(200);
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.communities).toMatchObject({ page: 1, perPage: 1 });
  });

  it('answers a manifest operation sent under a name it does not have with 400 BAD_USER_INPUT unknown_operation, the same every time', async () => {
    const expected = {
      status: 400,
      body: { errors: [{ message: 'Unknown operation named "Elsewhere".', extensions: { code: 'BAD_USER_INPUT', reason: 'unknown_operation', status: 400 } }] },
    };
    const byText = { query: Docs.listCommunities, variables: { perPage: 1 }, operationName: 'Elsewhere' };
    const byHash = { extensions: { persistedQuery: { version: 1, sha256Hash: operationHash(Docs.listCommunities) } }, variables: { perPage: 1 }, operationName: 'Elsewhere' };
    for (const body of [byText, byText, byHash, byHash]) {
      const { status, body: answer } = await post(t, body);
      expect({ status, body: answer }).toEqual(expected);
    }
  });

  it('runs a manifest operation sent as its sha256Hash alone, and refuses an unknown hash', async () => {
    const extensions = (sha256Hash: string) => ({ persistedQuery: { version: 1, sha256Hash } });
    const r = await post(t, { extensions: extensions(operationHash(Docs.listCommunities)), variables: { perPage: 1 } });
    expect(r.status).toBe(200);
    expect(r.body.data.communities).toMatchObject({ page: 1, perPage: 1 });
    const unknown = await post(t, { extensions: extensions(operationHash('{ me { id } }')) });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors![0]!.extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
  });
});
