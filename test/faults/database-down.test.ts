// The database goes away in the middle of a burst of writes (a TCP proxy in front of it drops every connection, as a
// restart does): every surface answers 503 in its own envelope with Retry-After, never 500; /readyz says not ready;
// the service comes back by itself; nothing is half-written (each post has its post.created outbox event).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { pino } from 'pino';
import request from 'supertest';
import { createService } from '../../server/service.js';
import { accessToken, createKey, createTribe, signupUser, unique, type TestUser } from '../factory.js';
import { isolatedDatabase, TEST_DATABASE_URL, testConfig, waitFor, type TestService } from '../support.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

const CREATE_POST = 'mutation($c: ID!, $i: CreatePostInput!){ createPost(communityId: $c, input: $i){ id } }';
const RESOURCE_503 = { error: { code: 'service_unavailable', message: 'The service is temporarily unavailable; retry later.', request_id: expect.any(String) } };

/** One write of the burst and what it answered. */
interface Outcome {
  surface: 'resource' | 'graphql';
  status: number;
  body: any;
  retryAfter?: string;
}

const describePg = TEST_DATABASE_URL ? describe : describe.skip;

describePg('database down', () => {
  let database: Awaited<ReturnType<typeof isolatedDatabase>>;
  let proxy: TcpProxy;
  let t: TestService;
  let owner: TestUser;
  let tribe: { id: string; handle: string };
  let token: string;
  let apiKey: string;
  let direct: pg.Client;

  beforeAll(async () => {
    database = await isolatedDatabase();
    const target = new URL(database.url!);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const service = await createService(testConfig({ DATABASE_URL: proxy.url(database.url!), DATABASE_POOL_SIZE: '5' }), { log: pino({ level: 'silent' }) });
    t = Object.assign(service, { api: request(service.http) });
    owner = await signupUser(t);
    tribe = await createTribe(t, owner);
    token = await accessToken(t, owner);
    apiKey = (await createKey(t, owner, tribe.handle)).key;
    direct = new pg.Client({ connectionString: database.url });
    await direct.connect();
    // Generous: in CI this starts while the processes tier's other files start a dozen processes of their own.
  }, 90_000);

  afterAll(async () => {
    await direct?.end();
    await t?.stop();
    await proxy?.close();
    await database?.drop();
  }, 60_000);

  const resourcePost = async (): Promise<Outcome> => {
    const res = await t.api.post(`/v1/communities/${tribe.id}/posts`).set('authorization', `Bearer ${token}`).send({ content: `<p>r ${unique()}</p>` });
    return { surface: 'resource', status: res.status, body: res.body, retryAfter: res.headers['retry-after'] };
  };
  const graphqlPost = async (): Promise<Outcome> => {
    const res = await t.api
      .post('/graphql')
      .set('cookie', owner.cookie)
      .set('content-type', 'application/json')
      .send({ query: CREATE_POST, variables: { c: tribe.id, i: { content: `<p>g ${unique()}</p>` } } });
    return { surface: 'graphql', status: res.status, body: res.body, retryAfter: res.headers['retry-after'] };
  };

  it('answers 503 in each envelope while the database is gone, recovers by itself, and writes nothing by halves', async () => {
    // A burst of concurrent writes on both surfaces; the database is cut after the first dozen answers.
    const outcomes: Outcome[] = [];
    let cutAfter = 12;
    let sent = 0;
    const lane = async (i: number) => {
      while (sent < 80) {
        sent += 1;
        outcomes.push(await (i % 2 ? resourcePost() : graphqlPost()));
        if (outcomes.length === cutAfter) proxy.cut();
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, i) => lane(i)));
    cutAfter = -1;

    // Still down: every surface in its own envelope, with Retry-After.
    const ready = await t.api.get('/readyz');
    expect([ready.status, ready.body]).toEqual([503, { status: 'unavailable' }]);
    const app = await t.api.get('/auth/me').set('cookie', owner.cookie);
    expect([app.status, app.body, app.headers['retry-after']]).toEqual([503, { error: 'service_unavailable', message: expect.any(String), requestId: expect.any(String) }, '5']);
    const resource = await t.api.get(`/v1/communities/${tribe.id}/posts`).set('authorization', `Bearer ${token}`);
    expect([resource.status, resource.body, resource.headers['retry-after']]).toEqual([503, RESOURCE_503, '5']);
    const platform = await t.api.get('/v1/posts').set('authorization', `Bearer ${apiKey}`);
    expect([platform.status, platform.body, platform.headers['retry-after']]).toEqual([503, { error: { type: 'service_unavailable', message: RESOURCE_503.error.message } }, '5']);
    const anonymous = await t.api.post('/graphql').set('content-type', 'application/json').send({ query: `{ community(handle: "${tribe.handle}") { id } }` });
    expect([anonymous.status, anonymous.body.errors?.[0]?.extensions, anonymous.headers['retry-after']]).toEqual([503, { code: 'SERVICE_UNAVAILABLE', status: 503 }, '5']);
    const signedIn = await graphqlPost();
    expect([signedIn.status, signedIn.body.errors?.[0]?.extensions?.code, signedIn.retryAfter]).toEqual([503, 'SERVICE_UNAVAILABLE', '5']);

    // The burst: created or 503 in the surface's envelope, never a 500; some of each.
    for (const o of outcomes) {
      if (o.surface === 'resource') {
        if (o.status === 201) continue;
        expect([o.status, o.body, o.retryAfter]).toEqual([503, RESOURCE_503, '5']);
      } else {
        if (o.status === 200 && !o.body.errors) continue;
        expect([o.status, o.body.errors?.[0]?.extensions?.code, o.retryAfter]).toEqual([503, 'SERVICE_UNAVAILABLE', '5']);
      }
    }
    const created = outcomes.filter((o) => o.status === 201 || (o.status === 200 && !o.body.errors));
    expect(created.length).toBeGreaterThanOrEqual(12);
    expect(outcomes.length - created.length).toBeGreaterThan(0);

    // Back: no restart, the pool reconnects on its own.
    proxy.restore();
    await waitFor(async () => (await t.api.get('/readyz')).status === 200, 10_000, '/readyz ready');
    const again = [await resourcePost(), await graphqlPost(), await resourcePost(), await graphqlPost()];
    expect(again.map((o) => o.status)).toEqual([201, 200, 201, 200]);
    expect(again.filter((o) => o.surface === 'graphql').map((o) => o.body.errors)).toEqual([undefined, undefined]);
    // No client stuck in the pool: more concurrent requests than connections all succeed.
    const wide = await Promise.all(Array.from({ length: 12 }, () => t.api.get(`/v1/communities/${tribe.id}/posts`).set('authorization', `Bearer ${token}`)));
    expect(wide.map((r) => r.status)).toEqual(Array(12).fill(200));
    const pool = t.deps.database.pool!;
    expect(pool.totalCount).toBeLessThanOrEqual(5);

    // Nothing half-written: each created post exists; posts and their post.created events match one to one.
    const ids = [...created, ...again].map((o) => (o.surface === 'resource' ? o.body.data.id : o.body.data.createPost.id));
    const posts = (await direct.query('select id from posts where community_id = $1', [tribe.id])).rows.map((r) => r.id as string);
    const events = (await direct.query("select data->>'postId' as id from outbox_events where community_id = $1 and type = 'post.created'", [tribe.id])).rows.map((r) => r.id as string);
    expect(posts).toEqual(expect.arrayContaining(ids));
    expect([...events].sort()).toEqual([...posts].sort());
  });

  it('gives back to the pool every connection that died as its transaction began: none is lost for good', async () => {
    const { pool, db } = t.deps.database;
    proxy.restore(); // up, whatever the test before left behind
    // Five idle connections, then the database goes away and five transactions start on them at once.
    await Promise.all(Array.from({ length: 5 }, () => db.transaction((tx) => tx.execute(sql`select pg_sleep(0.05)`))));
    expect([pool!.totalCount, pool!.idleCount]).toEqual([5, 5]);
    proxy.cut();
    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, () => db.transaction((tx) => tx.execute(sql`select 1`))));
    expect(outcomes.map((o) => o.status)).toEqual(Array(5).fill('rejected'));
    proxy.restore();
    // No connection is held by a transaction that is over; the pool serves as many transactions as it has room for.
    expect(pool!.totalCount - pool!.idleCount).toBe(0);
    const after = await Promise.all(Array.from({ length: 5 }, () => db.transaction((tx) => tx.execute(sql`select 2 as two`))));
    expect(after.map((r) => (r as unknown as { rows: Array<{ two: number }> }).rows[0].two)).toEqual(Array(5).fill(2));
  });
});
