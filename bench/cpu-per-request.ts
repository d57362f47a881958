// The service's CPU per request on the posts list (not a benchmark: `npm run bench` runs *.bench.ts only). The
// service runs in this process and autocannon in a child process (8 connections), so the figure is the service's
// work alone: `process.cpuUsage()` over 6,000 requests, four times, after 3,000 to warm up; then the same for the
// posts bench's anchor (a bare node:http handler with the one equivalent query) in this process. Seeds like
// bench/posts.bench.ts. Run it on two commits (a worktree each) to compare them, alternating:
//
//   NODE_ENV=production node --import tsx bench/cpu-per-request.ts
import pg from 'pg';
import { autocannonChild, BENCH_DATABASE_URL, postsAnchor, seedPostsList, startBenchService } from './lib.js';

const { service, base } = await startBenchService();
const pool = new pg.Pool({ connectionString: BENCH_DATABASE_URL, max: 10 }); // the anchor's, as in bench/posts.bench.ts
const { token, url } = await seedPostsList(base, pool);

/** autocannon in a child process (8 connections) sending `amount` requests, its summary lines. */
const cannon = (amount: number, target = url) => autocannonChild(['-c', '8', '-a', String(amount), '-H', `authorization=Bearer ${token}`, target]);

/** CPU of this process per request to `target`: best of four runs of 6,000 requests, after 3,000 to warm up. */
async function cpuPerRequest(target: string): Promise<number[]> {
  await cannon(3000, target);
  const per: number[] = [];
  for (let i = 0; i < 4; i += 1) {
    const cpu = process.cpuUsage();
    await cannon(6000, target);
    const used = process.cpuUsage(cpu);
    per.push((used.user + used.system) / 6000);
  }
  return per;
}

const line = (name: string, per: number[]) => `${name} (µs): ${per.map((x) => x.toFixed(0)).join(', ')}; best ${Math.min(...per).toFixed(0)}`;
console.log(line('service CPU per posts request', await cpuPerRequest(url)));
const anchor = await postsAnchor(pool);
console.log(line('anchor CPU per posts request', await cpuPerRequest(`${anchor.base}/?c=${url.split('/communities/')[1].split('/')[0]}`)));
await anchor.close();
await pool.end();
await service.stop();
process.exit(0);
