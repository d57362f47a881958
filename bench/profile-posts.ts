// A CPU profile of the service alone under the posts-list load (not a benchmark: `npm run bench` runs *.bench.ts
// only). The service runs in this process and autocannon in a child process, so the profile holds the service's
// work and nothing of the load generator's or an anchor's. Seeds like bench/posts.bench.ts, warms up for 3 s, then
// profiles 10 s with the inspector and writes the profile (open it in Chrome DevTools or speedscope):
//
//   NODE_ENV=production node --import tsx bench/profile-posts.ts [/tmp/posts-service.cpuprofile]
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import pg from 'pg';
import { BENCH_DATABASE_URL, seedPostsList, startBenchService } from './lib.js';

const out = process.argv[2] ?? '/tmp/posts-service.cpuprofile';
const { service, base } = await startBenchService();
const pool = new pg.Pool({ connectionString: BENCH_DATABASE_URL, max: 2 });
const { token, url } = await seedPostsList(base, pool);

/** autocannon in a child process (16 connections), its summary lines. */
const cannon = (seconds: number) =>
  new Promise<string>((resolve) => {
    const child = spawn('node_modules/.bin/autocannon', ['-c', '16', '-d', String(seconds), '-H', `authorization=Bearer ${token}`, url]);
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.stderr.on('data', (d) => (text += d));
    child.on('close', () => resolve(text));
  });

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await cannon(3);
await session.post('Profiler.start');
const cpu = process.cpuUsage();
const summary = await cannon(10);
const used = process.cpuUsage(cpu);
const { profile } = await session.post('Profiler.stop');
writeFileSync(out, JSON.stringify(profile));
console.log(summary.split('\n').filter((line) => /Req\/Sec|requests in/.test(line)).join('\n'));
console.log(`service CPU ${((used.user + used.system) / 1e6).toFixed(2)} s over 10 s; profile written to ${out}`);
await pool.end();
await service.stop();
process.exit(0);
