// The social data set of issue 11's benchmark, built with set-based SQL (generate_series, INSERT ... SELECT) in one
// transaction: 200 tribes, 1,000,000 posts, 200,000 comments, 1,000,000 reactions, 50,000 users in 5 tribes each, and
// one bench user (`bench_feed`) in 50 tribes (some private), plus the counters the feeds sort by (reaction_count,
// comment_count, hot_score, active_at) and members' last activity, aggregated from the inserted rows.
//
//   node --import tsx bench/seed-social.ts [--fresh]      (database: BENCH_DATABASE_URL)
//
// Idempotent: a row in `bench_seed` marks a finished seed of the same size, and a rerun reuses it. `--fresh` (or a
// marker of another size, or seed rows without a marker) wipes the database's public schema and seeds again.
// test/feed-explain.test.ts seeds a tenth of it (SCALES.explain) in a database of its own.
//
// The shape, all deterministic but the text of bodies:
// - user i (1..U) belongs to the 5 tribes (r + 40j) mod 200 (r = (i - 1) mod 200, j = 0..4): 1,250 members a tribe
//   (one owner, an admin, moderators, members); member k of tribe c is user `member(c, k)`.
// - tribe sizes are skewed (c = 200 * x^2: the largest has about 70,000 posts, the smallest about 2,500); every fourth
//   tribe is private. The bench user's tribes are (37k) mod 200, k < 50: big and small ones, 12 private.
// - post n: published over the last 365 days (1 in 100 a draft), 72% public, 23% members-only, 5% paid, one in 5,000
//   pinned; body of 12 common words plus two rare tokens (`kw<n mod 20000>`, `topic<n mod 500>`) for search.
// - reactions and comments go to posts with a skewed popularity (a few posts get ~1,000 reactions and ~200
//   comments, half get none); reactors and commenters are members of the post's tribe, one reaction per
//   (post, user), kinds 40% LIKE, 20% LOVE, 12% LAUGH, 12% CELEBRATE, 10% INSIGHTFUL, 6% CURIOUS; 30% of later
//   comments reply to the post's first comment.
import { fileURLToPath } from 'node:url';
import { migrate, openDatabase } from '../db/src/index.js';

export interface SeedScale {
  tribes: number;
  users: number;
  posts: number;
  comments: number;
  reactions: number;
  benchTribes: number;
}

export const SCALES = {
  bench: { tribes: 200, users: 50_000, posts: 1_000_000, comments: 200_000, reactions: 1_000_000, benchTribes: 50 },
  explain: { tribes: 200, users: 20_000, posts: 100_000, comments: 20_000, reactions: 100_000, benchTribes: 50 },
} satisfies Record<string, SeedScale>;

export const BENCH_USERNAME = 'bench_feed';

export interface SeedResult {
  reused: boolean;
  seconds: number;
  benchUserId: string;
  /** The bench user's tribes, most published posts first: ids, whether each is public, published posts. */
  benchTribes: Array<{ id: string; isPublic: boolean; posts: number }>;
  counts: Record<string, number>;
}

/** Deterministic ids, so later statements compute a row's id instead of looking it up. */
const ID = {
  user: (i: string) => `md5('seed_u' || ${i})::uuid`,
  tribe: (c: string) => `md5('seed_c' || ${c})::uuid`,
  post: (n: string) => `md5('seed_p' || ${n})::uuid`,
  comment: (g: string) => `md5('seed_m' || ${g})::uuid`,
  bench: `md5('seed_bench')::uuid`,
};

const WORDS = `community garden morning coffee project launch design feedback question answer workshop meeting weekly
  update photo travel mountain river music guitar recipe dinner kitchen running training marathon coding typescript
  database server release bug feature review planning budget invoice client market product growth story lesson
  course challenge streak habit reading book library podcast episode interview video stream camera light shadow city
  street bicycle weekend holiday summer winter autumn spring garden flower forest ocean beach sunset evening friends
  family birthday party celebration milestone welcome introduce hello thanks amazing wonderful curious insight idea
  strategy marketing newsletter launchpad volunteer charity fundraiser event webinar livestream meetup hackathon
  prototype sketch painting canvas pottery ceramics knitting woodwork garage engine repair electric solar battery`
  .split(/\s+/)
  .filter(Boolean);

const SEED_LOCK = 72_430_011;

/** `x` as SQL text: a float literal (the irrational steps of the Weyl sequences below). */
const f = (x: number) => x.toPrecision(17);

/** The SQL functions the statements share (session-local: pg_temp), for tribe count `T` and `M` members a tribe. */
function functionsSql(s: SeedScale): string {
  const T = s.tribes;
  const step = T / 5;
  const P1 = (s.posts / 100) * 99;
  return `
    -- fractional part of n * a: an equidistributed sequence in [0, 1) for each irrational a
    create function pg_temp.fr(n bigint, a float8) returns float8 immutable language sql as $$ select n * a - floor(n * a) $$;
    -- user (1..U) who is member k (0..M-1) of tribe c
    create function pg_temp.member(c int, k int) returns int immutable language sql
      as $$ select 1 + (k / 5) * ${T} + (((c - (k % 5) * ${step}) % ${T}) + ${T}) % ${T} $$;
    -- tribe of post n: skewed sizes
    create function pg_temp.tribe(n bigint) returns int immutable language sql
      as $$ select least(${T - 1}, floor(${T} * power(pg_temp.fr(n, ${f((Math.sqrt(5) - 1) / 2)}), 2))::int) $$;
    -- the k-th published post (0-based; post n is a draft when n % 100 = 0)
    create function pg_temp.pub_n(k bigint) returns bigint immutable language sql as $$ select k + k / 99 + 1 $$;
    -- the k-th published post of a popularity rank p (a permutation of 0..P1-1, so popularity is not tied to time)
    create function pg_temp.popular(p bigint) returns bigint immutable language sql as $$ select pg_temp.pub_n((p * 7919) % ${P1}) $$;
    -- publication time of post n (t0: the seed's start)
    create function pg_temp.pub(n bigint, t0 timestamptz) returns timestamptz immutable language sql
      as $$ select t0 - pg_temp.fr(n, ${f(Math.SQRT2)}) * interval '365 days' $$;
  `;
}

/** Random text of `n` words from the vocabulary (`$1`), as a SQL expression. */
const words = (n: number) => Array.from({ length: n }, () => `($1::text[])[1 + floor(random() * ${WORDS.length})::int]`).join(` || ' ' || `);

/** Builds the data set on `client` (inside the caller's transaction). Returns the row counts of what it inserted. */
async function build(q: (text: string, values?: unknown[]) => Promise<{ rows: any[]; rowCount: number | null }>, s: SeedScale, log: (m: string) => void) {
  const T = s.tribes;
  const M = (5 * s.users) / T;
  const P1 = (s.posts / 100) * 99;
  if (T % 5 !== 0 || s.users % T !== 0 || s.posts % 100 !== 0 || s.benchTribes > T || T % 37 === 0) throw new Error('seed: bad scale');
  const timed = async (label: string, text: string, values?: unknown[]) => {
    const started = Date.now();
    const res = await q(text, values);
    log(`  ${label}: ${res.rowCount ?? 0} rows, ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return res;
  };
  await q(functionsSql(s));
  const t0 = (await q('select now() as t0')).rows[0].t0 as Date;
  const benchTribe = `(k * 37) % ${T}`;

  await timed(
    'users',
    `insert into users (id, email, username, display_name, bio, created_at)
     select ${ID.user('i')}, 'seed_u' || i || '@example.com', 'seed_u' || i, 'Seed User ' || i, '', $1::timestamptz - interval '450 days'
     from generate_series(1, ${s.users}) i
     union all
     select ${ID.bench}, '${BENCH_USERNAME}@example.com', '${BENCH_USERNAME}', 'Bench Reader', 'Reads the home feed of 50 tribes.',
            $1::timestamptz - interval '450 days'`,
    [t0],
  );
  await timed(
    'communities',
    `insert into communities (id, handle, name, description, is_public, created_by, created_at, updated_at)
     select ${ID.tribe('c')}, 'seed-tribe-' || c, 'Seed Tribe ' || c, 'A tribe of the social benchmark.', c % 4 <> 3,
            ${ID.user('pg_temp.member(c, 0)')}, $1::timestamptz - interval '500 days' + c * interval '1 hour',
            $1::timestamptz - interval '500 days' + c * interval '1 hour'
     from generate_series(0, ${T - 1}) c`,
    [t0],
  );
  // Reactions and comments come before their posts (foreign keys are checked once, set-based, after the load), so
  // that each post is inserted once with its counters computed from the rows that reference it.
  const isBenchTribe = (c: string) => `(${c} * ${inverse37(T)}) % ${T} < ${s.benchTribes}`;
  const bench = await timed(
    'reactions (bench user: every 40th published post of their tribes)',
    `insert into reactions (community_id, user_id, post_id, kind, created_at)
     select ${ID.tribe('c')}, ${ID.bench}, ${ID.post('n')}, case when n % 2 = 0 then 'LIKE' else 'LOVE' end, pg_temp.pub(n, $1::timestamptz)
     from generate_series(1, ${s.posts}) n
     cross join lateral (select pg_temp.tribe(n) as c) t
     where n % 100 <> 0 and n % 40 = 7 and ${isBenchTribe('c')}`,
    [t0],
  );
  const G = s.reactions - (bench.rowCount ?? 0);
  await timed(
    'reactions',
    `insert into reactions (community_id, user_id, post_id, kind, created_at)
     select ${ID.tribe('c')}, ${ID.user(`pg_temp.member(c, ((rank + n * 13) % ${M})::int)`)}, ${ID.post('n')},
            case when kf < 0.40 then 'LIKE' when kf < 0.60 then 'LOVE' when kf < 0.72 then 'LAUGH' when kf < 0.84 then 'CELEBRATE'
                 when kf < 0.94 then 'INSIGHTFUL' else 'CURIOUS' end,
            least($1::timestamptz, pg_temp.pub(n, $1::timestamptz) + pg_temp.fr(g, ${f(Math.sqrt(13))}) * interval '3 days')
     from (select g, p, g - min(g) over (partition by p) as rank
           from (select g, floor(${P1} * power(g::float8 / ${G}, 2))::bigint as p from generate_series(0, ${G - 1}) g) s) r
     cross join lateral (select pg_temp.popular(r.p) as n) t
     cross join lateral (select pg_temp.tribe(t.n) as c, pg_temp.fr(g, ${f(Math.sqrt(19))}) as kf) u
     where rank < ${M}`,
    [t0],
  );
  await timed(
    'comments',
    `insert into comments (id, post_id, community_id, author_id, parent_id, body, created_at)
     select ${ID.comment('g')}, ${ID.post('n')}, ${ID.tribe('c')}, ${ID.user(`pg_temp.member(c, ((rank * 7 + n) % ${M})::int)`)},
            case when rank > 0 and pg_temp.fr(g, ${f(Math.sqrt(17))}) < 0.3 then ${ID.comment('(g - rank)')} end,
            '<p>' || ${words(8)} || '</p>',
            least($2::timestamptz, pg_temp.pub(n, $2::timestamptz) + (rank + pg_temp.fr(g, ${f(Math.sqrt(23))})) * interval '2 hours')
     from (select g, p, g - min(g) over (partition by p) as rank
           from (select g, floor(${P1} * power(g::float8 / ${s.comments}, 2))::bigint as p from generate_series(0, ${s.comments - 1}) g) s) r
     cross join lateral (select pg_temp.popular(r.p) as n) t
     cross join lateral (select pg_temp.tribe(t.n) as c) u`,
    [WORDS, t0],
  );

  // Posts with the counters the feeds sort by, aggregated from the reaction and comment rows just inserted (the same
  // formula as bumpPostCounters and publishedScores in content.repository.ts): reaction_count, comment_count,
  // hot_score = log10(1 + reactions + 2 × comments) + epoch(published_at) / 45000, active_at = latest comment, else
  // the publication. A draft has none of them.
  const seedTribes = `(select ${ID.tribe('c')} from generate_series(0, ${T - 1}) c)`;
  await timed(
    'posts (counters from the aggregate of their reactions and comments)',
    `with r as (select post_id, count(*)::int as cnt from reactions where post_id is not null and community_id in ${seedTribes} group by post_id),
          m as (select post_id, count(*)::int as cnt, max(created_at) as last from comments
                where deleted_at is null and community_id in ${seedTribes} group by post_id)
     insert into posts (id, community_id, author_id, body, visibility, status, pinned_at, published_at, created_at, updated_at,
                        reaction_count, comment_count, hot_score, active_at)
     select t.id, ${ID.tribe('c')}, ${ID.user(`pg_temp.member(c, floor(${M} * pg_temp.fr(n, ${f(Math.sqrt(7))}))::int)`)},
            '<p>' || ${words(12)} || ' kw' || (n % 20000) || ' topic' || (n % 500) || '</p>',
            case when v < 0.72 then 'public' when v < 0.95 then 'members' else 'paid' end,
            case when draft then 'draft' else 'published' end,
            case when n % 5000 = 1 then pub + interval '1 hour' end,
            case when not draft then pub end,
            pub - interval '5 minutes', pub - interval '5 minutes',
            coalesce(r.cnt, 0), coalesce(m.cnt, 0),
            case when draft then 0 else log(greatest(1, 1 + coalesce(r.cnt, 0) + 2 * coalesce(m.cnt, 0))) + extract(epoch from pub)::float8 / 45000 end,
            case when not draft then greatest(pub, m.last) end
     from generate_series(1, ${s.posts}) n
     cross join lateral (select ${ID.post('n')} as id, pg_temp.tribe(n) as c, pg_temp.pub(n, $2::timestamptz) as pub, n % 100 = 0 as draft,
                                pg_temp.fr(n, ${f(Math.sqrt(3))}) as v) t
     left join r on r.post_id = t.id
     left join m on m.post_id = t.id`,
    [WORDS, t0],
  );

  // Memberships, each with its last activity (post, comment or reaction) in the tribe, else its join time.
  await timed(
    'members (last activity from the aggregate of posts, comments and reactions)',
    `with a as (
       select community_id, user_id, max(at) as last
       from (select community_id, author_id as user_id, max(published_at) as at from posts
             where published_at is not null and community_id in ${seedTribes} group by 1, 2
             union all
             select community_id, author_id, max(created_at) from comments where community_id in ${seedTribes} group by 1, 2
             union all
             select community_id, user_id, max(created_at) from reactions where community_id in ${seedTribes} group by 1, 2) x
       group by 1, 2)
     insert into members (community_id, user_id, role, joined_at, last_active_at)
     select mm.community_id, mm.user_id, mm.role, mm.joined_at, greatest(mm.joined_at, a.last)
     from (select ${ID.tribe('c')} as community_id, ${ID.user('i')} as user_id,
                  case when (i - 1) / ${T} > 0 then 'member' when j = 0 then 'owner' when j = 1 then 'admin' else 'moderator' end as role,
                  $1::timestamptz - interval '400 days' + pg_temp.fr(i * 5 + j, ${f(Math.sqrt(29))}) * interval '30 days' as joined_at
           from generate_series(1, ${s.users}) i
           cross join generate_series(0, 4) j
           cross join lateral (select (((i - 1) % ${T}) + j * ${T / 5}) % ${T} as c) t
           union all
           select ${ID.tribe(benchTribe)}, ${ID.bench}, 'member', $1::timestamptz - interval '420 days' + k * interval '1 day'
           from generate_series(0, ${s.benchTribes - 1}) k) mm
     left join a on a.community_id = mm.community_id and a.user_id = mm.user_id`,
    [t0],
  );
}

/** The inverse of 37 modulo `t` (the bench user's tribes are 37k mod t: tribe c is one when c × 37⁻¹ mod t < 50). */
function inverse37(t: number): number {
  for (let x = 1; x < t; x += 1) if ((37 * x) % t === 1) return x;
  throw new Error('seed: 37 has no inverse');
}

const TABLES = ['posts', 'comments', 'reactions', 'members'] as const;

/**
 * Seeds `url` at `scale` unless a finished seed of that scale is there (then reuses it). `fresh` wipes the public
 * schema first. Migrations are applied with the project's migrate() before anything else.
 */
export async function seedSocial(
  url: string,
  options: { scale?: SeedScale; fresh?: boolean; log?: (m: string) => void } = {},
): Promise<SeedResult> {
  const scale = options.scale ?? SCALES.bench;
  const log = options.log ?? ((m: string) => console.log(m));
  const started = Date.now();
  const database = await openDatabase({ url, poolSize: 2 });
  const pool = database.pool;
  if (!pool) throw new Error('seed-social needs PostgreSQL (a postgres:// URL)');
  const client = await pool.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [SEED_LOCK]);
    const marker = async () => {
      const exists = (await client.query(`select to_regclass('public.bench_seed') is not null as e`)).rows[0].e as boolean;
      if (!exists) return null;
      return ((await client.query(`select params, counts, seconds from bench_seed where name = 'social'`)).rows[0] ?? null) as {
        params: SeedScale;
        counts: Record<string, number>;
        seconds: number;
      } | null;
    };
    let found = options.fresh ? null : await marker();
    if (found && (Object.keys(scale) as Array<keyof SeedScale>).some((k) => found!.params[k] !== scale[k])) {
      log(`seed-social: the database holds a seed of another size (${JSON.stringify(found.params)}): seeding again`);
      found = null;
    }
    let wipe = options.fresh === true || (await marker()) !== null;
    if (!found) {
      const stale = (await client.query(`select to_regclass('public.users') is not null as e`)).rows[0].e
        ? (await client.query(`select 1 from users where username = $1`, [BENCH_USERNAME])).rowCount
        : 0;
      if (stale) wipe = true;
    }
    if (!found && wipe) {
      log('seed-social: wiping the public schema of the bench database');
      await client.query('drop schema if exists public cascade; create schema public');
    }
    await migrate(database);
    if (!found) {
      log(`seed-social: seeding ${JSON.stringify(scale)}`);
      await client.query('begin');
      try {
        await client.query(`set local maintenance_work_mem = '1GB'; set local work_mem = '256MB'; set local synchronous_commit = off`);
        await client.query(`select setseed(0.42)`);
        // Secondary indexes and foreign keys go during the bulk load and come back after it, with the same definitions
        // read from the catalog: building an index once over a million rows is faster than maintaining it row by row,
        // and adding a foreign key back checks every row with one join instead of a trigger per row.
        const tables = TABLES.map((t) => `public.${t}`);
        const indexes = (
          await client.query(
            `select c.relname as name, pg_get_indexdef(i.indexrelid) as def
             from pg_index i join pg_class c on c.oid = i.indexrelid
             where i.indrelid = any($1::regclass[]) and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)`,
            [tables],
          )
        ).rows as Array<{ name: string; def: string }>;
        const foreignKeys = (
          await client.query(
            `select conrelid::regclass::text as tbl, conname as name, pg_get_constraintdef(oid) as def
             from pg_constraint where contype = 'f' and conrelid = any($1::regclass[])`,
            [tables],
          )
        ).rows as Array<{ tbl: string; name: string; def: string }>;
        for (const fk of foreignKeys) await client.query(`alter table ${fk.tbl} drop constraint "${fk.name}"`);
        for (const ix of indexes) await client.query(`drop index public."${ix.name}"`);
        await build((text, values) => client.query(text, values), scale, log);
        let t = Date.now();
        for (const ix of indexes) await client.query(ix.def);
        log(`  ${indexes.length} secondary indexes built: ${((Date.now() - t) / 1000).toFixed(1)} s`);
        t = Date.now();
        for (const fk of foreignKeys) await client.query(`alter table ${fk.tbl} add constraint "${fk.name}" ${fk.def}`);
        log(`  ${foreignKeys.length} foreign keys added back (every row checked): ${((Date.now() - t) / 1000).toFixed(1)} s`);
        const counts = await countRows(client);
        const seconds = (Date.now() - started) / 1000;
        await client.query(`create table if not exists bench_seed (name text primary key, params jsonb not null, counts jsonb not null,
          seconds double precision not null, seeded_at timestamptz not null default now())`);
        await client.query(`insert into bench_seed (name, params, counts, seconds) values ('social', $1, $2, $3)`, [
          JSON.stringify(scale),
          JSON.stringify(counts),
          seconds,
        ]);
        await client.query('commit');
      } catch (error) {
        await client.query('rollback');
        throw error;
      }
      const t = Date.now();
      await client.query(`vacuum (analyze) users, communities, ${TABLES.join(', ')}`);
      log(`  vacuum analyze: ${((Date.now() - t) / 1000).toFixed(1)} s`);
    }
    const counts = found ? found.counts : await countRows(client);
    const benchUserId = (await client.query(`select id from users where username = $1`, [BENCH_USERNAME])).rows[0].id as string;
    const benchTribes = (
      await client.query(
        `select c.id, c.is_public, (select count(*) from posts p where p.community_id = c.id and p.status = 'published') as posts
         from members m join communities c on c.id = m.community_id where m.user_id = $1 order by 3 desc, 1`,
        [benchUserId],
      )
    ).rows.map((r) => ({ id: r.id as string, isPublic: r.is_public as boolean, posts: Number(r.posts) }));
    const seconds = (Date.now() - started) / 1000;
    log(
      found
        ? `seed-social: reusing the seed of ${found.seconds.toFixed(0)} s (${fmt(counts)}; --fresh to seed again)`
        : `seed-social: seeded in ${seconds.toFixed(1)} s (${fmt(counts)})`,
    );
    return { reused: found !== null, seconds: found ? 0 : seconds, benchUserId, benchTribes, counts };
  } finally {
    await client.query('select pg_advisory_unlock($1)', [SEED_LOCK]).catch(() => undefined);
    client.release();
    await database.close();
  }
}

async function countRows(client: { query(text: string): Promise<{ rows: any[] }> }): Promise<Record<string, number>> {
  const row = (
    await client.query(`select (select count(*) from communities) as tribes, (select count(*) from users) as users,
      (select count(*) from members) as members, (select count(*) from posts) as posts, (select count(*) from comments) as comments,
      (select count(*) from reactions) as reactions`)
  ).rows[0];
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)]));
}

const ORDER = ['tribes', 'users', 'members', 'posts', 'comments', 'reactions'];
const fmt = (counts: Record<string, number>) => ORDER.map((k) => `${k} ${Number(counts[k]).toLocaleString('en')}`).join(', ');

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { BENCH_DATABASE_URL } = await import('./lib.js');
  await seedSocial(BENCH_DATABASE_URL, { fresh: process.argv.includes('--fresh') });
}
