// The service's CPU per request on the posts list (not a benchmark: `npm run bench` runs *.bench.ts only). The
// service runs in this process and autocannon in a child process (8 connections), so the figure is the service's
// work alone: `process.cpuUsage()` over 6,000 requests, four times, after 3,000 to warm up. Seeds like
// bench/posts.bench.ts. Run it on two commits (a worktree each) to compare them, alternating:
//
//   NODE_ENV=production node --import tsx bench/cpu-per-request.ts
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { BENCH_DATABASE_URL, startBenchService } from './lib.js';

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

/** autocannon in a child process (8 connections) sending `amount` requests, its summary lines. */
const cannon = (amount: number) =>
  new Promise<string>((resolve) => {
    const child = spawn('node_modules/.bin/autocannon', ['-c', '8', '-a', String(amount), '-H', `authorization=Bearer ${token}`, url]);
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.stderr.on('data', (d) => (text += d));
    child.on('close', () => resolve(text));
  });

await cannon(3000);
const per: number[] = [];
for (let i = 0; i < 4; i += 1) {
  const cpu = process.cpuUsage();
  await cannon(6000);
  const used = process.cpuUsage(cpu);
  per.push((used.user + used.system) / 6000);
}
console.log(`service CPU per posts request (µs): ${per.map((x) => x.toFixed(0)).join(', ')}; best ${Math.min(...per).toFixed(0)}`);
await pool.end();
await service.stop();
process.exit(0);
