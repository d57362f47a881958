// The split deployment (scripts/split.ts, `npm run split`) started for real: two gateway+REST processes, every
// subgraph in its own process, two job workers, Redis, one PostgreSQL of this file's own. The main flows run
// through both gateways alternately; then a subgraph is killed, frozen and restarted.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { startSplit, type Split } from '../scripts/split.js';
import { SUBGRAPH_NAMES } from '../subgraphs/index.js';
import { accessToken, createKey, createTribe, join, registerEndpoint, signupUser, type TestUser } from './factory.js';
import { gql, isolatedDatabase, LOOPBACK_ALLOWED, platformGet, Receiver, TEST_DATABASE_URL, waitFor, type TestService } from './support.js';

const RATE_LIMIT = 6;
const SUBGRAPH_TIMEOUT_MS = 6000; // far above a call on a loaded machine running a dozen processes
const CA = fileURLToPath(new URL('./fixtures/tls/ca.pem', import.meta.url));

/** A Redis that answers, or null (the shared-counter assertion is then skipped with a warning). */
async function reachableRedis(): Promise<string | null> {
  const url = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  try {
    await probe.connect();
    await probe.ping();
    return url;
  } catch {
    return null;
  } finally {
    probe.disconnect();
  }
}

if (!TEST_DATABASE_URL) console.warn('split.test.ts is skipped: the split deployment needs a PostgreSQL server (SVC_TEST_DATABASE_URL), not PGlite');
const onPostgres = TEST_DATABASE_URL ? describe : describe.skip;

onPostgres('split deployment: two gateways, a process per subgraph, two workers, Redis, PostgreSQL', () => {
  let database: Awaited<ReturnType<typeof isolatedDatabase>>;
  let split: Split;
  let redisUrl: string | null;
  const receiver = new Receiver();
  /** Gateway `i % 2` as the helpers' service (they only use `api`). */
  const gateway = (i: number) => ({ api: request(split.gatewayUrls[i % 2]) }) as unknown as TestService;

  let owner: TestUser;
  let member: TestUser;
  let tribe: { id: string; handle: string };
  let eventId: string;
  let startedInMs = 0;

  beforeAll(async () => {
    redisUrl = await reachableRedis();
    if (!redisUrl) console.warn('No Redis answers (TEST_REDIS_URL or 127.0.0.1:6379): the shared rate-limit assertion is skipped');
    database = await isolatedDatabase();
    await receiver.start();
    const started = Date.now();
    split = await startSplit({
      databaseUrl: database.url!,
      redisUrl: redisUrl ?? undefined,
      source: true,
      env: {
        NODE_ENV: 'test',
        COOKIE_SECURE: 'false',
        DATABASE_POOL_SIZE: '3',
        RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
        SUBGRAPH_TIMEOUT_MS: String(SUBGRAPH_TIMEOUT_MS),
        WORKER_POLL_INTERVAL_MS: '100',
        WEBHOOK_FANOUT_INTERVAL_MS: '200',
        WEBHOOK_DRAIN_INTERVAL_MS: '300',
        WEBHOOK_ALLOWED_PRIVATE_HOSTS: LOOPBACK_ALLOWED,
        NODE_EXTRA_CA_CERTS: CA,
      },
    });
    startedInMs = Date.now() - started;
  }, 150_000);

  afterAll(async () => {
    await split?.stop(5000);
    await receiver.stop();
    await database?.drop();
  }, 30_000);

  it('starts every process of the Procfile: two gateways, each subgraph, two workers', () => {
    const names = [...split.processes.keys()].sort();
    expect(names).toEqual([...SUBGRAPH_NAMES, 'gateway1', 'gateway2', 'worker1', 'worker2'].sort());
    const procfile = readFileSync(new URL('../Procfile', import.meta.url), 'utf8');
    const procfileNames = procfile.split('\n').filter((l) => /^\w[\w-]*:/.test(l)).map((l) => l.split(':')[0]);
    expect(procfileNames.filter((n) => n !== 'redis').sort()).toEqual(names);
    for (const name of SUBGRAPH_NAMES) expect(procfile).toMatch(new RegExp(`^${name}: .*dist/server/subgraph\\.js ${name}$`, 'm'));
    for (const name of ['gateway1', 'gateway2']) expect(procfile).toMatch(new RegExp(`^${name}: .*dist/server/web\\.js$`, 'm'));
    for (const name of ['worker1', 'worker2']) expect(procfile).toMatch(new RegExp(`^${name}: .*dist/server/worker\\.js$`, 'm'));
    console.log(`split deployment up in ${startedInMs} ms\n${split.table()}`);
  });

  it('runs signup, tribe, post, API key, Platform API and a paid order through both gateways alternately', async () => {
    owner = await signupUser(gateway(0));
    member = await signupUser(gateway(1));
    tribe = await createTribe(gateway(1), owner);

    // Webhooks of the tribe go to a local HTTPS receiver that verifies every signature.
    const endpoint = await registerEndpoint(gateway(0) as TestService, owner, tribe.handle, { url: receiver.url(), events: ['member.joined', 'post.created', 'order.paid'] }, receiver);
    expect(endpoint.enabled).toBe(true);

    expect(await join(gateway(0), member, tribe.handle)).toMatchObject({ role: 'member' });

    // A post through the resource API: the token is signed by one gateway and accepted by the other.
    const token = await accessToken(gateway(1), member);
    const post = await gateway(0).api.post(`/v1/communities/${tribe.id}/posts`).set('authorization', `Bearer ${token}`).send({ content: 'hello from the split' });
    expect(post.status).toBe(201);
    const read = await gql(gateway(1), owner, 'query($id: ID!){ post(id: $id){ id author { username } community { handle memberCount } } }', { id: post.body.data.id });
    expect(read.errors).toBeUndefined();
    expect(read.data.post).toEqual({ id: post.body.data.id, author: { username: member.username }, community: { handle: tribe.handle, memberCount: 2 } });

    // An API key from the control plane, then the Platform API on each gateway.
    const key = await createKey(gateway(0), owner, tribe.handle);
    const me = await platformGet(gateway(1), '/v1/me', key.key);
    expect(me.status).toBe(200);
    expect(me.body.community).toMatchObject({ id: tribe.id, handle: tribe.handle });
    const posts = await platformGet(gateway(0), '/v1/posts', key.key);
    expect(posts.status).toBe(200);
    expect(posts.body.data.map((p: { id: string }) => p.id)).toEqual([post.body.data.id]);

    // A paid order with the manual provider: a paid event, the member registers (pending order), the owner marks it paid.
    const ownerToken = await accessToken(gateway(0), owner);
    const event = await gateway(1)
      .api.post(`/v1/communities/${tribe.id}/events`)
      .set('authorization', `Bearer ${ownerToken}`)
      .send({ title: 'Paid workshop', event_type: 'online', starts_at: '2031-05-01T18:00:00Z', ends_at: '2031-05-01T19:00:00Z', price: 25 });
    expect(event.status).toBe(201);
    eventId = event.body.data.id;
    const pending = await gateway(0).api.post(`/v1/communities/${tribe.id}/events/${event.body.data.id}/register`).set('authorization', `Bearer ${token}`);
    expect(pending.status).toBe(202);
    expect(pending.body.data).toMatchObject({ status: 'pending_payment', order: { status: 'pending', amount_cents: 2500 } });
    const orderId = pending.body.data.order.id;
    const paid = await gateway(1).api.post(`/communities/${tribe.handle}/orders/${orderId}/mark-paid`).set('cookie', owner.cookie);
    expect(paid.status).toBe(200);
    expect(paid.body.order).toMatchObject({ id: orderId, status: 'paid', amountCents: 2500 });
    const registered = await gateway(0).api.post(`/v1/communities/${tribe.id}/events/${event.body.data.id}/register`).set('authorization', `Bearer ${token}`);
    expect(registered.status).toBe(200);
    expect(registered.body.data).toMatchObject({ status: 'confirmed', order_id: orderId });
    const orders = await platformGet(gateway(1), '/v1/orders', key.key);
    expect(orders.status).toBe(200);
    expect(orders.body.data).toEqual([expect.objectContaining({ id: orderId, status: 'paid', amountCents: 2500 })]);
  }, 60_000);

  it('delivers each webhook exactly once with both workers draining', async () => {
    const wanted = ['member.joined', 'post.created', 'order.paid'];
    await waitFor(() => wanted.every((type) => receiver.events.some((e) => e.type === type)), 20_000, 'member.joined, post.created and order.paid');
    // Several more drain and fan-out rounds of both workers: nothing may arrive twice.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(receiver.rejected).toEqual([]);
    const ids = receiver.events.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(receiver.events.map((e) => e.type).sort()).toEqual([...wanted].sort());
    for (const r of receiver.received) expect(r.headers['x-svc-delivery']).toBe(r.event!.id);
  }, 30_000);

  it('counts the Platform API rate limit once across both gateways (Redis)', async () => {
    if (!redisUrl) return;
    const key = await createKey(gateway(1), owner, tribe.handle);
    const statuses: number[] = [];
    for (let i = 0; i < RATE_LIMIT + 2; i += 1) statuses.push((await platformGet(gateway(i), '/v1/me', key.key)).status);
    expect(statuses).toEqual([...Array(RATE_LIMIT).fill(200), 429, 429]);
    const limited = await platformGet(gateway(1), '/v1/me', key.key);
    expect(limited.body.error.type).toBe('rate_limited');
    expect(limited.headers['retry-after']).toBe('60');
  }, 30_000);

  it('answers a killed subgraph\'s fields with SERVICE_UNAVAILABLE while the rest works, and serves them again after a restart', async () => {
    const eventsQuery = 'query($c: ID!){ events(communityId: $c, status: "all"){ items { title } } }';
    await split.kill('events', 'SIGKILL');

    for (const i of [0, 1]) {
      const started = Date.now();
      const out = await gql(gateway(i), owner, eventsQuery, { c: tribe.id });
      expect(Date.now() - started).toBeLessThan(SUBGRAPH_TIMEOUT_MS); // a refused connection fails at once
      expect(out.data ?? null).toBeNull();
      expect(out.errors).toEqual([{ message: 'The events service is temporarily unavailable; retry later.', extensions: { code: 'SERVICE_UNAVAILABLE', status: 503 } }]);
    }
    // Fields of other subgraphs in the same operation still resolve; the dead one's (nullable) field is null with its error.
    const mixed = await gql(gateway(1), owner, 'query($h: String!, $e: ID!){ me { username } community(handle: $h){ handle } event(id: $e){ title } }', {
      h: tribe.handle,
      e: eventId,
    });
    expect(mixed.data).toEqual({ me: { username: owner.username }, community: { handle: tribe.handle }, event: null });
    expect(mixed.errors?.map((e) => e.extensions?.code)).toEqual(['SERVICE_UNAVAILABLE']);
    // Operations that touch only the living subgraphs are untouched.
    const alive = await gql(gateway(0), owner, 'query($h: String!){ me { username } community(handle: $h){ handle memberCount } }', { h: tribe.handle });
    expect(alive).toEqual({ data: { me: { username: owner.username }, community: { handle: tribe.handle, memberCount: 2 } } });

    // REST surfaces answer 503 in their own envelope, not a hang and not a generic 500.
    const token = await accessToken(gateway(1), owner);
    const rest = await gateway(0).api.get(`/v1/communities/${tribe.id}/events`).set('authorization', `Bearer ${token}`);
    expect(rest.status).toBe(503);
    expect(rest.headers['retry-after']).toBeDefined();
    expect(rest.body).toEqual({ error: { code: 'service_unavailable', message: expect.any(String), request_id: expect.any(String) } });
    const key = await createKey(gateway(1), owner, tribe.handle, ['events:read', 'community:read']);
    const platform = await platformGet(gateway(0), '/v1/events', key.key);
    expect(platform.status).toBe(503);
    expect(platform.body).toEqual({ error: { type: 'service_unavailable', message: expect.any(String) } });
    expect(platform.headers['retry-after']).toBeDefined();
    expect((await platformGet(gateway(1), '/v1/me', key.key)).status).toBe(200);

    await split.restart('events');
    for (const i of [0, 1]) {
      const out = await gql(gateway(i), owner, eventsQuery, { c: tribe.id });
      expect(out).toEqual({ data: { events: { items: [{ title: 'Paid workshop' }] } } });
    }
    expect((await gateway(1).api.get(`/v1/communities/${tribe.id}/events`).set('authorization', `Bearer ${token}`)).status).toBe(200);
  }, 60_000);

  it('gives up on a frozen subgraph after SUBGRAPH_TIMEOUT_MS instead of hanging', async () => {
    split.signal('content', 'SIGSTOP');
    try {
      const started = Date.now();
      const out = await gql(gateway(1), owner, 'query($c: ID!){ posts(communityId: $c){ items { id } } }', { c: tribe.id });
      const took = Date.now() - started;
      expect(out.errors?.[0]).toEqual({ message: 'The content service is temporarily unavailable; retry later.', extensions: { code: 'SERVICE_UNAVAILABLE', status: 503 } });
      expect(took).toBeGreaterThanOrEqual(SUBGRAPH_TIMEOUT_MS - 100);
      expect(took).toBeLessThan(SUBGRAPH_TIMEOUT_MS + 3000);
    } finally {
      split.signal('content', 'SIGCONT');
    }
    // Resumed, it serves again (on a loaded machine the first answer may itself take longer than the timeout).
    let back: Awaited<ReturnType<typeof gql>> | undefined;
    await waitFor(async () => {
      back = await gql(gateway(0), owner, 'query($c: ID!){ posts(communityId: $c){ items { body } } }', { c: tribe.id });
      return !back.errors;
    }, 15_000, 'the resumed content subgraph to answer');
    expect(back!.data.posts.items).toEqual([{ body: expect.any(String) }]);
  }, 45_000);
});
