// A CPU profile of the service alone under the posts-list load (not a benchmark: `npm run bench` runs *.bench.ts
// only). The service runs in this process and autocannon in a child process, so the profile holds the service's
// work and nothing of the load generator's or an anchor's. Seeds like bench/posts.bench.ts, warms up for 3 s, then
// profiles 10 s with the inspector and writes the profile (open it in Chrome DevTools or speedscope):
//
//   NODE_ENV=production node --import tsx bench/profile-posts.ts [/tmp/posts-service.cpuprofile]
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import pg from 'pg';
import { BENCH_DATABASE_URL, startBenchService } from './lib.js';

const out = process.argv[2] ?? '/tmp/posts-service.cpuprofile';
const { service, base } = await startBenchService();
const pool = new pg.Pool({ connectionString: BENCH_DATABASE_URL, max: 2 });
const json = async (path: string, init: RequestInit = {}) => {
  const res = await fetch(base + path, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });
  return (await res.json()) as any;
};

const tag = randomBytes(4).toString('hex');
const authors: string[] = [];
for (let i = 0; i < 10; i += 1) {
  const body = { email: `prof_${tag}_${i}@example.com`, password: 'bench-password-1', username: `prof_${tag}_${i}`, displayName: `Prof ${i}` };
  authors.push((await json('/auth/signup', { method: 'POST', body: JSON.stringify(body) })).user.id);
}
const login = await json('/v1/auth/login', { method: 'POST', body: JSON.stringify({ email: `prof_${tag}_0@example.com`, password: 'bench-password-1' }) });
const token: string = login.data.access_token;
const tribe = await json('/v1/communities', {
  method: 'POST',
  headers: { authorization: `Bearer ${token}` },
  body: JSON.stringify({ name: `Prof ${tag}`, handle: `prof-${tag}` }),
});
await pool.query(
  `insert into posts (community_id, author_id, body, published_at, created_at)
   select $1, ($2::uuid[])[1 + (g % 10)], '<p>post ' || g || '</p>', now(), now() - (g || ' seconds')::interval
   from generate_series(1, 500) g`,
  [tribe.data.id, authors],
);
await pool.query('analyze posts, users'); // as bench/posts.bench.ts: plans for the rows it reads
const url = `${base}/v1/communities/${tribe.data.id}/posts?per_page=50`;

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
