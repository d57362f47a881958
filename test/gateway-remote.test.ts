import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import request from 'supertest';
import { createService } from '../server/service.js';
import { SUBGRAPH_NAMES, type SubgraphName } from '../subgraphs/index.js';
import { callerAssertionKey, signCallerAssertion } from '../subgraphs/kernel/caller-assertion.js';
import { serveSubgraph } from '../server/subgraph.js';
import { accessToken, createTribe, signupUser } from './factory.js';
import { gql, testConfig, type TestService } from './support.js';

const SECRET = 'internal-secret-internal-secret-0123456789';
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

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
    const callerOnly = await request(url)
      .post('/graphql')
      .set('x-svc-caller', JSON.stringify({ userId: '00000000-0000-0000-0000-000000000000' }))
      .send({ query: '{ __typename }' });
    expect(callerOnly.status).toBe(401);
    const right = await request(url).post('/graphql').set('x-svc-internal-secret', SECRET).set('content-type', 'application/json').send({ query: '{ __typename }' });
    expect(right.status).toBe(200);
    expect(right.body.data).toEqual({ __typename: 'Query' });
  });

  describe('the caller between gateway and subgraphs', () => {
    /** A subgraph's own `/graphql`, called as a gateway would (the internal secret), with `headers`. */
    const callSubgraph = (name: SubgraphName, query: string, headers: Record<string, string> = {}) => {
      const req = request(`http://127.0.0.1:${subgraphs[SUBGRAPH_NAMES.indexOf(name)].port}`).post('/graphql').set('x-svc-internal-secret', SECRET);
      for (const [k, v] of Object.entries(headers)) req.set(k, v);
      return req.send({ query });
    };
    const signedFor = async (audience: string, userId: string, options: { now?: Date; secret?: string } = {}) =>
      signCallerAssertion(await callerAssertionKey(options.secret ?? SECRET), audience, { caller: { userId }, apiKey: null }, options.now);

    it('ignores a client-sent x-svc-caller: through the gateway, and at a subgraph even with the internal secret', async () => {
      const victim = await signupUser(t);
      const forged = JSON.stringify({ userId: victim.id });
      const viaGateway = await t.api.post('/graphql').set('x-svc-caller', forged).send({ query: '{ me { id email } }' });
      expect(viaGateway.status).toBe(200);
      expect(viaGateway.body.data).toEqual({ me: null });
      const atSubgraph = await callSubgraph('identity', '{ me { id email } }', { 'x-svc-caller': forged });
      expect(atSubgraph.status).toBe(200);
      expect(atSubgraph.body).toEqual({ data: { me: null } });
    });

    it('takes the caller from an assertion signed for that subgraph', async () => {
      const user = await signupUser(t);
      const out = await callSubgraph('identity', '{ me { id email } }', { 'x-svc-caller-assertion': await signedFor('identity', user.id) });
      expect(out.status).toBe(200);
      expect(out.body).toEqual({ data: { me: { id: user.id, email: user.email } } });
    });

    it.each([
      ['unsigned', async (userId: string) => `${b64({ alg: 'none', typ: 'svc-caller+jwt' })}.${b64({ iss: 'svc-gateway', aud: 'identity', sub: userId, iat: now(), exp: now() + 30 })}.`],
      ['expired', (userId: string) => signedFor('identity', userId, { now: new Date(Date.now() - 120_000) })],
      ['made for another subgraph', (userId: string) => signedFor('communities', userId)],
      ['signed with another key', (userId: string) => signedFor('identity', userId, { secret: `${SECRET}-other` })],
      ['the old plain JSON', async (userId: string) => JSON.stringify({ userId })],
    ])('refuses an assertion that is %s: 401 UNAUTHENTICATED, not an anonymous answer', async (_what, make) => {
      const user = await signupUser(t);
      const out = await callSubgraph('identity', '{ me { id } }', { 'x-svc-caller-assertion': await make(user.id) });
      expect(out.status).toBe(401);
      expect(out.body.data).toBeUndefined();
      expect(out.body.errors).toEqual([{ message: expect.stringContaining('caller assertion was refused'), extensions: { code: 'UNAUTHENTICATED' } }]);
    });

    it('resolves a credential another gateway forwarded (the session cookie, a bearer access token), internal secret still required', async () => {
      const user = await signupUser(t);
      const token = await accessToken(t, user);
      const expected = { data: { me: { id: user.id, email: user.email } } };
      expect((await callSubgraph('identity', '{ me { id email } }', { cookie: user.cookie })).body).toEqual(expected);
      expect((await callSubgraph('identity', '{ me { id email } }', { authorization: `Bearer ${token}` })).body).toEqual(expected);
      expect((await callSubgraph('identity', '{ me { id email } }', { authorization: 'Bearer not-a-token', cookie: user.cookie })).body).toEqual({ data: { me: null } });
      const port = subgraphs[SUBGRAPH_NAMES.indexOf('identity')].port;
      const withoutSecret = await request(`http://127.0.0.1:${port}`).post('/graphql').set('cookie', user.cookie).send({ query: '{ me { id } }' });
      expect(withoutSecret.status).toBe(401);
    });

    it('answers a bearer access token on /graphql as the session cookie of the same user', async () => {
      const user = await signupUser(t);
      const token = await accessToken(t, user);
      const out = await t.api.post('/graphql').set('authorization', `Bearer ${token}`).send({ query: '{ me { id email } }' });
      expect(out.body.data).toEqual({ me: { id: user.id, email: user.email } });
    });
  });
});
