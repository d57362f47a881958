// CPU per request of every process in distributed mode, the project's gateway beside Hive Gateway with the Rust
// planner (not a benchmark: `npm run bench` runs *.bench.ts only). The split deployment from the sources (a process
// per subgraph, no workers, deduplication off) and one Hive Gateway process (deduplication off) front the same
// subgraphs, as in bench/peer-gateway.bench.ts; under each gateway's load in turn (16 connections, 8 s after 2 s of
// warm-up, two rounds), the user and system time of each process is read from /proc around the run, with all of
// PostgreSQL's processes together and the load generator (this process), and printed in µs per request:
//
//   NODE_ENV=production node --import tsx bench/peer-cpu.ts [members|feed]
//
// `members`: the signed-in members page of peer-gateway.bench.ts; `feed`: its signed-in homeFeed(first: 20).
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { freePort, startSplit } from '../scripts/split.js';
import { openDeps } from '../server/deps.js';
import { openSession } from '../subgraphs/identity/index.js';
import { loadConfig } from '../subgraphs/kernel/index.js';
import { BENCH_DATABASE_URL, load, splitBenchEnv } from './lib.js';
import { seedSocial } from './seed-social.js';

const which = process.argv[2] === 'feed' ? 'feed' : 'members';
const MEMBERS = `query Members($communityId: ID!) {
  members(communityId: $communityId, perPage: 50) {
    items { role xp level joinedAt user { id username displayName avatarUrl } }
    page perPage hasMore
  }
}`;
const FEED = `query Feed($first: Int, $after: String) {
  homeFeed(first: $first, after: $after) {
    edges { cursor node { id body author { username } community { name } reactions { total viewerReaction } commentCount } }
    pageInfo { hasNextPage endCursor }
  }
}`;
/** Clock ticks a second in /proc's times (USER_HZ). */
const TICKS = 100;

/** User and system time of a process so far, in clock ticks. */
const ticksOf = (pid: number | string): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
};
/** The same for every PostgreSQL process together. */
const postgresTicks = (): number => {
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/stat`, 'utf8').includes('(postgres)')) ticks += ticksOf(pid);
    } catch {
      // gone meanwhile
    }
  }
  return ticks;
};

const seeded = await seedSocial(BENCH_DATABASE_URL);
const env = { ...splitBenchEnv(), SUBGRAPH_DEDUPLICATE_INFLIGHT: 'false' };
const internalSecret = env.INTERNAL_SECRET;
const { deps, close } = await openDeps(loadConfig({ ...env, DATABASE_POOL_SIZE: '2' }), { log: pino({ level: 'silent' }) });
const split = await startSplit({ databaseUrl: BENCH_DATABASE_URL, source: true, workers: 0, env });
const subgraphUrls = [...split.processes.values()].filter((p) => p.kind === 'subgraph').map((p) => `${p.name}=${p.url}/graphql`).join(',');
const hivePort = await freePort();
const hive = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('../scripts/hive-gateway.ts', import.meta.url))], {
  env: { ...process.env, INTERNAL_SECRET: internalSecret, SUBGRAPH_URLS: subgraphUrls, HIVE_ROUTER_RUNTIME: 'true', HIVE_DEDUPLICATE_INFLIGHT: 'false', PORT: String(hivePort), NODE_OPTIONS: '', NODE_ENV: 'production' },
  stdio: 'ignore',
});
try {
  const hiveUrl = `http://127.0.0.1:${hivePort}/graphql`;
  const probe = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' };
  const deadline = Date.now() + 90_000;
  while (!(await fetch(hiveUrl, probe).then((r) => r.ok, () => false))) {
    if (Date.now() > deadline) throw new Error('Hive Gateway did not start');
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  const processes: Array<[string, number]> = [...split.processes.values()].map((p) => [p.name, p.child.pid!]);
  processes.push(['hive', hive.pid!]);
  const headers = { 'content-type': 'application/json', cookie: `svc_session=${await openSession(deps, seeded.benchUserId)}` };
  const tribe = [...seeded.benchTribes].sort((a, b) => b.posts - a.posts)[0]!;
  const body = which === 'members' ? JSON.stringify({ query: MEMBERS, variables: { communityId: tribe.id } }) : JSON.stringify({ query: FEED, variables: { first: 20 } });
  const targets: Array<[string, string]> = [
    ["the project's gateway", `${split.gatewayUrls[0]}/graphql`],
    ['Hive Gateway, Rust planner', hiveUrl],
  ];
  console.log(`${which}: CPU per request of each process (µs), 16 connections, 8 s; processes under 5 µs left out`);
  for (let round = 1; round <= 2; round += 1) {
    for (const [name, url] of targets) {
      await load(url, headers, 2, 16, { method: 'POST', body });
      const before = new Map(processes.map(([process, pid]) => [process, ticksOf(pid)]));
      const postgresBefore = postgresTicks();
      const generatorBefore = process.cpuUsage();
      const result = await load(url, headers, 8, 16, { method: 'POST', body });
      const requests = result.rps * 8;
      const perRequest = (ticks: number) => (ticks * 1e6) / TICKS / requests;
      const generator = process.cpuUsage(generatorBefore);
      const postgres = perRequest(postgresTicks() - postgresBefore);
      const shares = processes.map(([process, pid]) => [process, perRequest(ticksOf(pid) - before.get(process)!)] as const).filter(([, us]) => us >= 5);
      const total = shares.reduce((sum, [, us]) => sum + us, 0) + postgres;
      console.log(
        `  round ${round}, ${name}: ${result.rps.toFixed(0)} req/s, p99 ${result.p99} ms; ` +
          `${shares.map(([process, us]) => `${process} ${us.toFixed(0)}`).join(', ')}, postgres ${postgres.toFixed(0)}, ` +
          `load generator ${((generator.user + generator.system) / requests).toFixed(0)}; all but the generator ${total.toFixed(0)}`,
      );
    }
  }
} finally {
  hive.kill('SIGKILL'); // Hive Gateway's runtime waits for its connections on SIGTERM
  await split.stop();
  await close();
}
process.exit(0);
