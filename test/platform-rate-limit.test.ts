import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { ConfigError, loadConfig } from '../subgraphs/kernel/index.js';
import { ALL_SCOPES, createKey, createTribe, signupUser, type CreatedKey, type TestUser } from './factory.js';
import { platformGet, startService, type TestService } from './support.js';
import { startRedis } from './redis.js';
import { expectNoCorsOrRateHeaders, forbiddenBody, RATE_LIMITED, UNAUTHORIZED } from './expected.js';

/** Sends `n` GETs with the key, `parallel` at a time, and returns their statuses. */
async function burst(t: TestService, path: string, key: string, n: number, parallel = 10): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i += parallel) {
    const batch = await Promise.all(Array.from({ length: Math.min(parallel, n - i) }, () => platformGet(t, path, key)));
    for (const res of batch) {
      expectNoCorsOrRateHeaders(res.headers);
      statuses.push(res.status);
    }
  }
  return statuses;
}

const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

describe('Platform API rate limit (in memory, per process)', () => {
  let t: TestService;
  let owner: TestUser;
  let tribe: { id: string; handle: string };
  let otherOwner: TestUser;
  let otherTribe: { id: string; handle: string };

  beforeAll(async () => {
    t = await startService();
    [owner, otherOwner] = await Promise.all([signupUser(t), signupUser(t)]);
    tribe = await createTribe(t, owner);
    otherTribe = await createTribe(t, otherOwner);
  });
  afterAll(async () => {
    await t.stop();
  });

  it('serves 120 requests of a key in the window and answers the 121st with 429 rate_limited and Retry-After: 60', async () => {
    const key = await createKey(t, owner, tribe.handle);
    const statuses = await burst(t, '/v1/members', key.key, 120);
    expect(statuses).toEqual(Array(120).fill(200));
    const res = await platformGet(t, '/v1/members', key.key);
    expect(res.status).toBe(429);
    expect(res.body).toEqual(RATE_LIMITED);
    expect(res.headers['retry-after']).toBe('60');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expectNoCorsOrRateHeaders(res.headers);
    // Every endpoint of the key shares the counter.
    const me = await platformGet(t, '/v1/me', key.key);
    expect(me.status).toBe(429);
    expect(me.headers['retry-after']).toBe('60');
  });

  it('counts per key, not per IP: other keys of the same tribe and of another tribe still pass', async () => {
    const spent = await createKey(t, owner, tribe.handle);
    const sibling = await createKey(t, owner, tribe.handle);
    const foreign = await createKey(t, otherOwner, otherTribe.handle);
    await burst(t, '/v1/me', spent.key, 121);
    expect((await platformGet(t, '/v1/me', spent.key)).status).toBe(429);
    expect((await platformGet(t, '/v1/me', sibling.key)).status).toBe(200);
    expect((await platformGet(t, '/v1/me', foreign.key)).status).toBe(200);
  });

  it('answers an invalid key 401, never 429, however often it is sent', async () => {
    const revoked = await createKey(t, owner, tribe.handle);
    await t.api.delete(`/communities/${tribe.handle}/api-keys/${revoked.id}`).set('cookie', owner.cookie).expect(200);
    for (const bad of [`svc_sk_${'Q'.repeat(43)}`, 'garbage', revoked.key]) {
      const statuses = await burst(t, '/v1/members', bad, 130, 13);
      expect(statuses).toEqual(Array(130).fill(401));
      const last = await platformGet(t, '/v1/members', bad);
      expect(last.body).toEqual(UNAUTHORIZED);
      expect(last.headers['retry-after']).toBeUndefined();
    }
  });

  it('checks the limit before the scope: a valid key without the scope gets 403 within the limit, then 429', async () => {
    const key = await createKey(t, owner, tribe.handle, ['posts:read']);
    const statuses = await burst(t, '/v1/members', key.key, 120);
    expect(statuses).toEqual(Array(120).fill(403));
    const res = await platformGet(t, '/v1/members', key.key);
    expect(res.status).toBe(429);
    expect(res.body).toEqual(RATE_LIMITED);
    expect(res.headers['retry-after']).toBe('60');
    const mixed = await createKey(t, owner, tribe.handle, ['posts:read']);
    await burst(t, '/v1/posts', mixed.key, 120);
    const over = await platformGet(t, '/v1/orders', mixed.key);
    expect(over.status).toBe(429);
    expect(over.body).not.toEqual(forbiddenBody('orders:read'));
  });

  it('counts 404 answers of a valid key, but not unknown paths or other methods', async () => {
    const key = await createKey(t, owner, tribe.handle);
    for (let i = 0; i < 50; i += 1) {
      await t.api.post('/v1/members').set('authorization', `Bearer ${key.key}`).expect(405);
      await platformGet(t, '/v1/nope', key.key).expect(404);
    }
    const statuses = await burst(t, '/v1/members/nobody_here', key.key, 120);
    expect(statuses).toEqual(Array(120).fill(404));
    expect((await platformGet(t, '/v1/me', key.key)).status).toBe(429);
  });

  it('keeps 120 as the ceiling under concurrent requests', async () => {
    const key = await createKey(t, owner, tribe.handle);
    const statuses = await burst(t, '/v1/me', key.key, 150, 50);
    expect(count(statuses, 200)).toBe(120);
    expect(count(statuses, 429)).toBe(30);
  });
});

describe('Platform API rate limit configuration', () => {
  it('defaults to 120 per minute, on, in memory, and 10 live keys per tribe', () => {
    expect(loadConfig({}).rateLimit).toEqual({ enabled: true, perMinute: 120, redisUrl: undefined, keysPerTribe: 10 });
  });

  it('names every bad rate-limit variable at once', () => {
    let message = '';
    try {
      loadConfig({ RATE_LIMIT_PER_MINUTE: '0', RATE_LIMIT_REDIS_URL: 'http://127.0.0.1:6379', RATE_LIMIT_ENABLED: 'maybe' });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      message = (error as Error).message;
    }
    for (const name of ['RATE_LIMIT_PER_MINUTE', 'RATE_LIMIT_REDIS_URL', 'RATE_LIMIT_ENABLED']) expect(message).toContain(name);
  });

  it('RATE_LIMIT_PER_MINUTE sets the limit', async () => {
    const t = await startService({ RATE_LIMIT_PER_MINUTE: '3' });
    try {
      const owner = await signupUser(t);
      const tribe = await createTribe(t, owner);
      const key = await createKey(t, owner, tribe.handle);
      expect(await burst(t, '/v1/me', key.key, 4, 1)).toEqual([200, 200, 200, 429]);
      const res = await platformGet(t, '/v1/me', key.key);
      expect(res.body.error.message).toBe('Too many requests: at most 3 per 60 seconds per key. Retry after 60 seconds.');
    } finally {
      await t.stop();
    }
  });

  it('counts in memory, still at the limit, while the Redis of RATE_LIMIT_REDIS_URL is unreachable', async () => {
    const t = await startService({ RATE_LIMIT_REDIS_URL: 'redis://127.0.0.1:1', RATE_LIMIT_PER_MINUTE: '5' });
    try {
      const owner = await signupUser(t);
      const tribe = await createTribe(t, owner);
      const key = await createKey(t, owner, tribe.handle);
      expect(await burst(t, '/v1/me', key.key, 6, 1)).toEqual([200, 200, 200, 200, 200, 429]);
    } finally {
      await t.stop();
    }
  });

  it('RATE_LIMIT_ENABLED=false (benchmarks only) lets every request through', async () => {
    const t = await startService({ RATE_LIMIT_ENABLED: 'false', RATE_LIMIT_PER_MINUTE: '2' });
    try {
      const owner = await signupUser(t);
      const tribe = await createTribe(t, owner);
      const key = await createKey(t, owner, tribe.handle);
      expect(await burst(t, '/v1/me', key.key, 10, 5)).toEqual(Array(10).fill(200));
      expect((await t.api.get('/v1/me')).status).toBe(401);
    } finally {
      await t.stop();
    }
  });
});

describe('Platform API rate limit shared through Redis (RATE_LIMIT_REDIS_URL)', () => {
  let redis: Awaited<ReturnType<typeof startRedis>>;
  let client: Redis;
  let a: TestService;
  let b: TestService;
  let owner: TestUser;
  let tribe: { id: string; handle: string };

  beforeAll(async () => {
    redis = await startRedis();
    if (!redis) {
      console.warn('redis-server is not installed and TEST_REDIS_URL is not set: the shared rate-limit tests are skipped');
      return;
    }
    client = new Redis(redis.url);
    a = await startService({ RATE_LIMIT_REDIS_URL: redis.url });
    b = await startService({ RATE_LIMIT_REDIS_URL: redis.url });
    owner = await signupUser(a);
    tribe = await createTribe(a, owner);
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    client?.disconnect();
    await redis?.stop();
  });

  const maybe = (name: string, fn: () => Promise<void>) => it(name, async () => (redis ? fn() : undefined));

  maybe('shares one counter per key across two service instances', async () => {
    const key: CreatedKey = await createKey(a, owner, tribe.handle, ALL_SCOPES);
    expect(await burst(a, '/v1/members', key.key, 60)).toEqual(Array(60).fill(200));
    expect(await burst(b, '/v1/members', key.key, 60)).toEqual(Array(60).fill(200));
    for (const t of [a, b]) {
      const res = await platformGet(t, '/v1/members', key.key);
      expect(res.status).toBe(429);
      expect(res.body).toEqual(RATE_LIMITED);
      expect(res.headers['retry-after']).toBe('60');
    }
    expect(Number(await client.get(`svc:platform:rl:${key.id}`))).toBeGreaterThanOrEqual(121);
  });

  maybe('uses a fixed 60-second window that resets when it ends', async () => {
    const key = await createKey(a, owner, tribe.handle);
    await platformGet(a, '/v1/me', key.key).expect(200);
    const ttl = await client.pttl(`svc:platform:rl:${key.id}`);
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    await burst(b, '/v1/me', key.key, 119);
    // A later request does not extend the window (fixed, not sliding).
    expect(await client.pttl(`svc:platform:rl:${key.id}`)).toBeLessThanOrEqual(ttl);
    expect((await platformGet(a, '/v1/me', key.key)).status).toBe(429);
    // The window ends: the counter starts again.
    await client.pexpire(`svc:platform:rl:${key.id}`, 1);
    await new Promise((r) => setTimeout(r, 20));
    expect((await platformGet(a, '/v1/me', key.key)).status).toBe(200);
    expect((await platformGet(b, '/v1/me', key.key)).status).toBe(200);
    expect(await client.get(`svc:platform:rl:${key.id}`)).toBe('2');
  });

  maybe('still answers an invalid key 401 and keeps no counter for it', async () => {
    const before = await client.dbsize();
    const statuses = await burst(a, '/v1/me', `svc_sk_${'R'.repeat(43)}`, 130, 13);
    expect(statuses).toEqual(Array(130).fill(401));
    expect(await client.dbsize()).toBe(before);
  });
});
