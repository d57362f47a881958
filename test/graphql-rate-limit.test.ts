import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { pino } from 'pino';
import { createService } from '../server/service.js';
import { loadConfig } from '../subgraphs/kernel/index.js';
import { accessToken, createKey, createTribe, signupUser, unique, type TestUser } from './factory.js';
import { ManualClock, sqlRows, startService, testConfig, waitFor, type TestService } from './support.js';
import { startRedis } from './redis.js';
import { subscribe, wsConnect } from './ws.js';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: { data?: any; errors?: Array<{ message: string; extensions?: Record<string, any> }>; extensions?: Record<string, any> };
}

/**
 * A GraphQL request to a listening service from the loopback address `from` (127.0.0.x: each one is another client
 * address to the server), anonymous or with a user's session cookie. GET sends the query in the URL.
 */
function send(port: number, from: string, query: string, options: { as?: TestUser; variables?: Record<string, unknown>; method?: 'GET' | 'POST' } = {}): Promise<Answer> {
  const method = options.method ?? 'POST';
  const body = JSON.stringify({ query, variables: options.variables ?? {} });
  const path = method === 'GET' ? `/graphql?${new URLSearchParams({ query }).toString()}` : '/graphql';
  const headers: Record<string, string> = method === 'GET' ? { 'apollo-require-preflight': 'true' } : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
  if (options.as) headers.cookie = options.as.cookie;
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method, localAddress: from, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', reject);
    if (method === 'POST') req.write(body);
    req.end();
  });
}

/** `communities(perPage: n) { items { id } } }`: estimated cost n + 2 (the page 1, its items 1 + n × 1). */
const page = (n: number) => `{ communities(perPage: ${n}) { items { id } } }`;
const CHEAP = page(8); // cost 10
const available = (a: Answer): number => a.body.extensions!.cost.throttleStatus.currentlyAvailable;

/** Spends the caller's bucket down to 0 (the clock standing still): pages costing what is left, 102 at most. */
async function drain(port: number, from: string, as?: TestUser): Promise<void> {
  let left = available(await send(port, from, '{ __typename }', { as }));
  while (left > 0) {
    const answer = await send(port, from, left >= 3 ? page(Math.min(100, left - 2)) : '{ __typename }', { as });
    expect(answer.status).toBe(200);
    left = available(answer);
  }
}

const ANONYMOUS = { maximumAvailable: 100, restoreRate: 10 };
const USER = { maximumAvailable: 5000, restoreRate: 100 };
const BUDGETS = {
  GRAPHQL_COST_MAX_ANONYMOUS: String(ANONYMOUS.maximumAvailable),
  GRAPHQL_COST_RESTORE_ANONYMOUS: String(ANONYMOUS.restoreRate),
  GRAPHQL_COST_MAX_USER: String(USER.maximumAvailable),
  GRAPHQL_COST_RESTORE_USER: String(USER.restoreRate),
};

describe('GraphQL rate limit by cost', () => {
  const time = new ManualClock();
  let t: TestService;
  let port: number;

  beforeAll(async () => {
    t = await startService(BUDGETS, time.clock);
    port = await t.listen(0, '127.0.0.1');
  });
  afterAll(async () => {
    await t.stop();
  });

  it('charges each operation its estimated cost and reports the budget in extensions.cost (POST and GET)', async () => {
    const first = await send(port, '127.0.0.2', CHEAP);
    expect(first.status).toBe(200);
    expect(first.body.data.communities.items).toEqual(expect.any(Array));
    expect(first.body.extensions).toEqual({ cost: { requestedQueryCost: 10, throttleStatus: { ...ANONYMOUS, currentlyAvailable: 90 } } });
    const second = await send(port, '127.0.0.2', CHEAP, { method: 'GET' });
    expect(second.status).toBe(200);
    expect(second.body.extensions!.cost).toEqual({ requestedQueryCost: 10, throttleStatus: { ...ANONYMOUS, currentlyAvailable: 80 } });
    // Errors in the answer do not make it free: the operation ran.
    const failed = await send(port, '127.0.0.2', '{ community(id: "00000000-0000-4000-8000-000000000000") { id } }');
    expect(failed.body.errors![0].extensions!.code).toBe('NOT_FOUND');
    expect(failed.body.extensions!.cost).toEqual({ requestedQueryCost: 2, throttleStatus: { ...ANONYMOUS, currentlyAvailable: 78 } });
  });

  it('answers RATE_LIMITED, HTTP 429 and Retry-After when the anonymous bucket is empty; another address and a signed-in user are unaffected', async () => {
    await drain(port, '127.0.0.3');
    const refused = await send(port, '127.0.0.3', CHEAP);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body).toEqual({
      errors: [
        {
          message: 'Throttled: this query costs 10 and 0 of 100 points are available (10 restored a second). Retry after 1 s.',
          extensions: { code: 'RATE_LIMITED', reason: 'throttled', status: 429, details: { retryAfterSeconds: 1 } },
        },
      ],
      extensions: { cost: { requestedQueryCost: 10, throttleStatus: { ...ANONYMOUS, currentlyAvailable: 0 } } },
    });
    // Another client address has its own bucket; so has a signed-in user on the refused address.
    expect((await send(port, '127.0.0.4', CHEAP)).body.extensions!.cost.throttleStatus.currentlyAvailable).toBe(90);
    const user = await signupUser(t);
    const signedIn = await send(port, '127.0.0.3', CHEAP, { as: user });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.extensions!.cost.throttleStatus).toEqual({ ...USER, currentlyAvailable: 4990 });
  });

  it('runs nothing for an operation it refuses: a mutation from an empty bucket writes no row', async () => {
    const user = await signupUser(t);
    await drain(port, '127.0.0.5', user);
    const handle = `rl-${unique()}`;
    const refused = await send(port, '127.0.0.5', 'mutation($i: CreateCommunityInput!) { createCommunity(input: $i) { id } }', {
      as: user,
      variables: { i: { name: 'Throttled', handle } },
    });
    expect(refused.status).toBe(429);
    expect(refused.body.data).toBeUndefined();
    expect(refused.body.errors![0].extensions).toMatchObject({ code: 'RATE_LIMITED', details: { retryAfterSeconds: 1 } });
    expect(await sqlRows(t, sql`select id from communities where handle = ${handle}`)).toEqual([]);
  });

  it('refills continuously at the restore rate: the refused operation runs once Retry-After has passed, and a bucket never holds more than its maximum', async () => {
    await drain(port, '127.0.0.6');
    const expensive = page(48); // cost 50: 5 seconds of restoring
    const refused = await send(port, '127.0.0.6', expensive);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('5');
    time.advance(4_000);
    const still = await send(port, '127.0.0.6', expensive);
    expect(still.status).toBe(429);
    expect(still.headers['retry-after']).toBe('1');
    expect(available(still)).toBe(40);
    time.advance(1_000);
    const ran = await send(port, '127.0.0.6', expensive);
    expect(ran.status).toBe(200);
    expect(available(ran)).toBe(0);
    time.advance(3_600_000);
    expect(available(await send(port, '127.0.0.6', CHEAP))).toBe(90);
  });

  it('starts a bucket over full when the clock went back, instead of owing points for as long as it was set back', async () => {
    await drain(port, '127.0.0.9');
    expect((await send(port, '127.0.0.9', CHEAP)).status).toBe(429);
    time.advance(-7 * 24 * 3_600_000); // a week back (a test's clock, an NTP step)
    const after = await send(port, '127.0.0.9', CHEAP);
    expect(after.status).toBe(200);
    expect(available(after)).toBe(ANONYMOUS.maximumAvailable - 10);
    time.advance(7 * 24 * 3_600_000);
  });

  it('takes the same charge on the fast path of known texts (planned before) as in Apollo Server, refusals included', async () => {
    const text = 'query KnownText { communities(perPage: 3) { items { id name } } }'; // cost 1 + (1 + 3 × 2) = 8
    const fixedBefore = t.graph.direct.fixed;
    const seen: number[] = [];
    for (let i = 0; i < 6; i += 1) seen.push(available(await send(port, '127.0.0.7', text)));
    expect(seen).toEqual([92, 84, 76, 68, 60, 52]);
    expect(t.graph.direct.fixed).toBeGreaterThan(fixedBefore); // some of them were answered by the fast path
    await drain(port, '127.0.0.7');
    const refused = await send(port, '127.0.0.7', text);
    expect(refused.status).toBe(429);
    expect(refused.body.errors![0].extensions!.code).toBe('RATE_LIMITED');
    expect(refused.body.extensions!.cost.requestedQueryCost).toBe(8);
  });

  it('weighs search by what it costs the database: 1,000 and more per search field; 15 aliased searches are refused before running', async () => {
    const user = await signupUser(t);
    const tribe = await createTribe(t, user);
    const search = (n: number) =>
      `query($c: ID!) { ${Array.from({ length: n }, (_, i) => `s${i}: search(query: "word", communityId: $c, first: 1) { edges { node { rank } } }`).join(' ')} }`;
    const before = available(await send(port, '127.0.0.8', '{ __typename }', { as: user }));
    const one = await send(port, '127.0.0.8', search(1), { as: user, variables: { c: tribe.id } });
    expect(one.status).toBe(200);
    expect(one.body.extensions!.cost.requestedQueryCost).toBe(1004); // 1 + 1,000 + edges (1 + 1 × node (1 + rank 1))
    expect(available(one)).toBe(before - 1004);
    // Five cost more than a full bucket of a user here (5,000): never runnable, so not RATE_LIMITED but refused outright.
    const five = await send(port, '127.0.0.8', search(5), { as: user, variables: { c: tribe.id } });
    expect(five.status).toBe(400);
    expect(five.body.errors).toEqual([
      { message: 'Query cost 5020 exceeds 5000, the most a signed-in user may spend at once.', extensions: { code: 'QUERY_TOO_COMPLEX', reason: 'cost_exceeds_budget', status: 400 } },
    ]);
    // Fifteen exceed the cost limit of one operation (10,000) whoever sends them.
    const fifteen = await send(port, '127.0.0.8', search(15), { as: user, variables: { c: tribe.id } });
    expect(fifteen.status).toBe(400);
    expect(fifteen.body.errors!.map((e) => e.extensions!.code)).toEqual(['QUERY_TOO_COMPLEX']);
    expect(fifteen.body.errors![0].message).toBe('Query cost 15060 exceeds the limit of 10000.');
    // An anonymous search costs more than an anonymous bucket holds here (100).
    const anonymous = await send(port, '127.0.0.8', search(1), { variables: { c: tribe.id } });
    expect(anonymous.status).toBe(400);
    expect(anonymous.body.errors![0].extensions).toEqual({ code: 'QUERY_TOO_COMPLEX', reason: 'cost_exceeds_budget', status: 400 });
    expect(available(anonymous)).toBe(100);
  });

  it('charges each subscribe message over WebSocket to its user\'s bucket, and refuses one with RATE_LIMITED when it is empty', async () => {
    const user = await signupUser(t);
    const conn = wsConnect(`ws://127.0.0.1:${port}/graphql`, { cookie: user.cookie });
    try {
      await conn.acknowledged;
      await drain(port, '127.0.0.11', user);
      const unread = 'subscription { unreadCountsChanged { notifications messages } }'; // cost 3
      const refused = subscribe(conn, unread);
      await waitFor(() => refused.error !== null);
      expect(refused.error).toEqual([
        {
          message: 'Throttled: this query costs 3 and 0 of 5000 points are available (100 restored a second). Retry after 1 s.',
          extensions: { code: 'RATE_LIMITED', reason: 'throttled', status: 429, details: { retryAfterSeconds: 1 } },
        },
      ]);
      time.advance(1_000);
      const before = t.realtime!.subscriptions;
      const accepted = subscribe(conn, unread);
      await waitFor(() => t.realtime!.subscriptions > before || accepted.error !== null);
      expect(accepted.error).toBeNull();
      expect(available(await send(port, '127.0.0.11', '{ __typename }', { as: user }))).toBe(100 - 3 - 1);
    } finally {
      await conn.dispose();
    }
  });

  it('does not charge the REST facade: the resource API and the Platform API run their documents outside the GraphQL budget', async () => {
    const user = await signupUser(t);
    const tribe = await createTribe(t, user);
    const token = await accessToken(t, user);
    const key = await createKey(t, user, tribe.handle);
    await drain(port, '127.0.0.9', user);
    for (let i = 0; i < 5; i += 1) {
      expect((await t.api.get(`/v1/communities/${tribe.id}`).set('authorization', `Bearer ${token}`)).status).toBe(200);
      expect((await t.api.get('/v1/members').set('authorization', `Bearer ${key.key}`)).status).toBe(200);
    }
    const graphql = await send(port, '127.0.0.9', '{ __typename }', { as: user });
    expect(graphql.status).toBe(429);
    expect(graphql.body.extensions!.cost.throttleStatus.currentlyAvailable).toBe(0);
    time.advance(1_000);
    // One second restored 100 points, and REST took none of them.
    expect(available(await send(port, '127.0.0.9', '{ __typename }', { as: user }))).toBe(99);
  });
});

describe('GraphQL rate limit configuration', () => {
  it('defaults to 20,000 points restored at 1,000 a second for a user, 5,000 at 100 for an anonymous client', () => {
    expect(loadConfig({}).graphqlCost).toEqual({ user: { maximumAvailable: 20_000, restoreRate: 1_000 }, anonymous: { maximumAvailable: 5_000, restoreRate: 100 } });
  });

  it('names every bad variable at once', () => {
    expect(() => loadConfig({ GRAPHQL_COST_MAX_USER: '0', GRAPHQL_COST_RESTORE_ANONYMOUS: 'fast' })).toThrow(/GRAPHQL_COST_MAX_USER[\s\S]*GRAPHQL_COST_RESTORE_ANONYMOUS|GRAPHQL_COST_RESTORE_ANONYMOUS[\s\S]*GRAPHQL_COST_MAX_USER/);
  });
});

describe('GraphQL rate limit shared through Redis (RATE_LIMIT_REDIS_URL)', () => {
  const time = new ManualClock();
  let redis: Awaited<ReturnType<typeof startRedis>>;
  let a: TestService;
  let b: TestService;
  let portA: number;
  let portB: number;

  beforeAll(async () => {
    redis = await startRedis();
    if (!redis) {
      console.warn('redis-server is not installed and TEST_REDIS_URL is not set: the shared GraphQL budget test is skipped');
      return;
    }
    a = await startService({ ...BUDGETS, RATE_LIMIT_REDIS_URL: redis.url }, time.clock);
    b = await startService({ ...BUDGETS, RATE_LIMIT_REDIS_URL: redis.url }, time.clock);
    portA = await a.listen(0, '127.0.0.1');
    portB = await b.listen(0, '127.0.0.1');
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await redis?.stop();
  });

  it('charges one bucket per caller across two service instances', async () => {
    if (!redis) return;
    const from = '127.0.0.10';
    expect(available(await send(portA, from, CHEAP))).toBe(90);
    expect(available(await send(portB, from, CHEAP))).toBe(80);
    await drain(portA, from);
    const refused = await send(portB, from, CHEAP);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    const user = await signupUser(a);
    expect(available(await send(portB, from, CHEAP, { as: user }))).toBe(4990);
    expect(available(await send(portA, from, CHEAP, { as: user }))).toBe(4980);
    time.advance(2_000);
    expect(available(await send(portA, from, CHEAP))).toBe(10);
  });
});

describe('search under a statement timeout', () => {
  let t: TestService;
  const warnings: string[] = [];
  const errors: string[] = [];

  beforeAll(async () => {
    // A 1 ms budget for both tries that ranking 3,000 matches, or 100 of them, always outruns.
    const log = pino({ level: 'warn' }, { write: (line: string) => (JSON.parse(line).level >= 50 ? errors : warnings).push(line) });
    const service = await createService(testConfig({ SEARCH_TIMEOUT_MS: '1', SEARCH_FALLBACK_TIMEOUT_MS: '1', SEARCH_FALLBACK_CANDIDATES: '100' }), { log });
    t = Object.assign(service, { api: (await import('supertest')).default(service.http) });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('answers BAD_USER_INPUT search_too_expensive (a field error, not a 500) when even the bounded try runs out of time, logged as a warning', async () => {
    const owner = await signupUser(t);
    const tribe = await createTribe(t, owner);
    const term = `zq${unique().replace(/[0-9]/g, (d) => 'ghijklmnop'[Number(d)])}`;
    await sqlRows(t, sql`insert into posts (community_id, author_id, body, status, visibility, published_at)
      select ${tribe.id}::uuid, ${owner.id}::uuid, '<p>' || ${term} || ' number ' || n || '</p>', 'published', 'public', now()
      from generate_series(1, 3000) n`);
    const res = await t.api
      .post('/graphql')
      .set('content-type', 'application/json')
      .set('cookie', owner.cookie)
      .send({
        query: 'query($q: String!, $c: ID!) { search(query: $q, communityId: $c, first: 50) { edges { node { rank } } } }',
        variables: { q: term, c: tribe.id },
      });
    expect(res.status).toBe(200);
    expect(res.body.data).toBeNull(); // search is non-null
    expect(res.body.errors).toEqual([
      {
        message: 'Search took too long and was stopped: search for rarer words, or retry later.',
        path: ['search'],
        extensions: { code: 'BAD_USER_INPUT', reason: 'search_too_expensive', status: 400, details: [{ field: 'query', message: 'took too long to search' }] },
      },
    ]);
    expect(warnings.some((line) => line.includes('search ran out of time twice'))).toBe(true);
    expect(errors).toEqual([]);
  });
});
