// Issue 2: GET /v1/communities/:id/posts?per_page=50 over the real PostgreSQL, beside a bare node:http
// handler running the one equivalent SQL query in the same run; and SQL statements per list request.
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { BENCH_DATABASE_URL, alternate, bareServer, costSplit, executionPaths, serviceStatements, report, startBenchService, ISSUE_32, postsAnchor } from './lib.js';

async function json(base: string, path: string, init: RequestInit = {}) {
  const res = await fetch(base + path, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
}

export default async function postsBench(): Promise<void> {
  const { service, base } = await startBenchService();
  const pool = new pg.Pool({ connectionString: BENCH_DATABASE_URL, max: 10 });
  try {
    const tag = randomBytes(4).toString('hex');
    const authors: string[] = [];
    let token = '';
    let ownerCookie = '';
    for (let i = 0; i < 10; i += 1) {
      const res = await json(base, '/auth/signup', {
        method: 'POST',
        body: JSON.stringify({ email: `bench_${tag}_${i}@example.com`, password: 'bench-password-1', username: `b_${tag}_${i}`, displayName: `Bench ${i}` }),
      });
      authors.push(res.body.user.id);
      if (i === 0) ownerCookie = String(res.headers.get('set-cookie')).split(';')[0];
    }
    const login = await json(base, '/v1/auth/login', { method: 'POST', body: JSON.stringify({ email: `bench_${tag}_0@example.com`, password: 'bench-password-1' }) });
    token = login.body.data.access_token;
    const created = await json(base, '/v1/communities', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: JSON.stringify({ name: `Bench ${tag}`, handle: `bench-${tag}` }),
    });
    const communityId: string = created.body.data.id;
    void ownerCookie;
    await pool.query(
      `insert into posts (community_id, author_id, body, published_at, created_at)
       select $1, ($2::uuid[])[1 + (g % 10)], '<p>post ' || g || '</p>', now(), now() - (g || ' seconds')::interval
       from generate_series(1, 500) g`,
      [communityId, authors],
    );
    // Fresh statistics, so that the anchor and the service both plan for the rows they read (a tribe the statistics
    // have never seen is planned as one row: a scan of every post of the tribe and a sort).
    await pool.query('analyze posts, users');

    const path = `/v1/communities/${communityId}/posts?per_page=50`;
    const headers = { authorization: `Bearer ${token}` };
    const check = await json(base, path, { headers });
    if (check.status !== 200 || check.body.data.length !== 50) throw new Error(`unexpected response ${check.status}`);

    const statementsFor = async (perPage: number) => {
      const before = service.deps.database.stats.statements;
      await json(base, `/v1/communities/${communityId}/posts?per_page=${perPage}`, { headers });
      return service.deps.database.stats.statements - before;
    };
    const s10 = await statementsFor(10);
    const s50 = await statementsFor(50);

    const bare = await postsAnchor(pool);

    // The service's own statement per request (the page: the caller's suspension, the tribe, the caller's role and
    // the authors are remembered across requests since migration 0024, read once, not per request), with nothing of
    // ours around it and the authors from memory as the service has them: what its statement costs before any
    // layer of ours. Information only; the anchor above stays the one equivalent query.
    const owner = authors[0];
    const authorsById = new Map((await serviceStatements.users(pool, authors)).rows.map((u) => [u.id, u]));
    const statements = await bareServer(async (url) => {
      const c = url.searchParams.get('c') ?? '';
      const page = await pool.query({
        name: 'bench_posts_first_page',
        text: `select id, community_id, author_id, body, media_urls, visibility, status, pinned_at, published_at, created_at,
                      updated_at, reaction_count, comment_count, hot_score, active_at, held_reason, removed_at, removed_by,
                      removed_reason
               from posts
               where community_id = $1 and status = 'published' and visibility = any($2::text[])
                 and ($3::boolean or removed_at is null or author_id = $4::uuid)
               order by created_at desc, id desc limit $5`,
        values: [c, ['public', 'members', 'paid'], true, owner, 51],
      });
      // The anchor's fields, the author's from memory: the same body as the anchor's, so the difference is the statement.
      const data = page.rows.slice(0, 50).map((r) => {
        const author = authorsById.get(r.author_id);
        return {
          id: r.id, community_id: r.community_id, author_id: r.author_id, username: author?.username, display_name: author?.display_name,
          body: r.body, media_urls: r.media_urls, visibility: r.visibility, status: r.status, pinned_at: r.pinned_at,
          published_at: r.published_at, created_at: r.created_at, updated_at: r.updated_at,
        };
      });
      return { data, pagination: { page: 1, per_page: 50, has_more: page.rows.length > 50 } };
    });

    // Subject, anchor and the bare handler with the service's statements in turn, three rounds; medians.
    const [facade, anchor, same] = await alternate([
      { url: base + path, headers },
      { url: `${bare.base}/?c=${communityId}` },
      { url: `${statements.base}/?c=${communityId}` },
    ]);
    await bare.close();
    await statements.close();

    report('GET /v1/communities/:id/posts?per_page=50 (resource API via gateway) vs bare node:http + one SQL query', facade, anchor, ISSUE_32.lists, ISSUE_32.p99);
    report('  (information) bare node:http running the service\'s one statement vs the anchor', same, anchor);
    console.log(costSplit(facade, same, anchor, 'the service\'s statement instead of the anchor\'s'));
    console.log(`  SQL statements per list request: per_page=10 -> ${s10}, per_page=50 -> ${s50} (${s10 === s50 ? 'equal' : 'NOT equal'})`);
    console.log(executionPaths(service));
  } finally {
    await pool.end();
    await service.stop();
  }
}
