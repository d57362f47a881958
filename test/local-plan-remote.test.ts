// The local plan over HTTP (gateway/src/local-plan.ts with `InternalRemoteSource.fetchFast`): in distributed mode a
// query of several subgraphs sent again runs its fetches without the gateway's plan execution, answers exactly what
// the gateway answers, and when a fetch answers an error (or a failure) the gateway answers from that same answer:
// no subgraph is called twice for one fetch.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import request from 'supertest';
import { createService } from '../server/service.js';
import { serveSubgraph } from '../server/subgraph.js';
import { SUBGRAPH_NAMES } from '../subgraphs/index.js';
import { createPost, createTribe, signupUser, type TestUser } from './factory.js';
import { gql, testConfig, type TestService } from './support.js';

const SECRET = 'internal-secret-internal-secret-0123456789';
const WITH_AUTHOR = 'query WithAuthor($c: ID!){ posts(communityId: $c, perPage: 5){ items { id body author { username } community { name } } hasMore } }';
/** The same operation in another text: a document the gateway has not planned yet, so it runs through the gateway. */
const WITH_AUTHOR_FRESH = (n: number) => `${WITH_AUTHOR}${' '.repeat(n)}`;

/**
 * A real HTTP proxy in front of the identity subgraph: counts the `_entities` fetches it is sent, and answers the
 * next one itself when told to (a GraphQL error, or a 500).
 */
function identityProxy(target: string) {
  const state = { entities: 0, next: null as null | 'error' | '500' };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (body.includes('_entities')) {
        state.entities += 1;
        const mode = state.next;
        state.next = null;
        if (mode === 'error') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: [{ message: 'identity refused', extensions: { code: 'FORBIDDEN' } }] }));
          return;
        }
        if (mode === '500') {
          res.writeHead(500, { 'content-type': 'text/plain' }).end('down');
          return;
        }
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && name !== 'host' && name !== 'content-length') headers[name] = value;
      const upstream = await fetch(target, { method: 'POST', headers, body });
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' }).end(await upstream.text());
    });
  });
  return { server, state };
}

describe('the local plan over HTTP (distributed mode)', () => {
  let t: TestService;
  let subgraphs: Array<{ port: number; stop(): Promise<void> }>;
  let proxy: ReturnType<typeof identityProxy>;
  let owner: TestUser;
  let tribe: { id: string; name: string };

  beforeAll(async () => {
    const config = testConfig({ INTERNAL_SECRET: SECRET, HOST: '127.0.0.1' });
    subgraphs = await Promise.all(SUBGRAPH_NAMES.map((name) => serveSubgraph(name, config, 0)));
    const identityAt = SUBGRAPH_NAMES.indexOf('identity');
    proxy = identityProxy(`http://127.0.0.1:${subgraphs[identityAt]!.port}/graphql`);
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    const proxyPort = (proxy.server.address() as AddressInfo).port;
    const urls = SUBGRAPH_NAMES.map((name, i) => `${name}=http://127.0.0.1:${name === 'identity' ? proxyPort : subgraphs[i]!.port}/graphql`).join(',');
    const service = await createService(testConfig({ INTERNAL_SECRET: SECRET, SUBGRAPH_URLS: urls }), { log: pino({ level: 'silent' }) });
    t = Object.assign(service, { api: request(service.http) });
    owner = await signupUser(t);
    tribe = await createTribe(t, owner);
    await createPost(t, owner, tribe.id);
    await createPost(t, owner, tribe.id);
  });
  afterAll(async () => {
    await t.stop();
    await new Promise((resolve) => proxy.server.close(resolve));
    await Promise.all(subgraphs.map((s) => s.stop()));
  });

  /** Sends a text until it runs as a local plan (the gateway plans it first, then the route is learnt). */
  const untilLocal = async (text: string) => {
    for (let i = 0; i < 10; i += 1) {
      const before = t.graph.direct.local;
      const out = await gql(t, owner, text, { c: tribe.id });
      if (t.graph.direct.local > before) return out;
    }
    throw new Error('never ran as a local plan');
  };

  it('runs a query of two subgraphs again as a local plan over HTTP, with the answer the gateway gave and one fetch per subgraph', async () => {
    const viaGateway = await gql(t, owner, WITH_AUTHOR_FRESH(1), { c: tribe.id });
    expect(viaGateway.errors).toBeUndefined();
    expect(viaGateway.data.posts.items).toHaveLength(2);
    expect(viaGateway.data.posts.items.map((p: any) => p.author.username)).toEqual([owner.username, owner.username]);

    const local = await untilLocal(WITH_AUTHOR);
    expect(local).toEqual(viaGateway);
    const before = { entities: proxy.state.entities, local: t.graph.direct.local, fallback: t.graph.direct.fallback };
    const again = await gql(t, owner, WITH_AUTHOR, { c: tribe.id });
    expect(again).toEqual(viaGateway);
    expect(t.graph.direct.local).toBe(before.local + 1);
    expect(t.graph.direct.fallback).toBe(before.fallback);
    expect(proxy.state.entities).toBe(before.entities + 1);
  });

  it('answers a fetch that answered an error as the gateway does, without sending it again', async () => {
    proxy.state.next = 'error';
    const entities = proxy.state.entities;
    const viaGateway = await gql(t, owner, WITH_AUTHOR_FRESH(2), { c: tribe.id });
    expect(proxy.state.entities).toBe(entities + 1);
    expect(viaGateway.errors?.[0]).toMatchObject({ message: 'identity refused', extensions: { code: 'FORBIDDEN' } });

    await untilLocal(WITH_AUTHOR);
    const before = { entities: proxy.state.entities, fallback: t.graph.direct.fallback };
    proxy.state.next = 'error';
    const fellThrough = await gql(t, owner, WITH_AUTHOR, { c: tribe.id });
    expect(fellThrough).toEqual(viaGateway);
    expect(t.graph.direct.fallback).toBe(before.fallback + 1);
    expect(proxy.state.entities).toBe(before.entities + 1);
  });

  it('answers a subgraph that fails (500) with SERVICE_UNAVAILABLE as the gateway does, calling it once', async () => {
    const send = (query: string) => t.api.post('/graphql').set('content-type', 'application/json').set('cookie', owner.cookie).send({ query, variables: { c: tribe.id } });
    proxy.state.next = '500';
    const gatewayAnswer = await send(WITH_AUTHOR_FRESH(3));
    const viaGateway = gatewayAnswer.body as { data?: unknown; errors?: Array<{ message: string; extensions?: Record<string, unknown> }> };
    expect(viaGateway.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');

    await untilLocal(WITH_AUTHOR);
    const before = { entities: proxy.state.entities, fallback: t.graph.direct.fallback };
    proxy.state.next = '500';
    const failed = await send(WITH_AUTHOR);
    expect(proxy.state.entities).toBe(before.entities + 1);
    expect(failed.status).toBe(gatewayAnswer.status);
    expect(t.graph.direct.fallback).toBe(before.fallback + 1);
    expect(failed.body.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');
    expect(failed.body.errors?.[0]?.message).toBe(viaGateway.errors?.[0]?.message);
    expect(failed.body.data).toEqual(viaGateway.data);
    // The proxy fails once: the next request is whole again.
    expect((await gql(t, owner, WITH_AUTHOR, { c: tribe.id })).errors).toBeUndefined();
  });
});
