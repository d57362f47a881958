// Issue 3: GET /v1/members?pageSize=100 (Platform API, API key) over the real PostgreSQL, beside a bare node:http
// handler running the same SQL (key lookup, members page, their users) in the same run; and the cost of the
// per-key rate limiter (on versus off, RATE_LIMIT_ENABLED=false exists for this measurement only).
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { BENCH_DATABASE_URL, bareServer, costSplit, executionPaths, median, serviceStatements, load, report, startBenchService, type LoadResult, ISSUE_32 } from './lib.js';

const MEMBERS = 150;
const SECONDS = 6;

async function json(base: string, path: string, init: RequestInit = {}) {
  const res = await fetch(base + path, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
}


export default async function platformBench(): Promise<void> {
  // A limit no load reaches: the limiter still counts every request.
  const limited = await startBenchService({ RATE_LIMIT_PER_MINUTE: '1000000000', WORKER_ENABLED: 'false' });
  const unlimited = await startBenchService({ RATE_LIMIT_ENABLED: 'false', WORKER_ENABLED: 'false' });
  const pool = new pg.Pool({ connectionString: BENCH_DATABASE_URL, max: 10 });
  try {
    const base = limited.base;
    const tag = randomBytes(4).toString('hex');
    const signup = await json(base, '/auth/signup', {
      method: 'POST',
      body: JSON.stringify({ email: `pbench_${tag}@example.com`, password: 'bench-password-1', username: `pb_${tag}`, displayName: 'Bench owner' }),
    });
    const cookie = String(signup.headers.get('set-cookie')).split(';')[0];
    const tribe = await json(base, '/graphql', {
      method: 'POST',
      headers: { cookie },
      body: JSON.stringify({ query: `mutation { createCommunity(input: {name: "Platform bench ${tag}", handle: "pbench-${tag}"}) { id } }` }),
    });
    const communityId: string = tribe.body.data.createCommunity.id;
    await pool.query(
      `with u as (
         insert into users (email, username, display_name)
         select 'pbench_' || $2 || '_' || g || '@example.com', 'pb_' || $2 || '_' || g, 'Bench member ' || g
         from generate_series(1, $3::int) g
         returning id, username)
       insert into members (community_id, user_id, role, joined_at)
       select $1, u.id, 'member', now() - (row_number() over (order by u.username) || ' minutes')::interval from u`,
      [communityId, tag, MEMBERS],
    );
    const created = await json(base, `/communities/pbench-${tag}/api-keys`, {
      method: 'POST',
      headers: { cookie },
      body: JSON.stringify({ name: 'bench', scopes: ['members:read'] }),
    });
    const key: string = created.body.key;
    const headers = { authorization: `Bearer ${key}` };
    const path = '/v1/members?pageSize=100';

    const check = await json(base, path, { headers });
    if (check.status !== 200 || check.body.data.length !== 100) throw new Error(`unexpected response ${check.status} ${JSON.stringify(check.body).slice(0, 200)}`);
    const before = limited.service.deps.database.stats.statements;
    await json(base, path, { headers });
    const statements = limited.service.deps.database.stats.statements - before;

    // The same SQL the facade sends, shaped into the same envelope.
    const bare = await bareServer(async (url) => {
      const hash = createHash('sha256').update(url.searchParams.get('key') ?? '').digest('hex');
      const keyRow = await pool.query(
        'select id, community_id, scopes, last_used_at from api_keys where key_hash = $1 and revoked_at is null limit 1',
        [hash],
      );
      const k = keyRow.rows[0];
      if (!k || !k.scopes.includes('members:read')) throw new Error('bad key');
      const members = await pool.query(
        `select id, community_id, user_id, role, xp, level, joined_at from members where community_id = $1
         order by joined_at desc, id desc limit $2 offset $3`,
        [k.community_id, 100, 0],
      );
      const users = await pool.query('select id, username, display_name, avatar_url from users where id = any($1)', [members.rows.map((m) => m.user_id)]);
      const byId = new Map(users.rows.map((u) => [u.id, u]));
      const data = members.rows.map((m) => {
        const u = byId.get(m.user_id);
        return {
          object: 'member',
          userId: m.user_id,
          username: u.username,
          displayName: u.display_name,
          avatarUrl: u.avatar_url,
          role: m.role,
          xp: m.xp,
          level: m.level,
          joinedAt: m.joined_at.toISOString(),
        };
      });
      return { object: 'list', data, page: 1, pageSize: 100, hasMore: data.length === 100 };
    });
    const bareUrl = `${bare.base}/?key=${key}`;
    // The service's own two statements per request (the key, the page: the tribe and the members' users are
    // remembered across requests since migration 0024), one after another with nothing of ours around them and the
    // users from memory as the service has them. Information only: the anchor stays the three statements a bare
    // handler needs.
    const usersById = new Map<string, unknown>();
    const statementsServer = await bareServer(async (url) => {
      const hash = createHash('sha256').update(url.searchParams.get('key') ?? '').digest('hex');
      const keyRow = await pool.query({
        name: 'bench_api_key_by_hash',
        text: 'select id, community_id, scopes, last_used_at from api_keys where key_hash = $1 and revoked_at is null limit $2',
        values: [hash, 1],
      });
      const k = keyRow.rows[0];
      if (!k || !k.scopes.includes('members:read')) throw new Error('bad key');
      const members = await pool.query({
        name: 'bench_members_page',
        text: `select id, community_id, user_id, role, xp, level, joined_at, last_active_at from members where id in (
                 select id from members where community_id = $1 order by joined_at desc, id desc limit $2 offset $3)
               order by joined_at desc, id desc`,
        values: [k.community_id, 101, 0],
      });
      const unknown = members.rows.map((m) => m.user_id).filter((id) => !usersById.has(id));
      if (unknown.length > 0) for (const u of (await serviceStatements.users(pool, unknown)).rows) usersById.set(u.id, u);
      const data = members.rows.slice(0, 100).map((m) => ({ ...m, user: usersById.get(m.user_id) }));
      return { object: 'list', data, page: 1, pageSize: 100, hasMore: members.rows.length > 100 };
    });
    const statementsUrl = `${statementsServer.base}/?key=${key}`;

    // Warm-up, then alternate the three subjects so drift of the machine hits all alike; medians of three runs.
    await load(base + path, headers, 2);
    await load(unlimited.base + path, headers, 2);
    await load(bareUrl, {}, 2);
    await load(statementsUrl, {}, 2);
    const on: LoadResult[] = [];
    const same: LoadResult[] = [];
    const off: LoadResult[] = [];
    const anchor: LoadResult[] = [];
    for (let round = 0; round < 3; round += 1) {
      on.push(await load(base + path, headers, SECONDS));
      off.push(await load(unlimited.base + path, headers, SECONDS));
      anchor.push(await load(bareUrl, {}, SECONDS));
      same.push(await load(statementsUrl, {}, SECONDS));
    }
    await bare.close();
    await statementsServer.close();

    const facade = median(on);
    report('GET /v1/members?pageSize=100 (Platform API via gateway, rate limiter on) vs bare node:http + the same SQL', facade, median(anchor), ISSUE_32.lists, ISSUE_32.p99);
    report('  (information) bare node:http running the service\'s two statements in turn vs the anchor', median(same), median(anchor));
    console.log(costSplit(facade, median(same), median(anchor), 'the service\'s two statements and full rows instead of the anchor\'s three'));
    console.log(executionPaths(limited.service));
    console.log(`  SQL statements per request: ${statements}`);
    const onRps = on.reduce((s, r) => s + r.rps, 0) / on.length;
    const offRps = off.reduce((s, r) => s + r.rps, 0) / off.length;
    report('Rate limiter on vs off (RATE_LIMIT_ENABLED=false), same request', median(on), median(off), 0.95);
    console.log(`  limiter cost (mean of ${on.length} runs each): ${(((offRps - onRps) / offRps) * 100).toFixed(1)}% (goal < 5%)`);
    console.log(`  runs on : ${on.map((r) => r.rps.toFixed(0)).join(', ')} req/s`);
    console.log(`  runs off: ${off.map((r) => r.rps.toFixed(0)).join(', ')} req/s`);
  } finally {
    await pool.end();
    await limited.service.stop();
    await unlimited.service.stop();
  }
}
