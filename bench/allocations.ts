// What the service allocates per request on the posts list or the leaderboard, and what its bench's anchor allocates
// (not a benchmark: `npm run bench` runs *.bench.ts only). V8's sampling heap profiler, keeping the objects already
// collected, over 2,000 requests after 3,000 to warm up (autocannon in a child process, 8 connections); prints KB per
// request and writes the profile (`.heapprofile`, for Chrome DevTools' Memory tab):
//
//   NODE_ENV=production node --import tsx bench/allocations.ts [posts|leaderboard] [service|anchor]
import pg from 'pg';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { autocannonChild, BENCH_DATABASE_URL, leaderboardAnchor, postsAnchor, seedLeaderboard, seedPostsList, startBenchService } from './lib.js';

interface SampledNode {
  selfSize: number;
  children: SampledNode[];
}

const REQUESTS = 2000;
const which = process.argv[2] === 'leaderboard' ? 'leaderboard' : 'posts';
const subject = process.argv[3] === 'anchor' ? 'anchor' : 'service';
const { service, base } = await startBenchService({ WORKER_ENABLED: 'false' }); // the job queue's polls are no request's
const pool = new pg.Pool({ connectionString: BENCH_DATABASE_URL, max: 10 });

const seeded = which === 'posts' ? await seedPostsList(base, pool) : await seedLeaderboard(base, pool, 10_000);
const authorization = 'token' in seeded ? `Bearer ${seeded.token}` : seeded.headers.authorization;
const anchor = which === 'posts' ? await postsAnchor(pool) : await leaderboardAnchor(pool);
const c = 'challengeId' in seeded ? seeded.challengeId : seeded.communityId;
const url = subject === 'anchor' ? `${anchor.base}/?c=${c}` : seeded.url;
const cannon = (amount: number) => autocannonChild(['-c', '8', '-a', String(amount), '-H', `authorization=${authorization}`, url]);

await cannon(3000);
const session = new Session();
session.connect();
await session.post('HeapProfiler.enable');
await session.post('HeapProfiler.startSampling', { samplingInterval: 512, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
await cannon(REQUESTS);
const { profile } = await session.post('HeapProfiler.stopSampling');
session.disconnect();
const total = (node: SampledNode): number => node.children.reduce((sum, child) => sum + total(child), node.selfSize);
const out = `/tmp/${which}-${subject}.heapprofile`;
writeFileSync(out, JSON.stringify(profile));
console.log(`${which} ${subject}: ${(total(profile.head as SampledNode) / 1000 / REQUESTS).toFixed(0)} KB allocated a request; profile written to ${out}`);
await anchor.close();
await pool.end();
await service.stop();
process.exit(0);
