// A CPU profile of the service alone under the posts-list load (not a benchmark: `npm run bench` runs *.bench.ts
// only). The service runs in this process and autocannon in a child process, so the profile holds the service's
// work and nothing of the load generator's or an anchor's. Seeds like bench/posts.bench.ts, warms up for 3 s, then
// profiles 10 s with the inspector and writes the profile (open it in Chrome DevTools or speedscope):
//
//   NODE_ENV=production node --import tsx bench/profile-posts.ts [/tmp/posts-service.cpuprofile]
import pg from 'pg';
import { BENCH_DATABASE_URL, profileUnderLoad, seedPostsList, startBenchService } from './lib.js';

const out = process.argv[2] ?? '/tmp/posts-service.cpuprofile';
const { service, base } = await startBenchService();
const pool = new pg.Pool({ connectionString: BENCH_DATABASE_URL, max: 2 });
const { token, url } = await seedPostsList(base, pool);

await profileUnderLoad(out, ['-H', `authorization=Bearer ${token}`, url]);
await pool.end();
await service.stop();
process.exit(0);
