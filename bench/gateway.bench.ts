// Issue 15: one GraphQL query through the gateway beside the same query executed directly on the owning subgraph's
// executable schema, in the same run, on the real PostgreSQL and the same rows:
// 1. in process, 16 at a time: the gateway's `graph.execute` (Apollo Server, the gateway's executor) vs graphql-js
//    `execute` on the content subgraph's schema with the same context: the cost of the gateway layer alone;
// 2. over HTTP, 16 connections: POST /graphql with a session cookie vs a bare node:http handler running that
//    `execute` (JSON.stringify), the same load generator: what a client sees.
//
// The anchor resolves the caller once (no session lookup per request) and caches the parsed document: it does at
// most the service's work, and none of its HTTP stack, Apollo Server, gateway or authentication.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { execute, parse } from 'graphql';
import pg from 'pg';
import { buildSubgraph } from '../subgraphs/index.js';
import { BENCH_DATABASE_URL, load, report, startBenchService, type LoadResult } from './lib.js';

/** Only the content subgraph: its query plan is one fetch. */
const QUERY = `query Posts($communityId: ID!) {
  posts(communityId: $communityId, perPage: 50) {
    items { id community { id } body mediaUrls visibility status isPinned pinnedAt publishedAt createdAt updatedAt }
    page perPage hasMore
  }
}`;

async function json(base: string, path: string, init: RequestInit = {}) {
  const res = await fetch(base + path, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
}

export default async function gatewayBench(): Promise<void> {
  const { service, base } = await startBenchService({ WORKER_ENABLED: 'false' });
  const pool = new pg.Pool({ connectionString: BENCH_DATABASE_URL, max: 2 });
  try {
    const tag = randomBytes(4).toString('hex');
    const signup = await json(base, '/auth/signup', {
      method: 'POST',
      body: JSON.stringify({ email: `gw_${tag}@example.com`, password: 'bench-password-1', username: `gw_${tag}`, displayName: 'Gateway bench' }),
    });
    const userId: string = signup.body.user.id;
    const cookie = String(signup.headers.get('set-cookie')).split(';')[0];
    const created = await json(base, '/graphql', {
      method: 'POST',
      headers: { cookie },
      body: JSON.stringify({ query: `mutation { createCommunity(input: {name: "Gateway bench ${tag}", handle: "gw-${tag}"}) { id } }` }),
    });
    const communityId: string = created.body.data.createCommunity.id;
    await pool.query(
      `insert into posts (community_id, author_id, body, published_at, created_at)
       select $1, $2, '<p>post ' || g || '</p>', now(), now() - (g || ' seconds')::interval from generate_series(1, 500) g`,
      [communityId, userId],
    );
    const body = JSON.stringify({ query: QUERY, variables: { communityId } });

    // The anchor: the content subgraph's schema, executed by graphql-js in a bare node:http handler.
    const schema = buildSubgraph('content');
    const document = parse(QUERY);
    const caller = { userId };
    const bare = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const { variables } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        Promise.resolve(execute({ schema, document, variableValues: variables, contextValue: { app: service.deps, caller, requestId: randomUUID() } }))
          .then((result) => {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify(result));
          })
          .catch(() => {
            res.writeHead(500);
            res.end();
          });
      });
    });
    await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
    const bareBase = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;

    // Both answer the same data.
    const viaGateway = await json(base, '/graphql', { method: 'POST', headers: { cookie }, body });
    const direct = await json(bareBase, '/', { method: 'POST', body });
    if (viaGateway.status !== 200 || viaGateway.body.errors || JSON.stringify(viaGateway.body) !== JSON.stringify(direct.body)) {
      throw new Error(`the gateway and the subgraph answer differently: ${JSON.stringify(viaGateway.body).slice(0, 300)} / ${JSON.stringify(direct.body).slice(0, 300)}`);
    }

    // 1. In process.
    const ctx = { app: service.deps, caller, requestId: 'bench' };
    const variables = { communityId };
    const gatewayCheck = await service.graph.execute(ctx, QUERY, variables);
    if (gatewayCheck.errors || JSON.stringify(gatewayCheck) !== JSON.stringify(direct.body)) throw new Error('in process: the gateway answers differently');
    const viaExecute = () => service.graph.execute(ctx, QUERY, variables);
    const onSubgraph = () => Promise.resolve(execute({ schema, document, variableValues: variables, contextValue: ctx }));
    const atStart: { direct?: number } = { ...service.graph.direct };
    await inProcess(viaExecute, 2);
    await inProcess(onSubgraph, 2);
    const gatewayRuns: LoadResult[] = [];
    const subgraphRuns: LoadResult[] = [];
    for (let round = 0; round < 2; round += 1) {
      gatewayRuns.push(await inProcess(viaExecute, 5));
      subgraphRuns.push(await inProcess(onSubgraph, 5));
    }
    const best = (runs: LoadResult[]) => [...runs].sort((a, b) => b.rps - a.rps)[0];
    report('GraphQL posts(perPage: 50) (content only), in process, 16 at a time: through the gateway (graph.execute) vs execute() on the content subgraph schema', best(gatewayRuns), best(subgraphRuns), 0.8);
    console.log(`  calls the gateway served on the direct path: ${(service.graph.direct?.direct ?? 0) - (atStart.direct ?? 0)}`);
    console.log(`  runs gateway : ${gatewayRuns.map((r) => r.rps.toFixed(0)).join(', ')} per s; subgraph: ${subgraphRuns.map((r) => r.rps.toFixed(0)).join(', ')} per s (best of each reported)`);

    // 2. Over HTTP.
    const request = { method: 'POST' as const, body };
    const run = async (url: string, headers: Record<string, string>): Promise<LoadResult> => {
      await load(url, headers, 2, 16, request); // warm-up
      return load(url, headers, 8, 16, request);
    };
    const before: { direct?: number; fallback?: number } = { ...service.graph.direct };
    const subject = await run(`${base}/graphql`, { 'content-type': 'application/json', cookie });
    const served = { direct: (service.graph.direct?.direct ?? 0) - (before.direct ?? 0), fallback: (service.graph.direct?.fallback ?? 0) - (before.fallback ?? 0) };
    const anchor = await run(bareBase, { 'content-type': 'application/json' });
    await new Promise<void>((resolve) => bare.close(() => resolve()));

    report('GraphQL posts(perPage: 50) (content only), over HTTP: POST /graphql (session cookie) through the gateway vs the same query on the content subgraph schema in bare node:http', subject, anchor);
    console.log(`  requests the gateway served on the direct path: ${served.direct}, run again through the gateway after an error: ${served.fallback}`);
  } finally {
    await pool.end();
    await service.stop();
  }
}

/** Runs `fn` 16 at a time for `seconds`: completions per second and the p99 latency (ms). */
async function inProcess(fn: () => Promise<{ errors?: unknown }>, seconds: number, concurrency = 16): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  const lane = async () => {
    while (performance.now() < end) {
      const started = performance.now();
      const result = await fn();
      if (result.errors) errors += 1;
      latencies.push(performance.now() - started);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, lane));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { rps: latencies.length / elapsed, p99: Math.round(latencies[Math.floor(latencies.length * 0.99)] ?? 0), errors, non2xx: 0 };
}
