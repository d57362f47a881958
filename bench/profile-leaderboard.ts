// A CPU profile of the service alone under the leaderboard load of bench/leaderboard.bench.ts (not a benchmark: `npm
// run bench` runs *.bench.ts only): the same 10,000 participants and page of 50, autocannon in a child process. Warms
// up for 3 s, then profiles 10 s and writes the profile:
//
//   NODE_ENV=production node --import tsx bench/profile-leaderboard.ts [/tmp/leaderboard-service.cpuprofile]
import pg from 'pg';
import { BENCH_DATABASE_URL, profileUnderLoad, seedLeaderboard, startBenchService } from './lib.js';

const out = process.argv[2] ?? '/tmp/leaderboard-service.cpuprofile';
const { service, base } = await startBenchService();
const pool = new pg.Pool({ connectionString: BENCH_DATABASE_URL, max: 2 });
const { headers, url } = await seedLeaderboard(base, pool, 10_000);

await profileUnderLoad(out, ['-H', `authorization=${headers.authorization}`, url]);
await pool.end();
await service.stop();
process.exit(0);
