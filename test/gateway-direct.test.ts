// Issue 15's execution path: what the fast paths must not change.
// - The gateway's direct path (gateway/src/direct.ts): a query of one in-process subgraph answers exactly what the
//   gateway answers, errors included (run again through the gateway); plans of several subgraphs and mutations never
//   take it.
// - Remembered access tokens (subgraphs/identity/verified-tokens.ts): a suspension and an expiry still take effect
//   at once.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { COMPILE_AFTER } from '../gateway/src/local-source.js';
import { accessToken, createPost, createTribe, signupUser, type TestUser } from './factory.js';
import { startService, type TestService } from './support.js';

const LIST = 'query List($c: ID!){ posts(communityId: $c, perPage: 5){ items { id body community { id } createdAt } page perPage hasMore } }';
const WITH_AUTHOR = 'query WithAuthor($c: ID!){ posts(communityId: $c, perPage: 5){ items { id author { username } } } }';
const ONE = 'query One($id: ID!){ post(id: $id){ id body } }';
// Several subgraphs: aliases, __typename, a named fragment on the parent's own type, two entity steps in parallel.
const ACROSS = `query Across($c: ID!, $n: Int) {
  page: posts(communityId: $c, perPage: $n) { items { ...PostParts writer: author { __typename id displayName } community { id name } } hasMore }
}
fragment PostParts on Post { __typename id body reactions { total } commentCount }`;
const WITH_DIRECTIVE = 'query D($c: ID!, $yes: Boolean!){ posts(communityId: $c){ items { id author @include(if: $yes) { username } } } }';

/**
 * An answer's text with the GraphQL budget it reports left out of the comparison: `extensions.cost` says how much of
 * the caller's bucket is left, which every request lowers (README › GraphQL limits, rate limit by cost).
 */
const steadyText = (text: string) => text.replace(/"currentlyAvailable":\d+/g, '"currentlyAvailable":0');
const steady = <T>(body: T): T => JSON.parse(steadyText(JSON.stringify(body))) as T;

describe('execution fast paths', () => {
  let t: TestService;
  let now = new Date();
  let owner: TestUser;
  let member: TestUser;
  let outsider: TestUser;
  let tribe: { id: string; handle: string };

  const post = async (user: TestUser | null, query: string, variables: Record<string, unknown>) => {
    const req = t.api.post('/graphql').set('content-type', 'application/json');
    if (user) req.set('cookie', user.cookie);
    const res = await req.send({ query, variables });
    return { status: res.status, body: steady(res.body) };
  };
  /** The same request twice: the first plans through the gateway, the second may take the direct path. */
  const twice = async (user: TestUser | null, query: string, variables: Record<string, unknown>) => {
    const first = await post(user, query, variables);
    const before = { ...t.graph.direct };
    const second = await post(user, query, variables);
    return {
      first,
      second,
      direct: t.graph.direct.direct - before.direct,
      local: t.graph.direct.local - before.local,
      fallback: t.graph.direct.fallback - before.fallback,
    };
  };

  beforeAll(async () => {
    t = await startService({}, () => now);
    [owner, member, outsider] = await Promise.all([signupUser(t), signupUser(t), signupUser(t)]);
    tribe = await createTribe(t, owner, { isPublic: false });
    await t.deps.database.db.execute(sql`insert into members (community_id, user_id, role) values (${tribe.id}, ${member.id}, 'member')`);
    for (let i = 0; i < 3; i += 1) await createPost(t, owner, tribe.id, { content: `post ${i}` });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('a query of one subgraph takes the direct path and answers exactly what the gateway answered', async () => {
    const { first, second, direct, fallback, local } = await twice(member, LIST, { c: tribe.id });
    expect(first.status).toBe(200);
    expect(first.body.errors).toBeUndefined();
    expect(first.body.data.posts.items).toHaveLength(3);
    expect(direct).toBe(1);
    expect(local).toBe(0);
    expect(fallback).toBe(0);
    expect(JSON.stringify(second.body)).toBe(JSON.stringify(first.body));
    expect(second.status).toBe(first.status);
    // From its COMPILE_AFTER-th run on, the document runs compiled (graphql-jit): still the gateway's answer.
    for (let i = 0; i < COMPILE_AFTER + 1; i += 1) expect(JSON.stringify((await post(member, LIST, { c: tribe.id })).body)).toBe(JSON.stringify(first.body));
  });

  it('an error on the direct path is answered by the gateway, word for word (a private tribe, an outsider)', async () => {
    const { first, second, direct, fallback } = await twice(outsider, LIST, { c: tribe.id });
    expect(first.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(direct).toBe(0);
    expect(fallback).toBe(1);
    expect(second).toEqual(first);
  });

  it('bad variables and a null root answer as through the gateway', async () => {
    const bad = await twice(member, LIST, { c: 5 });
    expect(bad.second).toEqual(bad.first);
    const missing = await twice(member, ONE, { id: '00000000-0000-4000-8000-000000000000' });
    expect(missing.second).toEqual(missing.first);
    expect(missing.direct + missing.fallback).toBeLessThanOrEqual(1);
  });

  it('a query across subgraphs runs as a local plan and answers byte for byte what the gateway answered', async () => {
    const across = await twice(member, WITH_AUTHOR, { c: tribe.id });
    expect(across.second.body.errors).toBeUndefined();
    expect(across.second.body.data.posts.items[0].author.username).toBeTruthy();
    expect([across.direct, across.local, across.fallback]).toEqual([0, 1, 0]);
    expect(JSON.stringify(across.second.body)).toBe(JSON.stringify(across.first.body));
    for (let i = 0; i < COMPILE_AFTER + 1; i += 1) expect(JSON.stringify((await post(member, WITH_AUTHOR, { c: tribe.id })).body)).toBe(JSON.stringify(across.first.body));

    const shaped = await twice(member, ACROSS, { c: tribe.id, n: 2 });
    expect(shaped.first.body.errors).toBeUndefined();
    expect(shaped.first.body.data.page.items).toHaveLength(2);
    expect(shaped.first.body.data.page.items[0]).toEqual({
      __typename: 'Post',
      id: expect.any(String),
      body: expect.any(String),
      reactions: { total: 0 },
      commentCount: 0,
      writer: { __typename: 'User', id: owner.id, displayName: expect.any(String) },
      community: { id: tribe.id, name: expect.any(String) },
    });
    expect([shaped.direct, shaped.local, shaped.fallback]).toEqual([0, 1, 0]);
    expect(JSON.stringify(shaped.second.body)).toBe(JSON.stringify(shaped.first.body));
    // Other variables, same document: still the local plan, and what the gateway answers for them (a new document's
    // first request is the gateway's).
    const viaGateway = await post(member, ACROSS.replace('query Across', 'query AcrossAgain'), { c: tribe.id, n: 1 });
    const again = await twice(member, ACROSS, { c: tribe.id, n: 1 });
    expect(again.local).toBe(1);
    expect(again.second.body.data.page.items).toHaveLength(1);
    expect(JSON.stringify(again.second.body)).toBe(JSON.stringify(viaGateway.body));
  });

  it('an error in a local plan is answered by the gateway, word for word; directives and mutations never take a fast path', async () => {
    const refused = await twice(outsider, ACROSS, { c: tribe.id, n: 2 });
    expect(refused.first.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect([refused.direct, refused.local, refused.fallback]).toEqual([0, 0, 1]);
    expect(refused.second).toEqual(refused.first);

    for (const yes of [true, false]) {
      const directive = await twice(member, WITH_DIRECTIVE, { c: tribe.id, yes });
      expect(directive.second.body.errors).toBeUndefined();
      expect('author' in directive.second.body.data.posts.items[0]).toBe(yes);
      expect(directive.direct + directive.local + directive.fallback).toBe(0);
    }

    // A response name that Object.prototype has (the local plan shapes into plain objects): the gateway shapes it.
    const prototypeNames = 'query P($c: ID!){ posts(communityId: $c, perPage: 2){ items { constructor: id toString: body author { hasOwnProperty: username } } } }';
    const named = await twice(member, prototypeNames, { c: tribe.id });
    expect(named.second.body.errors).toBeUndefined();
    const [item] = named.second.body.data.posts.items;
    expect(Object.keys(item)).toEqual(['constructor', 'toString', 'author']);
    expect([typeof item.constructor, typeof item.toString, typeof item.author.hasOwnProperty]).toEqual(['string', 'string', 'string']);
    expect(named.second).toEqual(named.first);
    expect(named.direct + named.local + named.fallback).toBe(0);

    const create = 'mutation Create($c: ID!){ createPost(communityId: $c, input: {content: "direct?"}){ id author { username } } }';
    const mutation = await twice(owner, create, { c: tribe.id });
    expect(mutation.second.body.errors).toBeUndefined();
    expect(mutation.direct + mutation.local + mutation.fallback).toBe(0);
  });

  it("a REST document runs on its learnt route without Apollo Server's pipeline and answers as before, errors included", async () => {
    const get = async (token: string) => {
      const res = await t.api.get(`/v1/communities/${tribe.id}/posts?per_page=2`).set('authorization', `Bearer ${token}`);
      // An error names its own request (error.request_id): the rest of the answer is what is compared.
      return { status: res.status, body: JSON.stringify(res.body).replace(/"request_id":"[^"]*"/, '"request_id":"-"') };
    };
    const memberToken = await accessToken(t, member);
    const outsiderToken = await accessToken(t, outsider);
    // The first run plans through Apollo Server and the gateway, the second learns the route, the rest take it.
    const before = { ...t.graph.direct };
    const runs = [];
    for (let i = 0; i < COMPILE_AFTER + 3; i += 1) runs.push(await get(memberToken));
    expect(runs[0].status).toBe(200);
    expect(JSON.parse(runs[0].body).data).toHaveLength(2);
    for (const run of runs) expect(run).toEqual(runs[0]);
    expect(t.graph.direct.fixed - before.fixed).toBeGreaterThanOrEqual(COMPILE_AFTER + 1);
    expect(t.graph.direct.fallback - before.fallback).toBe(0);

    // An outsider of the private tribe: the fast run meets the error, and the gateway answers it once per request.
    const refused = await get(outsiderToken);
    expect(refused.status).toBe(403);
    const after = { ...t.graph.direct };
    for (let i = 0; i < 3; i += 1) expect(await get(outsiderToken)).toEqual(refused);
    expect(t.graph.direct.fallback - after.fallback).toBe(3);
    expect(t.graph.direct.fixed - after.fixed).toBe(0);

    // A removed member loses the posts at once on the learnt route too.
    await t.deps.database.db.execute(sql`delete from members where community_id = ${tribe.id} and user_id = ${member.id}`);
    expect(await get(memberToken)).toEqual(refused);
    await t.deps.database.db.execute(sql`insert into members (community_id, user_id, role) values (${tribe.id}, ${member.id}, 'member')`);
    expect(await get(memberToken)).toEqual(runs[0]);
  });

  it("a /graphql query text sent again runs without Apollo Server's pipeline: the same status, headers and body", async () => {
    const send = async (user: TestUser, body: Record<string, unknown>, accept?: string) => {
      const req = t.api.post('/graphql').set('content-type', 'application/json').set('cookie', user.cookie);
      if (accept) req.set('accept', accept);
      const res = await req.send(body);
      // The length and the ETag follow the reported budget (see steadyText).
      const { date: _date, 'x-request-id': _id, 'content-length': _length, etag: _etag, ...headers } = res.headers;
      return { status: res.status, headers, text: steadyText(res.text) };
    };
    const body = { query: ACROSS, variables: { c: tribe.id, n: 2 } };
    const first = await send(member, body);
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(first.text).data.page.items).toHaveLength(2);
    const before = { ...t.graph.direct };
    for (let i = 0; i < COMPILE_AFTER + 2; i += 1) expect(await send(member, body)).toEqual(first);
    expect(await send(member, { ...body, operationName: 'Across' })).toEqual(first);
    expect(t.graph.direct.fixed - before.fixed).toBeGreaterThanOrEqual(COMPILE_AFTER + 1);

    // Not taken: another Accept (Apollo Server negotiates the type), another operation name (Apollo Server's error).
    const noted = { ...t.graph.direct };
    const negotiated = await send(member, body, 'application/graphql-response+json');
    expect(negotiated.headers['content-type']).toBe('application/graphql-response+json; charset=utf-8');
    expect(negotiated.text).toBe(first.text);
    const misnamed = await send(member, { ...body, operationName: 'Other' });
    expect(JSON.parse(misnamed.text).errors[0].message).toBe('Unknown operation named "Other".');
    expect(t.graph.direct.fixed - noted.fixed).toBe(0);

    // Bad variables on a learnt text answer what Apollo Server answers for them (an Accept it negotiates itself).
    for (const variables of [{ c: 'a\u0000b', n: 2 }, { c: tribe.id, n: 'two' }, { n: 2 }, { c: 'not-a-tribe', n: 2 }]) {
      const viaApollo = await send(member, { ...body, variables }, 'application/json;q=0.9, */*;q=0.1');
      expect(viaApollo.status).toBeGreaterThanOrEqual(200);
      expect(JSON.parse(viaApollo.text).errors?.length).toBeGreaterThan(0);
      expect(await send(member, { ...body, variables })).toEqual(viaApollo);
    }

    // An outsider of the private tribe: refused word for word, the gateway running it once per request.
    const refused = await send(outsider, body);
    expect(JSON.parse(refused.text).errors[0].extensions.code).toBe('FORBIDDEN');
    const after = { ...t.graph.direct };
    for (let i = 0; i < 3; i += 1) expect(await send(outsider, body)).toEqual(refused);
    expect(t.graph.direct.fallback - after.fallback).toBe(3);
    expect(t.graph.direct.fixed - after.fixed).toBe(0);
  });

  it('an operationName naming no operation, or none for a document of several, is 400 BAD_USER_INPUT, the same every time (POST and GET)', async () => {
    const send = async (body: Record<string, unknown>) => {
      const res = await t.api.post('/graphql').set('content-type', 'application/json').set('cookie', member.cookie).send(body);
      return { status: res.status, body: res.body };
    };
    const get = async (params: Record<string, string>) => {
      const res = await t.api.get('/graphql').query(params).set('accept', 'application/json').set('apollo-require-preflight', '1').set('cookie', member.cookie);
      return { status: res.status, body: res.body };
    };
    const refusal = (message: string, reason: string) => ({ status: 400, body: { errors: [{ message, extensions: { code: 'BAD_USER_INPUT', reason, status: 400 } }] } });
    const unknown = (name: string) => refusal(`Unknown operation named "${name}".`, 'unknown_operation');
    const nameRequired = refusal('Must provide operation name if query contains multiple operations.', 'operation_name_required');
    const TWO = 'query A { __typename } query C { __typename }';
    // A text the fast path has learnt, then sent under another name.
    const across = { query: ACROSS, variables: { c: tribe.id, n: 2 } };
    for (let i = 0; i < 2; i += 1) expect((await send(across)).status).toBe(200);

    const cases: Array<[Record<string, unknown>, ReturnType<typeof refusal>]> = [
      [{ query: 'query A { __typename }', operationName: 'B' }, unknown('B')],
      [{ ...across, operationName: 'Other' }, unknown('Other')],
      [{ query: TWO }, nameRequired],
      [{ query: TWO, operationName: 'Z' }, unknown('Z')],
      [{ query: '{ __typename }', operationName: '' }, unknown('')],
    ];
    for (const [body, expected] of cases) {
      expect(await send(body)).toEqual(expected);
      expect(await send(body)).toEqual(expected);
    }
    for (const [params, expected] of [
      [{ query: 'query A { __typename }', operationName: 'B' }, unknown('B')],
      [{ query: TWO }, nameRequired],
    ] as const) {
      expect(await get(params)).toEqual(expected);
      expect(await get(params)).toEqual(expected);
    }
    // A name that resolves still runs.
    expect(await send({ query: TWO, operationName: 'C' })).toEqual({ status: 200, body: { data: { __typename: 'Query' }, extensions: { cost: expect.any(Object) } } });
    expect(await get({ query: TWO, operationName: 'C' })).toEqual({ status: 200, body: { data: { __typename: 'Query' }, extensions: { cost: expect.any(Object) } } });
  });

  it('an access token verified before is refused at once when its user is suspended, and when it expires', async () => {
    const token = await accessToken(t, member);
    const me = () => t.api.get('/v1/auth/me').set('authorization', `Bearer ${token}`);
    expect((await me()).status).toBe(200);
    expect((await me()).status).toBe(200); // remembered now
    await t.deps.database.db.execute(sql`update users set suspended_at = ${now.toISOString()} where id = ${member.id}`);
    expect((await me()).status).toBe(401);
    await t.deps.database.db.execute(sql`update users set suspended_at = null where id = ${member.id}`);
    expect((await me()).status).toBe(200);
    const issued = now;
    now = new Date(issued.getTime() + 3_600_000 - 1_000); // one second before the hour is up
    expect((await me()).status).toBe(200);
    now = new Date(issued.getTime() + 3_600_000 + 1_000);
    expect((await me()).status).toBe(401);
    now = new Date(issued.getTime());
  });
});
