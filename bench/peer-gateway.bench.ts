// Issue 32: the project's gateway beside Hive Gateway in distributed mode, on the same subgraph processes. The split
// deployment (scripts/split.ts, from the sources: one process per subgraph, no workers) serves the subgraphs and the
// project's gateway with its in-flight deduplication off (SUBGRAPH_DEDUPLICATE_INFLIGHT=false); one more process of
// the project's gateway (server/web.ts) has its default, deduplication on. Three Hive Gateway processes
// (scripts/hive-gateway.ts) front the same subgraphs: its JavaScript planner and Hive Router's Rust planner
// (@graphql-hive/router-runtime), both with the deduplication of identical in-flight subgraph requests off (like for
// like with the first), and Hive's defaults (the JavaScript planner, deduplication on; beside the second). The loads
// are the signed-in cross-subgraph `homeFeed(first: 20)` of bench/feed.bench.ts (the social data set of
// bench/seed-social.ts) on every gateway, and a signed-in members page (`members(perPage: 50)`: the members subgraph,
// then the identity subgraph's `_entities`) on the three with deduplication off, at 16 connections, every gateway in
// turn for 6 s, three rounds after a warm-up; each gateway's median run is printed with the ratio of the project's
// gateway to it. Then the Platform API's own members page (`GET /v1/members`, a Platform API key: only the project's
// gateway serves it) beside Hive Gateway's run of that twin.
//
// The GraphQL cost budget and the Platform API key's rate limit (the project's gateway's limits, which Hive Gateway
// has not) are raised out of the way.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { freePort, startSplit } from '../scripts/split.js';
import { openDeps } from '../server/deps.js';
import { openSession } from '../subgraphs/identity/index.js';
import { loadConfig } from '../subgraphs/kernel/index.js';
import { BENCH_DATABASE_URL, load, median, splitBenchEnv, type LoadResult } from './lib.js';
import { seedSocial } from './seed-social.js';

const FEED = `query Feed($first: Int, $after: String) {
  homeFeed(first: $first, after: $after) {
    edges { cursor node { id body author { username } community { name } reactions { total viewerReaction } commentCount } }
    pageInfo { hasNextPage endCursor }
  }
}`;
const MEMBERS = `query Members($communityId: ID!) {
  members(communityId: $communityId, perPage: 50) {
    items { role xp level joinedAt user { id username displayName avatarUrl } }
    page perPage hasMore
  }
}`;
const ROUNDS = 3;
const SECONDS = 6;

/** A gateway process (`script`, from the sources) on a free port, once it answers `ready` (a GET of `/readyz` or a line). */
async function gatewayProcess(script: string, env: Record<string, string>, ready: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL(`../${script}`, import.meta.url))], {
    env: { ...process.env, ...env, PORT: String(port), NODE_OPTIONS: '', NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout!.on('data', (d: Buffer) => output.push(d.toString()));
  child.stderr!.on('data', (d: Buffer) => output.push(d.toString()));
  const answers = async () => ready.startsWith('/') && (await fetch(`http://127.0.0.1:${port}${ready}`).then((r) => r.ok, () => false));
  const deadline = Date.now() + 90_000;
  while (!output.join('').includes(ready) && !(await answers())) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${script} did not start: ${output.join('').slice(-2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { url: `http://127.0.0.1:${port}/graphql`, child };
}

export default async function peerGatewayBench(): Promise<void> {
  const seeded = await seedSocial(BENCH_DATABASE_URL);
  // The GraphQL cost budget and the Platform API key's rate limit, limits of the project's gateway only, out of the way.
  const ours = { ...splitBenchEnv(), RATE_LIMIT_PER_MINUTE: '1000000000' };
  const internalSecret = ours.INTERNAL_SECRET;
  const { deps, close } = await openDeps(loadConfig({ ...ours, DATABASE_POOL_SIZE: '2' }), { log: pino({ level: 'silent' }) });
  const split = await startSplit({ databaseUrl: BENCH_DATABASE_URL, source: true, workers: 0, env: { ...ours, SUBGRAPH_DEDUPLICATE_INFLIGHT: 'false' } });
  const hives: ChildProcess[] = [];
  try {
    const subgraphUrls = [...split.processes.values()]
      .filter((p) => p.kind === 'subgraph')
      .map((p) => `${p.name}=${p.url}/graphql`)
      .join(',');
    const hiveEnv = { INTERNAL_SECRET: internalSecret, SUBGRAPH_URLS: subgraphUrls };
    const started = await Promise.all([
      gatewayProcess('scripts/hive-gateway.ts', { ...hiveEnv, HIVE_ROUTER_RUNTIME: 'true', HIVE_DEDUPLICATE_INFLIGHT: 'false' }, 'Hive Gateway at'),
      gatewayProcess('scripts/hive-gateway.ts', { ...hiveEnv, HIVE_DEDUPLICATE_INFLIGHT: 'false' }, 'Hive Gateway at'),
      gatewayProcess('scripts/hive-gateway.ts', hiveEnv, 'Hive Gateway at'),
      gatewayProcess('server/web.ts', { ...ours, SUBGRAPH_URLS: subgraphUrls }, '/readyz'),
    ]);
    hives.push(...started.map((h) => h.child));
    const targets = [
      { name: "the project's gateway, deduplication off", url: `${split.gatewayUrls[0]}/graphql` },
      { name: 'Hive Gateway, Rust planner, deduplication off', url: started[0]!.url },
      { name: 'Hive Gateway, JavaScript planner, deduplication off', url: started[1]!.url },
      { name: "the project's gateway, its default (deduplication on)", url: started[3]!.url },
      { name: "Hive Gateway's defaults (JavaScript planner, deduplication on)", url: started[2]!.url },
    ];

    const cookie = `svc_session=${await openSession(deps, seeded.benchUserId)}`;
    const headers = { 'content-type': 'application/json', cookie };
    /** Every target answers `pick` of `body` alike; then each is loaded in turn, ROUNDS times; their medians. */
    const compare = async (list: typeof targets, body: string, pick: (data: any) => unknown): Promise<LoadResult[]> => {
      const answers = await Promise.all(
        list.map(async (t) => {
          const res = await fetch(t.url, { method: 'POST', headers, body });
          const json = (await res.json()) as any;
          if (res.status !== 200 || json.errors || !pick(json.data)) throw new Error(`${t.name}: ${res.status} ${JSON.stringify(json).slice(0, 500)}`);
          return JSON.stringify(pick(json.data));
        }),
      );
      if (new Set(answers).size !== 1) throw new Error('the gateways answered differently');
      for (const t of list) await load(t.url, headers, 2, 16, { method: 'POST', body });
      const runs: LoadResult[][] = list.map(() => []);
      for (let round = 0; round < ROUNDS; round += 1) {
        for (const [i, t] of list.entries()) runs[i]!.push(await load(t.url, headers, SECONDS, 16, { method: 'POST', body }));
      }
      for (const [i, t] of list.entries()) {
        const m = median(runs[i]!);
        const all = runs[i]!.map((r) => r.rps.toFixed(0)).join(', ');
        console.log(`  ${t.name.padEnd(66)} ${m.rps.toFixed(0).padStart(6)} req/s, p99 ${m.p99} ms (runs ${all}; errors ${m.errors}, non-2xx ${m.non2xx})`);
      }
      return runs.map(median);
    };
    const ratio = (medians: LoadResult[], i: number, j: number) => (medians[i]!.rps / medians[j]!.rps).toFixed(3);

    console.log(`Distributed mode: signed-in homeFeed(first: 20) at 16 connections, ${split.processes.size} processes of the split deployment, median of ${ROUNDS} alternated runs of ${SECONDS} s`);
    const feed = await compare(targets, JSON.stringify({ query: FEED, variables: { first: 20 } }), (data) => data?.homeFeed);
    console.log(`  ratio to Hive Gateway with the Rust planner, deduplication off on both: ${ratio(feed, 0, 1)} (goal >= 1.0)`);
    console.log(`  ratio to Hive Gateway's JavaScript planner, deduplication off on both: ${ratio(feed, 0, 2)}`);
    console.log(`  ratio to Hive Gateway's defaults on the same-query load, deduplication on on both: ${ratio(feed, 3, 4)} (goal >= 1.0)`);

    // The members page. The Platform API's own (`GET /v1/members`, `platformMembers`) cannot be put to Hive Gateway:
    // its caller is a Platform API key, which only the project's REST facade accepts (README › Behind another
    // gateway); its twin for a signed-in member is: the same two subgraphs (a page of the members subgraph, then its
    // members' users from the identity subgraph's `_entities`), the same fields, 50 members (the most `members` serves).
    const tribe = [...seeded.benchTribes].sort((a, b) => b.posts - a.posts)[0]!;
    const membersBody = JSON.stringify({ query: MEMBERS, variables: { communityId: tribe.id } });
    console.log(`Distributed mode: signed-in members(perPage: 50) of a tribe at 16 connections, median of ${ROUNDS} alternated runs of ${SECONDS} s`);
    const members = await compare(targets.slice(0, 3), membersBody, (data) => data?.members?.items?.length === 50 && data.members);
    console.log(`  members page: ratio to Hive Gateway with the Rust planner, deduplication off on both: ${ratio(members, 0, 1)} (goal >= 1.0)`);
    console.log(`  members page: ratio to Hive Gateway's JavaScript planner, deduplication off on both: ${ratio(members, 0, 2)}`);

    // The Platform API's own members page on the project's gateway (`GET /v1/members?pageSize=50` with a Platform API
    // key of the same tribe: the key's check, the REST facade and its shaping on top of the same two fetches) beside
    // Hive Gateway's run of the twin above.
    const pool = deps.database.pool!;
    const { rows: [owner] } = await pool.query<{ user_id: string; handle: string }>(
      `select m.user_id, c.handle from members m join communities c on c.id = m.community_id where m.community_id = $1 and m.role = 'owner'`,
      [tribe.id],
    );
    const ownerCookie = `svc_session=${await openSession(deps, owner!.user_id)}`;
    const gatewayBase = split.gatewayUrls[0]!;
    const created = await fetch(`${gatewayBase}/communities/${owner!.handle}/api-keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: ownerCookie },
      body: JSON.stringify({ name: 'peer-gateway bench', scopes: ['members:read'] }),
    });
    const key = (await created.json()) as { id: string; key: string };
    if (created.status !== 201) throw new Error(`api key: ${created.status} ${JSON.stringify(key)}`);
    try {
      const platformUrl = `${gatewayBase}/v1/members?pageSize=50`;
      const platformHeaders = { authorization: `Bearer ${key.key}` };
      const page = await fetch(platformUrl, { headers: platformHeaders });
      const pageBody = (await page.json()) as { data?: unknown[] };
      if (page.status !== 200 || pageBody.data?.length !== 50) throw new Error(`/v1/members: ${page.status} ${JSON.stringify(pageBody).slice(0, 300)}`);
      const pair = [
        { name: "the project's gateway, GET /v1/members?pageSize=50 (Platform API key)", url: platformUrl, headers: platformHeaders, request: {} },
        { name: 'Hive Gateway, Rust planner, its twin above', url: targets[1]!.url, headers, request: { method: 'POST' as const, body: membersBody } },
      ];
      for (const t of pair) await load(t.url, t.headers, 2, 16, t.request);
      const runs: LoadResult[][] = pair.map(() => []);
      for (let round = 0; round < ROUNDS; round += 1) {
        for (const [i, t] of pair.entries()) runs[i]!.push(await load(t.url, t.headers, SECONDS, 16, t.request));
      }
      console.log(`Distributed mode: the Platform API's members page (50) beside Hive Gateway's run of its twin, median of ${ROUNDS} alternated runs of ${SECONDS} s`);
      for (const [i, t] of pair.entries()) {
        const m = median(runs[i]!);
        console.log(`  ${t.name.padEnd(72)} ${m.rps.toFixed(0).padStart(6)} req/s, p99 ${m.p99} ms (runs ${runs[i]!.map((r) => r.rps.toFixed(0)).join(', ')}; errors ${m.errors}, non-2xx ${m.non2xx})`);
      }
      console.log(`  Platform API members page: ratio to Hive Gateway with the Rust planner on its twin: ${ratio(runs.map(median), 0, 1)}`);
    } finally {
      await fetch(`${gatewayBase}/communities/${owner!.handle}/api-keys/${key.id}`, { method: 'DELETE', headers: { cookie: ownerCookie } });
    }
  } finally {
    for (const h of hives) h.kill('SIGKILL'); // Hive Gateway's runtime waits for its connections on SIGTERM
    await split.stop();
    await close();
  }
}
