// Issue 15 (memory): resident memory of the service (its own process) after 100,000 requests of the mix (resource
// API posts list, Platform API members list, challenge leaderboard, GraphQL homeFeed), beside its value after the
// first 10,000 of them, as a ratio (goal: within 10%, i.e. at most 1.10). Printed as the process stands, as the peak
// read during each stretch of load, just after a full GC and settled (after an idle second and a GC: what the process
// keeps), with the V8 heap and malloc's arenas (the service runs with --expose-gc). BENCH_MEMORY_REQUESTS changes the
// total; BENCH_MEMORY_NODE_FLAGS adds node flags to the service process.
import autocannon from 'autocannon';
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { BENCH_DATABASE_URL } from './lib.js';

const TOTAL = Number(process.env.BENCH_MEMORY_REQUESTS ?? 100_000);
/** The anchor: memory after the first tenth of the requests (10,000 of 100,000). */
const FIRST = Math.round(TOTAL / 10);
const CONNECTIONS = 16;
/** Extra node flags of the service process (BENCH_MEMORY_NODE_FLAGS, e.g. "--max-semi-space-size=8"). */
const NODE_FLAGS = (process.env.BENCH_MEMORY_NODE_FLAGS ?? '').split(' ').filter(Boolean);

/** What the service process answers to `stats` (bench/memory-service.ts). */
interface Stats {
  /** RSS as the process stands when asked, wherever it is in its GC cycle. */
  rss: number;
  /** The highest RSS read (every 100 ms) since the previous `stats`: the footprint under load. */
  peak: number;
  /** RSS just after two full GCs (V8 still unmapping the freed pages). */
  rssAfterGc: number;
  /** RSS after a second idle, a full GC and another second: what the process keeps. */
  rssSettled: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** Resident bytes of malloc's arenas. */
  malloc: number;
}

async function json(base: string, path: string, init: RequestInit = {}) {
  const res = await fetch(base + path, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

export default async function memoryBench(): Promise<void> {
  const child: ChildProcess = fork(fileURLToPath(new URL('./memory-service.ts', import.meta.url)), [], {
    execArgv: ['--expose-gc', ...NODE_FLAGS, '--import', 'tsx'],
    env: { ...process.env, DATABASE_URL: BENCH_DATABASE_URL, JWT_SECRET: randomBytes(32).toString('hex'), NODE_OPTIONS: '' },
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: any) => (m.type === 'ready' ? resolve(m.port) : reject(new Error('unexpected message'))));
    child.once('exit', (code) => reject(new Error(`service process exited with ${code}`)));
  });
  const stats = () =>
    new Promise<Stats>((resolve) => {
      child.once('message', (m: any) => resolve(m));
      child.send({ type: 'stats' });
    });
  const base = `http://127.0.0.1:${port}`;
  const pool = new pg.Pool({ connectionString: BENCH_DATABASE_URL, max: 2 });
  try {
    // One tribe: its owner (session cookie and access token), 150 members, 300 posts, an API key, a challenge that
    // every member joined.
    const tag = randomBytes(4).toString('hex');
    const email = `mem_${tag}@example.com`;
    const signup = await json(base, '/auth/signup', {
      method: 'POST',
      body: JSON.stringify({ email, password: 'bench-password-1', username: `mem_${tag}`, displayName: 'Memory bench' }),
    });
    const cookie = String(signup.headers.get('set-cookie')).split(';')[0];
    const login = await json(base, '/v1/auth/login', { method: 'POST', body: JSON.stringify({ email, password: 'bench-password-1' }) });
    const token = { authorization: `Bearer ${login.body.data.access_token}` };
    const tribe = await json(base, '/v1/communities', { method: 'POST', headers: token, body: JSON.stringify({ name: `Memory ${tag}`, handle: `mem-${tag}` }) });
    const communityId: string = tribe.body.data.id;
    const key = await json(base, `/communities/mem-${tag}/api-keys`, { method: 'POST', headers: { cookie }, body: JSON.stringify({ name: 'memory bench', scopes: ['members:read'] }) });
    const apiKey = { authorization: `Bearer ${key.body.key}` };
    const challenge = await json(base, `/v1/communities/${communityId}/challenges`, {
      method: 'POST',
      headers: token,
      body: JSON.stringify({ title: 'Memory challenge', duration_days: 30, challenge_type: 'daily', access_type: 'free', xp_reward: 100 }),
    });
    const challengeId: string = challenge.body.data.id;
    await pool.query(
      `with u as (
         insert into users (email, username, display_name)
         select 'mem_' || $2 || '_' || g || '@example.com', 'mem_' || $2 || '_' || g, 'Member ' || g from generate_series(1, 150) g
         returning id),
       m as (insert into members (community_id, user_id, role) select $1, id, 'member' from u returning user_id)
       insert into challenge_enrollments (challenge_id, community_id, user_id, status, started_at, completed_days, streak_run, xp_earned)
       select $3, $1, user_id, 'active', now() - interval '10 days', (hashtext(user_id::text) & 7), 1, (hashtext(user_id::text) & 7) * 10 from m`,
      [communityId, tag, challengeId],
    );
    await pool.query(
      `insert into posts (community_id, author_id, body, published_at, created_at, active_at)
       select $1, m.user_id, '<p>memory post ' || g || '</p>', now() - (g || ' minutes')::interval, now() - (g || ' minutes')::interval,
              now() - (g || ' minutes')::interval
       from generate_series(1, 300) g
       join lateral (select user_id from members where community_id = $1 order by user_id offset (g % 150) limit 1) m on true`,
      [communityId],
    );

    const feed = JSON.stringify({ query: 'query Feed($first: Int) { homeFeed(first: $first) { edges { cursor node { id body author { id displayName } } } pageInfo { hasNextPage endCursor } } }', variables: { first: 20 } });
    const requests = [
      { method: 'GET' as const, path: `/v1/communities/${communityId}/posts?per_page=50`, headers: token },
      { method: 'GET' as const, path: '/v1/members?pageSize=100', headers: apiKey },
      { method: 'GET' as const, path: `/v1/communities/${communityId}/challenges/${challengeId}/leaderboard?per_page=50`, headers: token },
      { method: 'POST' as const, path: '/graphql', headers: { cookie, 'content-type': 'application/json' }, body: feed },
    ];
    for (const r of requests) {
      const res = await json(base, r.path, { method: r.method, headers: r.headers, body: r.body });
      if (res.status !== 200 || res.body.errors) throw new Error(`${r.method} ${r.path}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    }

    const drive = async (amount: number) => {
      const started = performance.now();
      const result = await autocannon({ url: base, connections: Math.min(CONNECTIONS, amount), amount, requests });
      const seconds = (performance.now() - started) / 1000;
      return { rps: amount / seconds, non2xx: result.non2xx, errors: result.errors + result.timeouts };
    };
    const loadBefore = loadavg();
    const start = await stats();
    const first = await drive(FIRST);
    const at10k = await stats();
    const rest = await drive(TOTAL - FIRST);
    const at100k = await stats();
    const loadAfter = loadavg();

    const ratio = (a: number, b: number) => (a / b).toFixed(3);
    const line = (s: Stats) =>
      `RSS ${mb(s.rss)} (peak ${mb(s.peak)}), after GC ${mb(s.rssAfterGc)}, settled ${mb(s.rssSettled)}; heap used ${mb(s.heapUsed)} of ${mb(s.heapTotal)}, external ${mb(s.external)} (array buffers ${mb(s.arrayBuffers)}), malloc arenas ${mb(s.malloc)}`;
    const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
    console.log(`Memory: the service in its own process${NODE_FLAGS.length ? ` (${NODE_FLAGS.join(' ')})` : ''}, ${TOTAL} requests of the mix (posts list, members, leaderboard, homeFeed), ${CONNECTIONS} connections`);
    console.log(`  load    : first ${FIRST}: ${first.rps.toFixed(0)} req/s (non-2xx ${first.non2xx}, errors ${first.errors}); next ${TOTAL - FIRST}: ${rest.rps.toFixed(0)} req/s (non-2xx ${rest.non2xx}, errors ${rest.errors}); load average ${load(loadBefore)} -> ${load(loadAfter)}`);
    console.log(`  start   : ${line(start)}`);
    console.log(`  anchor  : after ${FIRST}: ${line(at10k)}`);
    console.log(`  subject : after ${TOTAL}: ${line(at100k)}`);
    console.log(
      `  ratio   : RSS settled ${ratio(at100k.rssSettled, at10k.rssSettled)}, RSS peak ${ratio(at100k.peak, at10k.peak)}, RSS as it stood ${ratio(at100k.rss, at10k.rss)}, RSS after GC ${ratio(at100k.rssAfterGc, at10k.rssAfterGc)}, heap used ${ratio(at100k.heapUsed, at10k.heapUsed)}, heap total ${ratio(at100k.heapTotal, at10k.heapTotal)}, malloc ${ratio(at100k.malloc, at10k.malloc)} (goal <= 1.10)`,
    );
  } finally {
    await pool.end();
    child.send({ type: 'stop' });
    await new Promise((resolve) => child.once('exit', resolve));
  }
}
