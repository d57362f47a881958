import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import request from 'supertest';
import { createService } from '../server/service.js';
import { SUBGRAPH_NAMES } from '../subgraphs/index.js';
import { serveSubgraph } from '../server/subgraph.js';
import { createKey, createTribe, join, seedOrder, signupUser } from './factory.js';
import { platformGet, testConfig, type TestService } from './support.js';
import { forbiddenBody } from './expected.js';

const SECRET = 'internal-secret-internal-secret-0123456789';

describe('Platform API with every subgraph on its own port', () => {
  let t: TestService;
  let subgraphs: Array<{ port: number; stop(): Promise<void> }>;

  beforeAll(async () => {
    const config = testConfig({ INTERNAL_SECRET: SECRET, HOST: '127.0.0.1' });
    subgraphs = await Promise.all(SUBGRAPH_NAMES.map((name) => serveSubgraph(name, config, 0)));
    const urls = SUBGRAPH_NAMES.map((name, i) => `${name}=http://127.0.0.1:${subgraphs[i].port}/graphql`).join(',');
    const service = await createService(testConfig({ INTERNAL_SECRET: SECRET, SUBGRAPH_URLS: urls }), { log: pino({ level: 'silent' }) });
    t = Object.assign(service, { api: request(service.http) });
  });
  afterAll(async () => {
    await t.stop();
    await Promise.all(subgraphs.map((s) => s.stop()));
  });

  it('carries the API key across the HTTP hop: tribe, scopes and entities resolve in other subgraphs', async () => {
    const owner = await signupUser(t);
    const other = await signupUser(t);
    const tribe = await createTribe(t, owner, { name: 'Remote tribe' });
    const otherTribe = await createTribe(t, other);
    await join(t, other, tribe.handle);
    await seedOrder(t, tribe.id, other.id);
    await seedOrder(t, otherTribe.id, other.id, { amountCents: 1 });
    const key = await createKey(t, owner, tribe.handle, ['members:read', 'orders:read']);

    const me = await platformGet(t, '/v1/me', key.key);
    expect(me.status).toBe(200);
    expect(me.body.community).toEqual({ id: tribe.id, handle: tribe.handle, name: 'Remote tribe' });

    const members = await platformGet(t, '/v1/members', key.key);
    expect(members.status).toBe(200);
    expect(members.body.data.map((m: { username: string }) => m.username).sort()).toEqual([owner.username, other.username].sort());

    const orders = await platformGet(t, '/v1/orders', key.key);
    expect(orders.body.data).toEqual([expect.objectContaining({ amountCents: 4990, buyer: { userId: other.id, username: other.username, displayName: expect.any(String) } })]);

    const posts = await platformGet(t, '/v1/posts', key.key);
    expect(posts.status).toBe(403);
    expect(posts.body).toEqual(forbiddenBody('posts:read'));
  });
});
