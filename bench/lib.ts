import autocannon from 'autocannon';
import pg from 'pg';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { createService, type Service } from '../server/service.js';
import { loadConfig } from '../subgraphs/kernel/index.js';

/**
 * The benchmark database: BENCH_DATABASE_URL, else `bench` on the local server, created when missing. Never a test
 * database: `npm test` recreates those on every run, and a bench's million rows would slow every test.
 */
export const BENCH_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/bench';
await createDatabaseIfMissing(BENCH_DATABASE_URL);

/** Creates the database `url` names, through the server's `postgres` database, unless it exists. */
export async function createDatabaseIfMissing(url: string): Promise<void> {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  const adminUrl = new URL(url);
  adminUrl.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  try {
    const found = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) await admin.query(`create database "${name.replace(/"/g, '""')}"`);
  } finally {
    await admin.end();
  }
}

export interface LoadResult {
  rps: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/**
 * Drives `url` with autocannon for `seconds` and returns requests per second and p99 latency (ms). `request` sends
 * another method and a body (a GraphQL POST) instead of a GET.
 */
export async function load(
  url: string,
  headers: Record<string, string> = {},
  seconds = 8,
  connections = 16,
  request: { method?: 'GET' | 'POST'; body?: string } = {},
): Promise<LoadResult> {
  const result = await autocannon({ url, headers, connections, duration: seconds, pipelining: 1, ...request });
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.timeouts, non2xx: result.non2xx };
}

/** The `p`th percentile (nearest rank) of `values`. */
export const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

/** The median run by requests per second. */
export const median = (runs: LoadResult[]): LoadResult => [...runs].sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)];

/**
 * Drives each target in turn for `seconds`, `rounds` times over, after a 2 s warm-up of each, so that drift of the
 * shared machine hits all alike; returns each target's median run.
 */
export async function alternate(
  targets: Array<{ url: string; headers?: Record<string, string> }>,
  rounds = 3,
  seconds = 6,
): Promise<LoadResult[]> {
  for (const t of targets) await load(t.url, t.headers, 2);
  const runs: LoadResult[][] = targets.map(() => []);
  for (let round = 0; round < rounds; round += 1) {
    for (const [i, t] of targets.entries()) runs[i].push(await load(t.url, t.headers, seconds));
  }
  return runs.map(median);
}

/** The whole service on the bench database, listening on an ephemeral port. */
export async function startBenchService(env: Record<string, string> = {}): Promise<{ service: Service; base: string }> {
  const config = loadConfig({
    DATABASE_URL: BENCH_DATABASE_URL,
    LOG_LEVEL: 'silent',
    COOKIE_SECURE: 'false',
    JWT_SECRET: randomBytes(32).toString('hex'),
    DATABASE_POOL_SIZE: '10',
    // Benchmarks send thousands of GraphQL operations a second from one address: the GraphQL cost budgets stay out of
    // the way (test/graphql-rate-limit.test.ts tests them).
    GRAPHQL_COST_MAX_USER: '1000000000',
    GRAPHQL_COST_RESTORE_USER: '1000000000',
    GRAPHQL_COST_MAX_ANONYMOUS: '1000000000',
    GRAPHQL_COST_RESTORE_ANONYMOUS: '1000000000',
    ...env,
  });
  const service = await createService(config, { log: pino({ level: 'silent' }) });
  const port = await service.listen(0, '127.0.0.1');
  return { service, base: `http://127.0.0.1:${port}` };
}

/**
 * The environment of the split deployment's processes (and of extra gateway processes) in the distributed-mode
 * benches: production, silent, no workers' job queue, the bench database, fresh secrets, and the GraphQL cost budget
 * (the project's gateway's rate limit, which Hive Gateway has not) raised out of the way.
 */
export function splitBenchEnv() {
  const unlimited = '1000000000';
  return {
    NODE_ENV: 'production',
    LOG_LEVEL: 'silent',
    COOKIE_SECURE: 'false',
    DATABASE_URL: BENCH_DATABASE_URL,
    JWT_SECRET: randomBytes(32).toString('hex'),
    INTERNAL_SECRET: randomBytes(32).toString('base64url'),
    WORKER_ENABLED: 'false',
    GRAPHQL_COST_MAX_USER: unlimited,
    GRAPHQL_COST_RESTORE_USER: unlimited,
  };
}

/** A bare node:http server around one handler: the anchor every HTTP figure is compared with. */
export async function bareServer(handler: (url: URL) => Promise<unknown>): Promise<{ base: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    handler(new URL(req.url ?? '/', 'http://x'))
      .then((body) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      })
      .catch(() => {
        res.writeHead(500);
        res.end();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The posts list's anchor: a bare node:http handler running the one equivalent SQL query for the tribe `?c=<id>` and
 * answering its first 50 rows in the resource API's envelope.
 */
export const postsAnchor = (pool: pg.Pool) =>
  bareServer(async (url) => {
    const rows = await pool.query(
      `select p.id, p.community_id, p.author_id, u.username, u.display_name, p.body, p.media_urls, p.visibility, p.status,
              p.pinned_at, p.published_at, p.created_at, p.updated_at
       from posts p left join users u on u.id = p.author_id
       where p.community_id = $1 and p.status = 'published' and p.visibility = any($2)
       order by p.created_at desc, p.id desc limit $3`,
      [url.searchParams.get('c'), ['public', 'members', 'paid'], 51],
    );
    return { data: rows.rows.slice(0, 50), pagination: { page: 1, per_page: 50, has_more: rows.rows.length > 50 } };
  });

/**
 * The leaderboard bench's anchor: a bare node:http handler running the one equivalent SQL query (with the join to users
 * the service does not do) for the challenge in `?c=`, its first page of 50.
 */
export const leaderboardAnchor = (pool: pg.Pool) =>
  bareServer(async (url) => {
    const rows = await pool.query(
      `select e.user_id, u.username, u.display_name, e.completed_days, e.streak_run, e.last_checkin_day, e.started_at, e.xp_earned,
              e.last_checkin_at
       from challenge_enrollments e join users u on u.id = e.user_id
       where e.challenge_id = $1
       order by e.completed_days desc, e.xp_earned desc, e.last_checkin_at asc nulls last, e.id
       limit $2`,
      [url.searchParams.get('c'), 51],
    );
    return { data: rows.rows.slice(0, 50), pagination: { page: 1, per_page: 50, has_more: rows.rows.length > 50 } };
  });

/** How the service's gateway ran queries so far: on one subgraph's schema, as a local plan, or through the gateway again. */
export function executionPaths(service: Service): string {
  const { direct, local, fallback, fixed } = service.graph.direct;
  return `  execution: ${direct} direct on one subgraph, ${local} local plans (${fixed} of these without Apollo Server's pipeline: known REST and /graphql texts), ${fallback} run again through the gateway`;
}

/**
 * The lookups the service runs around a tribe's list, as texts it sends and prepared as it prepares them, for the
 * benches' bare handlers that run the service's own statements with nothing of ours around them.
 */
export const serviceStatements = {
  /** Users by id, every column (`identity_users_by_ids`: authors, participants, members). */
  users: (pool: pg.Pool, ids: string[]) =>
    pool.query({
      name: 'bench_users_by_ids',
      text: `select id, email, username, display_name, avatar_url, bio, location, links, password_hash, idp_subject,
                    email_verified_at, created_at, suspended_at, suspended_until, suspension_reason from users
             where id = any($1::uuid[])`,
      values: [[...new Set(ids)]],
    }),
};

/**
 * Where a subject's time per request goes, from three runs of one process: the anchor (the one equivalent query),
 * `same` (a bare handler running the subject's own statements in turn) and the subject. Time per request is the
 * inverse of the throughput of the one Node.js thread all three share with the load generator.
 */
export function costSplit(subject: LoadResult, same: LoadResult, anchor: LoadResult, statements: string): string {
  const ms = (r: LoadResult) => 1000 / r.rps;
  return (
    `  of the subject's ${ms(subject).toFixed(2)} ms per request: the anchor's work ${ms(anchor).toFixed(2)} ms, ` +
    `${statements} ${(ms(same) - ms(anchor)).toFixed(2)} ms, the layers of ours ${(ms(subject) - ms(same)).toFixed(2)} ms`
  );
}

/**
 * Issue 32's goals in one process: the resource API's posts list, the Platform API's members page and the leaderboard
 * at `lists` of their anchors, the feeds at `feeds`, and every row's p99 at most `p99` times its anchor's.
 */
export const ISSUE_32 = { lists: 0.75, feeds: 0.6, p99: 1.5 } as const;

/**
 * Prints a figure beside its anchor as a ratio; with `goal`, the goal of its throughput ratio and of its p99 ratio
 * (`p99Goal`, default 2x) beside them.
 */
export function report(name: string, subject: LoadResult, anchor: LoadResult, goal?: number, p99Goal = 2): void {
  const ratio = subject.rps / anchor.rps;
  console.log(`${name}`);
  console.log(`  subject: ${subject.rps.toFixed(0)} req/s, p99 ${subject.p99} ms (errors ${subject.errors}, non-2xx ${subject.non2xx})`);
  console.log(`  anchor : ${anchor.rps.toFixed(0)} req/s, p99 ${anchor.p99} ms (errors ${anchor.errors}, non-2xx ${anchor.non2xx})`);
  console.log(`  ratio  : ${ratio.toFixed(3)}${goal ? ` (goal >= ${goal})` : ''}`);
  console.log(`  p99    : ${subject.p99} ms vs anchor ${anchor.p99} ms at 16 connections, ${(subject.p99 / anchor.p99).toFixed(2)}x${goal ? ` (goal <= ${p99Goal}x)` : ''}`);
}

/**
 * The posts list the profiling scripts load (bench/profile-posts.ts, bench/cpu-per-request.ts), seeded like
 * bench/posts.bench.ts: ten authors, a tribe, 500 posts, fresh statistics; its URL and the first author's access token.
 */
export async function seedPostsList(base: string, pool: pg.Pool): Promise<{ token: string; url: string; communityId: string }> {
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
  return { token, url: `${base}/v1/communities/${tribe.data.id}/posts?per_page=50`, communityId: tribe.data.id };
}

/**
 * The leaderboard bench/leaderboard.bench.ts and bench/profile-leaderboard.ts load: a tribe, a challenge and
 * `participants` members enrolled with spread-out progress (seeded with SQL), fresh statistics; the owner's headers
 * and the URL of the first page of 50.
 */
export async function seedLeaderboard(
  base: string,
  pool: pg.Pool,
  participants: number,
): Promise<{ headers: Record<string, string>; communityId: string; challengeId: string; url: string }> {
  const json = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(base + path, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });
    return { status: res.status, body: (await res.json()) as any };
  };
  const tag = randomBytes(4).toString('hex');
  const signup = await json('/auth/signup', {
    method: 'POST',
    body: JSON.stringify({ email: `lb_${tag}@example.com`, password: 'bench-password-1', username: `lb_${tag}`, displayName: `Bench ${tag}` }),
  });
  if (signup.status !== 201) throw new Error(`signup: ${signup.status}`);
  const login = await json('/v1/auth/login', { method: 'POST', body: JSON.stringify({ email: `lb_${tag}@example.com`, password: 'bench-password-1' }) });
  const headers = { authorization: `Bearer ${login.body.data.access_token}` };
  const tribe = await json('/v1/communities', { method: 'POST', headers, body: JSON.stringify({ name: `Leaderboard ${tag}`, handle: `lb-${tag}` }) });
  const communityId: string = tribe.body.data.id;
  const challenge = await json(`/v1/communities/${communityId}/challenges`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ title: 'Bench challenge', duration_days: 30, challenge_type: 'daily', access_type: 'free', xp_reward: 100 }),
  });
  const challengeId: string = challenge.body.data.id;

  // The participants seeded with SQL: users, memberships and enrollments with spread-out progress.
  await pool.query(
    `insert into users (email, username, display_name)
     select 'lb_' || $1 || '_' || g || '@example.com', 'lb_' || $1 || '_' || g, 'Participant ' || g from generate_series(1, $2::int) g`,
    [tag, participants],
  );
  await pool.query(
    `insert into members (community_id, user_id, role)
     select $1, id, 'member' from users where username like 'lb\\_' || $2 || '\\_%'`,
    [communityId, tag],
  );
  await pool.query(
    `insert into challenge_enrollments (challenge_id, community_id, user_id, status, started_at, completed_days, streak_run,
                                        last_checkin_day, last_checkin_at, xp_earned)
     select $1, $2, u.id, 'active', now() - interval '29 days', d.days, least(d.days, 1 + (d.n % 7)), d.days,
            now() - (d.n % 1000 || ' seconds')::interval, d.days * 10 + (d.n % 3) * 5
     from users u
     cross join lateral (select hashtext(u.username) & 2147483647 as n) h
     cross join lateral (select h.n as n, h.n % 30 as days) d
     where u.username like 'lb\\_' || $3 || '\\_%'`,
    [challengeId, communityId, tag],
  );
  await pool.query('analyze challenge_enrollments');
  const url = `${base}/v1/communities/${communityId}/challenges/${challengeId}/leaderboard?per_page=50`;
  return { headers, communityId, challengeId, url };
}

/**
 * autocannon in a child process (its options and URL in `args`), so that this process's CPU is the service's alone:
 * its summary lines once it ends.
 */
export const autocannonChild = (args: string[]) =>
  new Promise<string>((resolve) => {
    const child = spawn('node_modules/.bin/autocannon', args);
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.stderr.on('data', (d) => (text += d));
    child.on('close', () => resolve(text));
  });

/**
 * A CPU profile of this process (the service it runs) under autocannon in a child process (`args`: autocannon's
 * options and URL, 16 connections added): 3 s to warm up, then 10 s profiled; writes the profile to `out` and prints
 * autocannon's summary and the process's CPU over the 10 s. The profiling scripts' common part.
 */
export async function profileUnderLoad(out: string, args: string[]): Promise<void> {
  const cannon = (seconds: number) => autocannonChild(['-c', '16', '-d', String(seconds), ...args]);
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await cannon(3);
  await session.post('Profiler.start');
  const cpu = process.cpuUsage();
  const summary = await cannon(10);
  const used = process.cpuUsage(cpu);
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  writeFileSync(out, JSON.stringify(profile));
  console.log(summary.split('\n').filter((line) => /Req\/Sec|requests in|non-2xx/.test(line)).join('\n'));
  console.log(`service CPU ${((used.user + used.system) / 1e6).toFixed(2)} s over 10 s; profile written to ${out}`);
}
