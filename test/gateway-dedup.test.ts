// Issue 32: in distributed mode the gateway shares one subgraph call among identical query fetches of one caller in
// flight at once (SUBGRAPH_DEDUPLICATE_INFLIGHT, default on), never across callers and never for a mutation. The
// subgraphs run in this process on ports of their own; the content subgraph sits behind a counting proxy that holds
// each call 1.5 s, so that concurrent requests are in flight together (on a loaded machine too).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveSubgraph } from '../server/subgraph.js';
import { SUBGRAPH_NAMES } from '../subgraphs/index.js';
import { createPost, createTribe, join, signupUser, type TestUser } from './factory.js';
import { gql, startService, testConfig, type TestService } from './support.js';

const SECRET = 'internal-secret-internal-secret-0123456789';
const POST = 'query($id: ID!){ post(id: $id){ id body reactions { total viewerReaction } } }';

/** A proxy to `target` that counts the operations it forwards (by their first word) and holds each one `delayMs`. */
async function countingProxy(target: number, delayMs: number) {
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const query = String((JSON.parse(body.toString() || '{}') as { query?: string }).query ?? '');
      seen.push(query.trim().split(/[\s({]/)[0] ?? '');
      setTimeout(() => {
        const forward = httpRequest({ host: '127.0.0.1', port: target, path: req.url, method: req.method, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        forward.end(body);
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.each([
  ['on (the default)', {}, true],
  ['off (SUBGRAPH_DEDUPLICATE_INFLIGHT=false)', { SUBGRAPH_DEDUPLICATE_INFLIGHT: 'false' }, false],
])('distributed mode, in-flight deduplication %s', (_name, env: Record<string, string>, on: boolean) => {
  let subgraphs: Array<{ port: number; stop(): Promise<void> }>;
  let proxy: Awaited<ReturnType<typeof countingProxy>>;
  let t: TestService;
  let owner: TestUser;
  let member: TestUser;
  let post: { id: string };

  beforeAll(async () => {
    subgraphs = await Promise.all(SUBGRAPH_NAMES.map((name) => serveSubgraph(name, testConfig({ INTERNAL_SECRET: SECRET, HOST: '127.0.0.1' }), 0)));
    proxy = await countingProxy(subgraphs[SUBGRAPH_NAMES.indexOf('content')]!.port, 1_500);
    const urls = SUBGRAPH_NAMES.map((name, i) => `${name}=http://127.0.0.1:${name === 'content' ? proxy.port : subgraphs[i]!.port}/graphql`).join(',');
    t = await startService({ INTERNAL_SECRET: SECRET, SUBGRAPH_URLS: urls, SUBGRAPH_TIMEOUT_MS: '30000', ...env });
    owner = await signupUser(t);
    member = await signupUser(t);
    const tribe = await createTribe(t, owner);
    await join(t, member, tribe.handle);
    post = await createPost(t, owner, tribe.id);
    ok(await gql(t, member, 'mutation($t: ReactionTarget!, $k: ReactionKind!){ react(target: $t, kind: $k){ total } }', { t: { postId: post.id }, k: 'LIKE' }));
  }, 120_000);

  afterAll(async () => {
    await t?.stop();
    await proxy?.close();
    await Promise.all((subgraphs ?? []).map((s) => s.stop()));
  });

  const ok = (out: { data?: any; errors?: unknown }) => {
    expect(out.errors).toBeUndefined();
    return out.data;
  };
  /** The content operations the proxy forwarded while `run` ran. */
  const forwardedDuring = async (run: () => Promise<unknown>) => {
    const before = proxy.seen.length;
    await run();
    return proxy.seen.slice(before);
  };

  it(`8 identical queries of one caller at once: ${on ? 'one content call, shared' : 'eight content calls'}, each answer whole`, async () => {
    let answers: any[] = [];
    const calls = await forwardedDuring(async () => {
      answers = await Promise.all(Array.from({ length: 8 }, () => gql(t, member, POST, { id: post.id })));
    });
    expect(calls).toEqual(Array(on ? 1 : 8).fill('query'));
    for (const a of answers) expect(ok(a).post).toEqual({ id: post.id, body: expect.any(String), reactions: { total: 1, viewerReaction: 'LIKE' } });
  });

  it('the same query of two callers at once: one call each, each answered for its own caller', async () => {
    let mine: any;
    let theirs: any;
    const calls = await forwardedDuring(async () => {
      [mine, theirs] = await Promise.all([gql(t, member, POST, { id: post.id }), gql(t, owner, POST, { id: post.id })]);
    });
    expect(calls).toEqual(['query', 'query']);
    expect(ok(mine).post.reactions.viewerReaction).toBe('LIKE');
    expect(ok(theirs).post.reactions.viewerReaction).toBeNull();
  });

  it('identical mutations of one caller at once are each sent', async () => {
    const calls = await forwardedDuring(() =>
      Promise.all(Array.from({ length: 3 }, () => gql(t, member, 'mutation($t: ReactionTarget!, $k: ReactionKind!){ react(target: $t, kind: $k){ total } }', { t: { postId: post.id }, k: 'LIKE' }))),
    );
    expect(calls.filter((c) => c === 'mutation')).toHaveLength(3);
  });
});
