// A CPU profile of the project's gateway alone in distributed mode (not a benchmark: `npm run bench` runs *.bench.ts
// only). The split deployment serves the subgraphs (from the sources, no workers); one more gateway process
// (server/web.ts, in-flight deduplication off, as the like-for-like row of peer-gateway.bench.ts) runs under
// `--cpu-prof` and takes the signed-in homeFeed(first: 20) load for 15 s after a 3 s warm-up; on SIGTERM it writes
// its profile to the directory given (open it in Chrome DevTools or speedscope):
//
//   NODE_ENV=production node --import tsx bench/profile-peer.ts [/tmp/prof-peer]
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { freePort, startSplit } from '../scripts/split.js';
import { openDeps } from '../server/deps.js';
import { openSession } from '../subgraphs/identity/index.js';
import { loadConfig } from '../subgraphs/kernel/index.js';
import { BENCH_DATABASE_URL, load, splitBenchEnv } from './lib.js';
import { seedSocial } from './seed-social.js';

const dir = process.argv[2] ?? '/tmp/prof-peer';
const FEED = `query Feed($first: Int, $after: String) {
  homeFeed(first: $first, after: $after) {
    edges { cursor node { id body author { username } community { name } reactions { total viewerReaction } commentCount } }
    pageInfo { hasNextPage endCursor }
  }
}`;
const seeded = await seedSocial(BENCH_DATABASE_URL);
const env = splitBenchEnv();
const { deps, close } = await openDeps(loadConfig({ ...env, DATABASE_POOL_SIZE: '2' }), { log: pino({ level: 'silent' }) });
const split = await startSplit({ databaseUrl: BENCH_DATABASE_URL, source: true, workers: 0, env });
const urls = [...split.processes.values()].filter((p) => p.kind === 'subgraph').map((p) => `${p.name}=${p.url}/graphql`).join(',');
const port = await freePort();
const gateway = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--import', 'tsx', fileURLToPath(new URL('../server/web.ts', import.meta.url))], {
  env: { ...process.env, ...env, SUBGRAPH_URLS: urls, SUBGRAPH_DEDUPLICATE_INFLIGHT: 'false', PORT: String(port), NODE_OPTIONS: '' },
  stdio: 'inherit',
});
const url = `http://127.0.0.1:${port}/graphql`;
while (!(await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false))) await new Promise((r) => setTimeout(r, 200));
const headers = { 'content-type': 'application/json', cookie: `svc_session=${await openSession(deps, seeded.benchUserId)}` };
const body = JSON.stringify({ query: FEED, variables: { first: 20 } });
await load(url, headers, 3, 16, { method: 'POST', body });
const result = await load(url, headers, 15, 16, { method: 'POST', body });
console.log(`homeFeed through the profiled gateway: ${result.rps.toFixed(0)} req/s, p99 ${result.p99} ms; profile in ${dir}`);
gateway.kill('SIGTERM');
await new Promise((resolve) => gateway.once('exit', resolve));
await split.stop();
await close();
