// Issue 15 (scale): one tribe with 1,000,000 members and 1,000,000 posts, seeded by SQL (generate_series) in a
// database of its own (BENCH_SCALE_DATABASE, default `bench_scale`, on BENCH_DATABASE_URL's server). Prints the
// Platform API members list (`GET /v1/members?pageSize=100`) at page 1 and at page 5,000, and the resource API
// posts list (`GET /v1/communities/:id/posts?per_page=50`) at page 1 and at page 1,000: requests per second and
// p99 of each, and the deep page's cost against the first page's (first rps / deep rps; goal at most 3), plus the
// SQL time of the list query alone at each page (EXPLAIN ANALYZE). The seed is kept between runs (a few minutes
// the first time); BENCH_SCALE_RESEED=1 drops the database and seeds it again.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { BENCH_DATABASE_URL, load, startBenchService, type LoadResult } from './lib.js';

const MEMBERS = 1_000_000;
const POSTS = 1_000_000;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const PASSWORD = 'bench-password-1';

const scaleUrl = (): { url: string; name: string } => {
  const name = process.env.BENCH_SCALE_DATABASE ?? 'bench_scale';
  const url = new URL(BENCH_DATABASE_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), name };
};

async function json(base: string, path: string, init: RequestInit = {}) {
  const res = await fetch(base + path, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
}

/**
 * Creates the scale database when absent; drops it first when BENCH_SCALE_RESEED=1 or when an earlier seed did not
 * finish (no row in `bench_scale_seed`).
 */
async function ensureDatabase(name: string, url: string): Promise<void> {
  const admin = new pg.Client({ connectionString: BENCH_DATABASE_URL });
  await admin.connect();
  try {
    let keep = false;
    const found = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount && process.env.BENCH_SCALE_RESEED !== '1') {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      const seeded = await c.query("select to_regclass('bench_scale_seed') is not null as t");
      keep = seeded.rows[0].t && ((await c.query('select 1 from bench_scale_seed')).rowCount ?? 0) > 0;
      await c.end();
    }
    if (!keep) {
      await admin.query(`drop database if exists "${name}" with (force)`);
      await admin.query(`create database "${name}"`);
    }
  } finally {
    await admin.end();
  }
}

interface Seed {
  communityId: string;
  ownerEmail: string;
  apiKey: string;
}

const step = async (what: string, run: () => Promise<unknown>) => {
  const started = performance.now();
  await run();
  console.log(`  seed: ${what} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
};

/** The seed of an earlier run, or a new one: the owner by the API, then members and posts by SQL. */
async function seed(base: string, pool: pg.Pool): Promise<Seed> {
  await pool.query('create table if not exists bench_scale_seed (community_id uuid not null, owner_email text not null, api_key text not null)');
  const done = await pool.query('select community_id, owner_email, api_key from bench_scale_seed limit 1');
  if (done.rows[0]) return { communityId: done.rows[0].community_id, ownerEmail: done.rows[0].owner_email, apiKey: done.rows[0].api_key };

  const tag = randomBytes(4).toString('hex');
  const ownerEmail = `scale_owner_${tag}@example.com`;
  const signup = await json(base, '/auth/signup', {
    method: 'POST',
    body: JSON.stringify({ email: ownerEmail, password: PASSWORD, username: `scale_owner_${tag}`, displayName: 'Scale owner' }),
  });
  const cookie = String(signup.headers.get('set-cookie')).split(';')[0];
  const tribe = await json(base, '/graphql', {
    method: 'POST',
    headers: { cookie },
    body: JSON.stringify({ query: `mutation { createCommunity(input: {name: "Scale ${tag}", handle: "scale-${tag}"}) { id } }` }),
  });
  const communityId: string = tribe.body.data.createCommunity.id;
  const created = await json(base, `/communities/scale-${tag}/api-keys`, {
    method: 'POST',
    headers: { cookie },
    body: JSON.stringify({ name: 'scale bench', scopes: ['members:read'] }),
  });
  const apiKey: string = created.body.key;

  console.log(`  seeding ${MEMBERS} members and ${POSTS} posts (once; kept in the database for later runs)`);
  await step(`${MEMBERS} users and their memberships`, () =>
    pool.query(
      `with u as (
         insert into users (email, username, display_name, created_at)
         select 'scale_' || g || '@example.com', 'scale_' || g, 'Scale member ' || g, now() - (g || ' seconds')::interval
         from generate_series(1, $2::int) g
         returning id, created_at)
       insert into members (community_id, user_id, role, joined_at, last_active_at)
       select $1, u.id, 'member', u.created_at, u.created_at from u`,
      [communityId, MEMBERS],
    ),
  );
  await step(`${POSTS} posts`, () =>
    pool.query(
      `with authors as (select array_agg(user_id) ids from (select user_id from members where community_id = $1 limit 1000) a)
       insert into posts (community_id, author_id, body, visibility, status, published_at, created_at, updated_at, active_at)
       select $1, authors.ids[1 + (g % 1000)], '<p>post ' || g || '</p>',
              case when g % 10 = 0 then 'members' else 'public' end, 'published',
              now() - (g || ' seconds')::interval, now() - (g || ' seconds')::interval, now() - (g || ' seconds')::interval,
              now() - (g || ' seconds')::interval
       from generate_series(1, $2::int) g, authors`,
      [communityId, POSTS],
    ),
  );
  await step('vacuum analyze', async () => {
    for (const table of ['users', 'members', 'posts']) await pool.query(`vacuum analyze ${table}`);
  });
  await pool.query('insert into bench_scale_seed (community_id, owner_email, api_key) values ($1, $2, $3)', [communityId, ownerEmail, apiKey]);
  return { communityId, ownerEmail, apiKey };
}

/** Execution time (ms) of `query` by EXPLAIN ANALYZE, best of three, and whether its plan reads the heap per row. */
async function sqlTime(pool: pg.Pool, query: string, params: unknown[]): Promise<{ ms: number; plan: string }> {
  let best = Infinity;
  let plan = '';
  for (let i = 0; i < 3; i += 1) {
    const r = await pool.query(`explain (analyze, buffers, format json) ${query}`, params);
    const top = r.rows[0]['QUERY PLAN'][0];
    if (top['Execution Time'] < best) best = top['Execution Time'];
    plan = nodeTypes(top.Plan).join(' > ');
  }
  return { ms: best, plan };
}

const nodeTypes = (node: any): string[] => [
  `${node['Node Type']}${node['Index Name'] ? ` (${node['Index Name']})` : ''}`,
  ...(node.Plans ?? []).flatMap(nodeTypes),
];

function line(name: string, r: LoadResult): string {
  return `${name}: ${r.rps.toFixed(0)} req/s, p99 ${r.p99} ms (errors ${r.errors}, non-2xx ${r.non2xx})`;
}

function compare(title: string, first: LoadResult, deep: LoadResult, sqlFirst: number, sqlDeep: number): void {
  const cost = first.rps / deep.rps;
  console.log(title);
  console.log(`  ${line('first page', first)}; SQL ${sqlFirst.toFixed(2)} ms`);
  console.log(`  ${line('deep page ', deep)}; SQL ${sqlDeep.toFixed(2)} ms`);
  console.log(
    `  ratio deep/first: rps ${(deep.rps / first.rps).toFixed(3)}, cost ${cost.toFixed(2)}x (goal <= 3), p99 ${(deep.p99 / Math.max(first.p99, 1)).toFixed(2)}x, SQL ${(sqlDeep / sqlFirst).toFixed(1)}x`,
  );
}

export default async function scaleBench(): Promise<void> {
  const { url, name } = scaleUrl();
  await ensureDatabase(name, url);
  const { service, base } = await startBenchService({ DATABASE_URL: url, WORKER_ENABLED: 'false', RATE_LIMIT_PER_MINUTE: '1000000000' });
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  try {
    const s = await seed(base, pool);
    const login = await json(base, '/v1/auth/login', { method: 'POST', body: JSON.stringify({ email: s.ownerEmail, password: PASSWORD }) });
    const token: string = login.body.data.access_token;

    const members = (page: number) => `/v1/members?pageSize=100&page=${page}`;
    const posts = (page: number) => `/v1/communities/${s.communityId}/posts?per_page=50&page=${page}`;
    const keyHeaders = { authorization: `Bearer ${s.apiKey}` };
    const tokenHeaders = { authorization: `Bearer ${token}` };
    // The members list's deep pages seek from sort keys remembered for 5 s (members.repository.ts): the first
    // request finds them (one step of 5,000 entries per statement), later ones within 5 s seek.
    const coldStart = performance.now();
    await json(base, members(5000), { headers: keyHeaders });
    const coldMs = performance.now() - coldStart;
    for (const [path, headers, size] of [
      [members(1), keyHeaders, 100],
      [members(5000), keyHeaders, 100],
      [posts(1), tokenHeaders, 50],
      [posts(1000), tokenHeaders, 50],
    ] as const) {
      const check = await json(base, path, { headers });
      if (check.status !== 200 || check.body.data.length !== size) {
        throw new Error(`unexpected response to ${path}: ${check.status} ${JSON.stringify(check.body).slice(0, 200)}`);
      }
    }

    // The list queries alone as a plain offset (deferred join since migration 0021; the members service seeks from a
    // remembered key instead at offsets of 5,000 and more).
    const memberSql = `select m.* from members m where m.id in (
        select id from members where community_id = $1 order by joined_at desc, id desc limit $2 offset $3)
      order by m.joined_at desc, m.id desc`;
    const postSql = `select p.* from posts p where p.id in (
        select id from posts where community_id = $1 and status = 'published' and visibility = any($4) and removed_at is null
        order by created_at desc, id desc limit $2 offset $3)
      order by p.created_at desc, p.id desc`;
    // The same lists with a plain OFFSET over the whole rows (before migration 0021), for comparison.
    const memberPlain = 'select * from members where community_id = $1 order by joined_at desc, id desc limit $2 offset $3';
    const postPlain = `select * from posts where community_id = $1 and status = 'published' and visibility = any($4) and removed_at is null
        order by created_at desc, id desc limit $2 offset $3`;
    const visible = ['public', 'members', 'paid'];
    const m1 = await sqlTime(pool, memberSql, [s.communityId, 100, 0]);
    const m5000 = await sqlTime(pool, memberSql, [s.communityId, 100, 4999 * 100]);
    const p1 = await sqlTime(pool, postSql, [s.communityId, 51, 0, visible]);
    const p1000 = await sqlTime(pool, postSql, [s.communityId, 51, 999 * 50, visible]);
    const m5000Plain = await sqlTime(pool, memberPlain, [s.communityId, 100, 4999 * 100]);
    const p1000Plain = await sqlTime(pool, postPlain, [s.communityId, 51, 999 * 50, visible]);

    // Warm-up, then first and deep page alternately, twice; the better run of each.
    const best = (runs: LoadResult[]) => runs.reduce((a, b) => (b.rps > a.rps ? b : a));
    const measure = async (path: string, headers: Record<string, string>) => {
      await load(base + path, headers, 1);
      return load(base + path, headers, SECONDS);
    };
    const runs = { m1: [] as LoadResult[], m5000: [] as LoadResult[], p1: [] as LoadResult[], p1000: [] as LoadResult[] };
    for (let round = 0; round < 2; round += 1) {
      runs.m1.push(await measure(members(1), keyHeaders));
      runs.m5000.push(await measure(members(5000), keyHeaders));
      runs.p1.push(await measure(posts(1), tokenHeaders));
      runs.p1000.push(await measure(posts(1000), tokenHeaders));
    }
    console.log(`Scale: one tribe with ${MEMBERS} members and ${POSTS} posts, 16 connections, ${SECONDS} s per run, best of 2 runs`);
    compare('GET /v1/members?pageSize=100 (Platform API): page 1 vs page 5,000 (offset 499,900)', best(runs.m1), best(runs.m5000), m1.ms, m5000.ms);
    console.log(`  plan at page 5,000: ${m5000.plan}; plain OFFSET: SQL ${m5000Plain.ms.toFixed(2)} ms (${m5000Plain.plan})`);
    console.log(`  page 5,000 with no key remembered (first request; again every 5 s within the runs above): ${coldMs.toFixed(0)} ms`);
    compare('GET /v1/communities/:id/posts?per_page=50 (resource API): page 1 vs page 1,000 (offset 49,950)', best(runs.p1), best(runs.p1000), p1.ms, p1000.ms);
    console.log(`  plan at page 1,000: ${p1000.plan}; plain OFFSET: SQL ${p1000Plain.ms.toFixed(2)} ms (${p1000Plain.plan})`);
    console.log(`  runs: members p1 ${runs.m1.map((r) => r.rps.toFixed(0)).join(', ')}; p5000 ${runs.m5000.map((r) => r.rps.toFixed(0)).join(', ')}; posts p1 ${runs.p1.map((r) => r.rps.toFixed(0)).join(', ')}; p1000 ${runs.p1000.map((r) => r.rps.toFixed(0)).join(', ')} req/s`);
  } finally {
    await pool.end();
    await service.stop();
  }
}
