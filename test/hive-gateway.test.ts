import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createGatewayRuntime, type GatewayRuntime } from '@graphql-hive/gateway-runtime';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { composeSupergraph } from '../gateway/src/compose.js';
import { hiveGatewayConfig } from '../scripts/hive-gateway.js';
import { serveSubgraph } from '../server/subgraph.js';
import { SUBGRAPH_NAMES } from '../subgraphs/index.js';
import { accessToken, createPost, createTribe, join, signupUser, type TestUser } from './factory.js';
import { startService, testConfig, type TestService } from './support.js';

const SECRET = 'internal-secret-internal-secret-0123456789';

/** Signed in, one query over identity, members, communities and content (a private tribe's members-only view). */
const CROSS = `query Cross($post: ID!, $tribe: ID!) {
  me { id username email memberships(first: 5) { edges { node { role community { id handle name memberCount viewerRole } } } } }
  post(id: $post) { id body status author { id username } community { id handle viewerRole } commentCount }
  community(id: $tribe) { id handle isPublic memberCount viewerRole }
}`;

describe('Hive Gateway over the subgraphs in distributed mode', () => {
  let t: TestService;
  let subgraphs: Array<{ port: number; stop(): Promise<void> }>;
  const gateways: Array<{ runtime: GatewayRuntime; server: Server }> = [];
  let hive: ReturnType<typeof request>;
  /** Hive Gateway configured carelessly: every client header goes to every subgraph (what the README warns against). */
  let careless: ReturnType<typeof request>;
  let owner: TestUser;
  let member: TestUser;
  let tribe: { id: string; handle: string };
  let post: { id: string };

  const listen = async (runtime: GatewayRuntime) => {
    const server = createServer(runtime);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    gateways.push({ runtime, server });
    return request(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  };

  beforeAll(async () => {
    subgraphs = await Promise.all(SUBGRAPH_NAMES.map((name) => serveSubgraph(name, testConfig({ INTERNAL_SECRET: SECRET, HOST: '127.0.0.1' }), 0)));
    const subgraphUrls = Object.fromEntries(SUBGRAPH_NAMES.map((name, i) => [name, `http://127.0.0.1:${subgraphs[i].port}/graphql`]));
    const urls = Object.entries(subgraphUrls).map(([name, url]) => `${name}=${url}`).join(',');
    // A generous limit per subgraph call: the first query plans and compiles cold on a machine shared with other tests.
    t = await startService({ INTERNAL_SECRET: SECRET, SUBGRAPH_URLS: urls, SUBGRAPH_TIMEOUT_MS: '30000' });
    const config = hiveGatewayConfig({ supergraph: composeSupergraph(), subgraphUrls, internalSecret: SECRET });
    hive = await listen(createGatewayRuntime({ ...config, logging: false }));
    careless = await listen(
      createGatewayRuntime({
        ...config,
        logging: false,
        propagateHeaders: {
          fromClientToSubgraphs: ({ request: incoming }) => ({
            ...Object.fromEntries([...incoming.headers].filter(([name]) => !['host', 'content-length', 'connection', 'accept-encoding'].includes(name))),
            'x-svc-internal-secret': SECRET,
          }),
        },
      }),
    );
    owner = await signupUser(t);
    member = await signupUser(t);
    tribe = await createTribe(t, owner, { isPublic: false });
    const invite = await t.api
      .post('/graphql')
      .set('cookie', owner.cookie)
      .send({ query: 'mutation($c: ID!){ createInvite(communityId: $c) }', variables: { c: tribe.id } });
    await join(t, member, tribe.handle, invite.body.data?.createInvite);
    post = await createPost(t, owner, tribe.id, { visibility: 'members' });
  }, 60_000);

  afterAll(async () => {
    for (const { runtime, server } of gateways) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await runtime.dispose();
    }
    await t?.stop();
    await Promise.all((subgraphs ?? []).map((s) => s.stop()));
  });

  /** The same operation through the project's gateway and through Hive Gateway, with the same headers. */
  const both = async (headers: Record<string, string>, query = CROSS, variables: Record<string, unknown> = { post: post.id, tribe: tribe.id }) => {
    const send = (client: ReturnType<typeof request>) => {
      const req = client.post('/graphql').set('content-type', 'application/json');
      for (const [k, v] of Object.entries(headers)) req.set(k, v);
      return req.send({ query, variables });
    };
    const [ours, theirs] = await Promise.all([send(t.api), send(hive)]);
    expect([ours.status, theirs.status]).toEqual([200, 200]);
    return { ours: ours.body, theirs: theirs.body };
  };

  it('answers a signed-in cross-subgraph query with the session cookie exactly as the project’s gateway does', async () => {
    const { ours, theirs } = await both({ cookie: member.cookie });
    expect(ours.errors).toBeUndefined();
    expect(ours.data.me).toMatchObject({ id: member.id, email: member.email, memberships: { edges: [{ node: { role: 'member', community: { id: tribe.id } } }] } });
    expect(ours.data.post).toMatchObject({ id: post.id, author: { id: owner.id }, community: { id: tribe.id, viewerRole: 'member' } });
    expect(theirs).toEqual({ data: ours.data });
  });

  it('answers a signed-in cross-subgraph query with a bearer access token exactly as the project’s gateway does', async () => {
    const token = await accessToken(t, owner);
    const { ours, theirs } = await both({ authorization: `Bearer ${token}` });
    expect(ours.errors).toBeUndefined();
    expect(ours.data.me).toMatchObject({ id: owner.id, email: owner.email });
    expect(ours.data.community).toMatchObject({ id: tribe.id, viewerRole: 'owner', memberCount: 2 });
    expect(theirs).toEqual({ data: ours.data });
  });

  it('answers a signed-in mutation across subgraphs with the cookie: the write is the caller’s', async () => {
    const out = await hive
      .post('/graphql')
      .set('cookie', member.cookie)
      .send({ query: 'mutation($c: ID!){ createPost(communityId: $c, input: {content: "via hive"}){ author { id } community { viewerRole } } }', variables: { c: tribe.id } });
    expect(out.body).toEqual({ data: { createPost: { author: { id: member.id }, community: { viewerRole: 'member' } } } });
  });

  it('answers an anonymous request as the project’s gateway does: the private tribe’s post is hidden', async () => {
    const { ours, theirs } = await both({});
    expect(ours.data).toMatchObject({ me: null, post: null });
    expect(theirs.data).toEqual(ours.data);
  });

  it('treats a forged x-svc-caller as anonymous, even through a gateway that forwards every client header', async () => {
    const forged = JSON.stringify({ userId: owner.id, sessionId: 'x' });
    for (const client of [hive, careless]) {
      const out = await client.post('/graphql').set('x-svc-caller', forged).send({ query: CROSS, variables: { post: post.id, tribe: tribe.id } });
      expect(out.status).toBe(200);
      expect(out.body.data).toMatchObject({ me: null, post: null, community: { viewerRole: null } });
    }
  });

  it('never takes a client-sent x-svc-caller-assertion as a caller: refused, not signed in', async () => {
    const out = await careless.post('/graphql').set('x-svc-caller-assertion', 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.').send({ query: '{ me { id } }' });
    expect(out.body.data?.me ?? null).toBeNull();
    expect(out.body.errors?.length).toBeGreaterThan(0);
  });
});
