// scratch: profile the service alone under an autocannon in another process (not committed)
import pg from 'pg';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { BENCH_DATABASE_URL, startBenchService } from '../bench/lib.js';
const { service, base } = await startBenchService();
const pool = new pg.Pool({ connectionString: BENCH_DATABASE_URL, max: 2 });
const json = async (path: string, init: RequestInit = {}) => { const r = await fetch(base + path, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } }); return { status: r.status, body: (await r.json()) as any }; };
const tag = randomBytes(4).toString('hex'); const authors: string[] = [];
for (let i = 0; i < 10; i++) { const r = await json('/auth/signup', { method: 'POST', body: JSON.stringify({ email: `p_${tag}_${i}@example.com`, password: 'bench-password-1', username: `p_${tag}_${i}`, displayName: `P ${i}` }) }); authors.push(r.body.user.id); }
const token = (await json('/v1/auth/login', { method: 'POST', body: JSON.stringify({ email: `p_${tag}_0@example.com`, password: 'bench-password-1' }) })).body.data.access_token;
const c = (await json('/v1/communities', { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: JSON.stringify({ name: `P ${tag}`, handle: `p-${tag}` }) })).body.data.id;
await pool.query(`insert into posts (community_id, author_id, body, published_at, created_at) select $1, ($2::uuid[])[1 + (g % 10)], '<p>post ' || g || '</p>', now(), now() - (g || ' seconds')::interval from generate_series(1, 500) g`, [c, authors]);
const url = `${base}/v1/communities/${c}/posts?per_page=50`;
const { Session } = await import('node:inspector/promises');
const session = new Session(); session.connect();
await session.post('Profiler.enable'); 
const { spawn } = await import('node:child_process');
const cannon = (seconds: number) => new Promise<string>((resolve) => {
  const p = spawn('node_modules/.bin/autocannon', ['-c', '16', '-d', String(seconds), '-H', `authorization=Bearer ${token}`, url]);
  let out = ''; p.stdout.on('data', (d) => (out += d)); p.stderr.on('data', (d) => (out += d)); p.on('close', () => resolve(out));
});
await cannon(3);
await session.post('Profiler.start');
const t0 = process.cpuUsage();
const out = await cannon(10);
const cpu = process.cpuUsage(t0);
const { profile } = await session.post('Profiler.stop');
const { writeFileSync } = await import('node:fs');
writeFileSync('/tmp/posts-service.cpuprofile', JSON.stringify(profile));
console.log(out.split('\n').filter((l) => /Req\/Sec|requests in/.test(l)).join('\n'));
console.log('service cpu s', ((cpu.user + cpu.system) / 1e6).toFixed(2));
await pool.end(); await service.stop(); process.exit(0);
