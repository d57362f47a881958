// The service's CPU per request on the posts list or the leaderboard (not a benchmark: `npm run bench` runs
// *.bench.ts only). The service runs in this process and autocannon in a child process (8 connections), so the figure
// is the service's work alone: `process.cpuUsage()` over 6,000 requests, four times, after 3,000 to warm up, and the
// garbage collector's pauses in the same requests (`gc` performance entries); then the same for that bench's anchor (a
// bare node:http handler with the one equivalent query) in this process. Seeds like bench/posts.bench.ts or
// bench/leaderboard.bench.ts. Run it on two commits (a worktree each), or with two sets of node flags, alternating:
//
//   NODE_ENV=production node --import tsx bench/cpu-per-request.ts [posts|leaderboard]
import pg from 'pg';
import { PerformanceObserver } from 'node:perf_hooks';
import { autocannonChild, BENCH_DATABASE_URL, leaderboardAnchor, postsAnchor, seedLeaderboard, seedPostsList, startBenchService } from './lib.js';

const which = process.argv[2] === 'leaderboard' ? 'leaderboard' : 'posts';
const { service, base } = await startBenchService();
const pool = new pg.Pool({ connectionString: BENCH_DATABASE_URL, max: 10 }); // the anchor's, as in the benches
let gcMs = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcMs += entry.duration;
}).observe({ entryTypes: ['gc'] });

/** The service's URL and authorization header, and the anchor's URL (`?c=` the tribe or the challenge). */
async function target(): Promise<{ url: string; authorization: string; anchor: Awaited<ReturnType<typeof postsAnchor>>; c: string }> {
  if (which === 'posts') {
    const { token, url } = await seedPostsList(base, pool);
    return { url, authorization: `Bearer ${token}`, anchor: await postsAnchor(pool), c: url.split('/communities/')[1].split('/')[0] };
  }
  const { headers, challengeId, url } = await seedLeaderboard(base, pool, 10_000);
  return { url, authorization: headers.authorization, anchor: await leaderboardAnchor(pool), c: challengeId };
}
const { url, authorization, anchor, c } = await target();

/** autocannon in a child process (8 connections) sending `amount` requests to `to`. */
const cannon = (amount: number, to: string) => autocannonChild(['-c', '8', '-a', String(amount), '-H', `authorization=${authorization}`, to]);

/** CPU and garbage-collection pauses of this process per request to `to` (µs): four runs of 6,000, after 3,000. */
async function perRequest(to: string): Promise<{ cpu: number[]; gc: number[] }> {
  await cannon(3000, to);
  const cpu: number[] = [];
  const gc: number[] = [];
  for (let i = 0; i < 4; i += 1) {
    const before = process.cpuUsage();
    const gcBefore = gcMs;
    await cannon(6000, to);
    const used = process.cpuUsage(before);
    cpu.push((used.user + used.system) / 6000);
    gc.push(((gcMs - gcBefore) * 1000) / 6000);
  }
  return { cpu, gc };
}

const line = (name: string, { cpu, gc }: { cpu: number[]; gc: number[] }) =>
  `${name} (µs): CPU ${cpu.map((x) => x.toFixed(0)).join(', ')}, best ${Math.min(...cpu).toFixed(0)}; GC pauses ${gc.map((x) => x.toFixed(0)).join(', ')}`;
console.log(line(`service per ${which} request`, await perRequest(url)));
console.log(line(`anchor per ${which} request`, await perRequest(`${anchor.base}/?c=${c}`)));
await anchor.close();
await pool.end();
await service.stop();
process.exit(0);
