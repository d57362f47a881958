import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import request from 'supertest';
import { createService } from '../server/service.js';
import { SUBGRAPH_NAMES } from '../subgraphs/index.js';
import { serveSubgraph } from '../server/subgraph.js';
import { accessToken, createTribe, signupUser } from './factory.js';
import { gql, testConfig, type TestService } from './support.js';

const SECRET = 'internal-secret-internal-secret-0123456789';

describe('gateway in distributed mode', () => {
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

  it('serves GraphQL across subgraphs over HTTP with the caller passed along', async () => {
    const owner = await signupUser(t);
    const tribe = await createTribe(t, owner);
    const created = await gql(t, owner, 'mutation($c: ID!){ createPost(communityId: $c, input: {content: "remote"}){ id author { username } community { memberCount viewerRole } } }', {
      c: tribe.id,
    });
    expect(created.errors).toBeUndefined();
    expect(created.data.createPost.author.username).toBe(owner.username);
    expect(created.data.createPost.community).toEqual({ memberCount: 1, viewerRole: 'owner' });
    const me = await gql(t, owner, '{ me { id email } }');
    expect(me.data.me).toEqual({ id: owner.id, email: owner.email });
  });

  it('passes the caller’s session along: changePassword keeps that session and ends the other one', async () => {
    const user = await signupUser(t);
    const login = await t.api.post('/auth/login').send({ email: user.email, password: user.password });
    const other = { cookie: String(login.headers['set-cookie'][0]).split(';')[0] };
    const changed = await gql(t, user, 'mutation($c: String!, $n: String!){ changePassword(currentPassword: $c, newPassword: $n) }', {
      c: user.password,
      n: 'a remote new password',
    });
    expect(changed).toEqual({ data: { changePassword: true } });
    expect((await gql(t, user, '{ me { id } }')).data.me).toEqual({ id: user.id });
    expect((await gql(t, other, '{ me { id } }')).data.me).toBeNull();
  });

  it('resolves me.memberships in the members subgraph over HTTP', async () => {
    const owner = await signupUser(t);
    const tribe = await createTribe(t, owner);
    const out = await gql(t, owner, '{ me { memberships(first: 5) { edges { node { community { id } role } } pageInfo { hasNextPage } } } }');
    expect(out).toEqual({ data: { me: { memberships: { edges: [{ node: { community: { id: tribe.id }, role: 'owner' } }], pageInfo: { hasNextPage: false } } } } });
  });

  it('keeps domain error codes across the HTTP hop', async () => {
    const out = await gql(t, null, 'mutation { createCommunity(input: {name: "x", handle: "remote-anon"}) { id } }');
    expect(out.errors?.[0].extensions?.reason).toBe('unauthorized');
  });

  it('serves the resource API through remote subgraphs', async () => {
    const owner = await signupUser(t);
    const tribe = await createTribe(t, owner);
    const token = await accessToken(t, owner);
    const res = await t.api.get(`/v1/communities/${tribe.id}`).set('authorization', `Bearer ${token}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: tribe.id, handle: tribe.handle, member_count: 1, viewer_role: 'owner' });
  });

  it('refuses subgraph calls without the internal secret', async () => {
    const url = `http://127.0.0.1:${subgraphs[0].port}`;
    const none = await request(url).post('/graphql').send({ query: '{ __typename }' });
    expect(none.status).toBe(401);
    const wrong = await request(url).post('/graphql').set('x-svc-internal-secret', `${SECRET}x`).send({ query: '{ __typename }' });
    expect(wrong.status).toBe(401);
    const forged = await request(url)
      .post('/graphql')
      .set('x-svc-caller', JSON.stringify({ userId: '00000000-0000-0000-0000-000000000000' }))
      .send({ query: '{ __typename }' });
    expect(forged.status).toBe(401);
    const right = await request(url).post('/graphql').set('x-svc-internal-secret', SECRET).set('content-type', 'application/json').send({ query: '{ __typename }' });
    expect(right.status).toBe(200);
    expect(right.body.data).toEqual({ __typename: 'Query' });
  });
});
