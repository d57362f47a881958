// The feed and search statements use their indexes on a realistic data set (issue 11, benchmark): a tenth of the
// benchmark's seed (bench/seed-social.ts: 100,000 posts over 200 tribes, 100,000 reactions, 20,000 comments, a user
// in 50 tribes, ANALYZEd) in a database of this file's own, so the planner has a real choice. The statements are the
// ones the service sends while it serves homeFeed (first page and the page after 50 cursors), communityFeed (NEW,
// TOP, ACTIVE, first and second page) and search over GraphQL, captured from its own pool with their parameters;
// each one that reads posts is EXPLAINed (FORMAT JSON): no plan node is a Seq Scan on posts, and the feed's and
// search's indexes appear. The resource API's posts list (issue 15) is EXPLAINed as the generic plan PostgreSQL
// keeps for its prepared statements, and so are communityFeed's (custom plans too). PostgreSQL only: the planner and its
// statistics are the point.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { issueTokens, openSession } from '../subgraphs/identity/index.js';
import { SCALES, seedSocial, type SeedResult } from '../bench/seed-social.js';
import { bearer, gql, isolatedDatabase, startService, TEST_DATABASE_URL, type TestService } from './support.js';

if (!TEST_DATABASE_URL) console.warn('feed-explain.test.ts is skipped: it EXPLAINs the feed and search statements on PostgreSQL, not PGlite');
const onPostgres = TEST_DATABASE_URL ? describe : describe.skip;

interface Statement {
  text: string;
  values: unknown[];
}
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

const PAGE = 'edges { cursor node { id body author { username } community { name } reactions { total viewerReaction } commentCount } } pageInfo { hasNextPage endCursor }';
const HOME = `query($f: Int, $a: String){ homeFeed(first: $f, after: $a){ ${PAGE} } }`;
const COMMUNITY = `query($c: ID!, $s: FeedSort, $f: Int, $a: String){ communityFeed(communityId: $c, sort: $s, first: $f, after: $a){ ${PAGE} } }`;
const SEARCH = `query($q: String!, $c: ID, $f: Int, $a: String){ search(query: $q, communityId: $c, first: $f, after: $a){
  edges { cursor node { snippet rank post { id } comment { id } } } pageInfo { hasNextPage endCursor } } }`;

/** Every node of a plan tree. */
const nodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)];
const readsPosts = (text: string) => /\bfrom\s+"?posts"?|\bjoin\s+"?posts"?/i.test(text);

onPostgres('EXPLAIN of the feed and search statements on 100,000 posts', () => {
  let t: TestService;
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  let seed: SeedResult;
  let viewer: { cookie: string };
  let captured: Statement[] | null = null;

  beforeAll(async () => {
    db = await isolatedDatabase();
    seed = await seedSocial(db.url!, { scale: SCALES.explain, log: () => undefined });
    t = await startService({ DATABASE_URL: db.url! });
    viewer = { cookie: `svc_session=${await openSession(t.deps, seed.benchUserId)}` };
    // The statements the service sends, with their parameters, while `captured` is set: through the pool, and through
    // clients it checks out for transactions (search runs in one, under a statement timeout).
    const pool = t.deps.database.pool!;
    const capture = (config: any, values?: any) => {
      if (captured) {
        captured.push({ text: typeof config === 'string' ? config : config.text, values: (Array.isArray(values) ? values : config?.values) ?? [] });
      }
    };
    const query = pool.query.bind(pool) as (...args: any[]) => any;
    (pool as any).query = (config: any, values?: any, cb?: any) => {
      capture(config, values);
      return query(config, values, cb);
    };
    const connect = pool.connect.bind(pool) as (...args: any[]) => any;
    (pool as any).connect = (...args: any[]) => {
      if (typeof args[0] === 'function') return connect(...args); // pool.query's own checkout: captured above
      return (connect() as Promise<any>).then((client) => {
        if (!client.capturing) {
          const clientQuery = client.query.bind(client);
          client.query = (config: any, values?: any, cb?: any) => {
            capture(config, values); // a pool.query on this client is captured twice: `run` keeps one of each
            return clientQuery(config, values, cb);
          };
          client.capturing = true;
        }
        return client;
      });
    };
  }, 180_000);
  afterAll(async () => {
    await t?.stop();
    await db?.drop();
  });

  /** Runs one GraphQL request and returns its data and the statements on posts it sent. */
  const run = async (q: string, variables: Record<string, unknown>) => {
    captured = [];
    const out = await gql(t, viewer, q, variables);
    const distinct = new Map(captured.map((s) => [`${s.text}\n${JSON.stringify(s.values)}`, s]));
    const statements = [...distinct.values()].filter((s) => readsPosts(s.text));
    captured = null;
    expect(out.errors).toBeUndefined();
    return { data: out.data, statements };
  };

  /** EXPLAIN (FORMAT JSON) of each statement: its plan nodes. */
  const explain = async (statements: Statement[]) => {
    const pool = t.deps.database.pool!;
    return Promise.all(
      statements.map(async (s) => {
        const res = await pool.query(`explain (format json) ${s.text}`, s.values);
        return { text: s.text, nodes: nodes((res.rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0].Plan) };
      }),
    );
  };

  /** The generic plans of prepared statements (`explainGeneric`), as `explain` gives custom ones. */
  const explainEachGeneric = (statements: Statement[]) => Promise.all(statements.map(async (s) => ({ text: s.text, nodes: await explainGeneric(s) })));

  /** No statement scans posts sequentially, and `index` appears in the plans (custom plans, or `explainEachGeneric`'s). */
  const expectIndexed = async (statements: Statement[], index: string, plansOf = explain) => {
    expect(statements.length).toBeGreaterThan(0);
    const plans = await plansOf(statements);
    const seqScans = plans.flatMap((p) =>
      p.nodes.filter((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'posts').map(() => p.text.replace(/\s+/g, ' ').slice(0, 200)),
    );
    expect(seqScans).toEqual([]);
    const used = new Set(plans.flatMap((p) => p.nodes.map((n) => n['Index Name']).filter(Boolean)));
    expect([...used]).toContain(index);
    return used;
  };

  it('the plan check finds a Seq Scan on posts when a statement has one (a filter no index serves)', async () => {
    const [plan] = await explain([{ text: `select id from posts where body like '%' || $1 || '%'`, values: ['garden'] }]);
    expect(plan.nodes.some((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'posts')).toBe(true);
  });

  it('homeFeed: the first page and the page after 50 cursors read posts_feed_new_idx, never a Seq Scan on posts', async () => {
    const first = await run(HOME, { f: 20 });
    expect(first.data.homeFeed.edges).toHaveLength(20);
    await expectIndexed(first.statements, 'posts_feed_new_idx');

    let after: string = first.data.homeFeed.pageInfo.endCursor;
    for (let page = 2; page <= 50; page += 1) {
      const { data } = await run(HOME, { f: 20, a: after });
      after = data.homeFeed.pageInfo.endCursor;
    }
    const deep = await run(HOME, { f: 20, a: after });
    expect(deep.data.homeFeed.edges).toHaveLength(20);
    await expectIndexed(deep.statements, 'posts_feed_new_idx');
  }, 60_000);

  it.each([
    ['NEW', 'posts_feed_new_idx'],
    ['TOP', 'posts_feed_top_idx'],
    ['ACTIVE', 'posts_feed_active_idx'],
  ])('communityFeed %s: the first and second page read %s, never a Seq Scan on posts, in the generic plans of its prepared statements too', async (sort, index) => {
    // The bench user's largest tribe and its smallest one.
    for (const c of [seed.benchTribes[0].id, seed.benchTribes.at(-1)!.id]) {
      const first = await run(COMMUNITY, { c, s: sort, f: 20 });
      expect(first.data.communityFeed.edges.length).toBeGreaterThanOrEqual(20);
      await expectIndexed(first.statements, index);
      await expectIndexed(first.statements, index, explainEachGeneric);
      const second = await run(COMMUNITY, { c, s: sort, f: 20, a: first.data.communityFeed.pageInfo.endCursor });
      expect(second.data.communityFeed.edges).toHaveLength(20);
      await expectIndexed(second.statements, index);
      await expectIndexed(second.statements, index, explainEachGeneric);
    }
  });

  it("communityFeed's first page reads the tribe's pinned posts from posts_feed_pinned_idx, not every post of the tribe (custom and generic plans)", async () => {
    const c = seed.benchTribes[0].id;
    const first = await run(COMMUNITY, { c, s: 'NEW', f: 20 });
    const pinned = first.statements.filter((s) => /pinned_at"? is not null/i.test(s.text));
    expect(pinned).toHaveLength(1);
    await expectIndexed(pinned, 'posts_feed_pinned_idx');
    await expectIndexed(pinned, 'posts_feed_pinned_idx', explainEachGeneric);
  });

  /**
   * The plan PostgreSQL keeps for a prepared statement once it stops planning each execution (the generic plan,
   * parameters unknown): PREPARE the statement's text and EXPLAIN its EXECUTE with `plan_cache_mode` forced to it.
   */
  const explainGeneric = async (s: Statement) => {
    const client = await t.deps.database.pool!.connect();
    const literal = (v: unknown): string =>
      v === null || v === undefined
        ? 'null'
        : Array.isArray(v)
          ? client.escapeLiteral(`{${v.map((e) => `"${String(e)}"`).join(',')}}`)
          : typeof v === 'string'
            ? client.escapeLiteral(v)
            : String(v);
    try {
      await client.query('set plan_cache_mode = force_generic_plan');
      await client.query(`prepare explained as ${s.text}`);
      const res = await client.query(`explain (format json) execute explained(${s.values.map(literal).join(', ')})`);
      return nodes((res.rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0].Plan);
    } finally {
      await client.query('deallocate explained; reset plan_cache_mode').catch(() => undefined);
      client.release();
    }
  };

  it("the resource API's posts list keeps plans on posts_community_published_created_idx: the first page in its order (no Sort), a later page by the deferred join, never a Seq Scan", async () => {
    const c = seed.benchTribes[0].id;
    const headers = bearer({ token: (await issueTokens(t.deps, seed.benchUserId)).accessToken });
    for (const page of [1, 3]) {
      captured = [];
      const res = await t.api.get(`/v1/communities/${c}/posts`).query({ per_page: 50, page }).set(headers);
      const statements = [...new Map(captured.filter((s) => readsPosts(s.text)).map((s) => [`${s.text}\n${JSON.stringify(s.values)}`, s])).values()];
      captured = null;
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(50);
      expect(statements).toHaveLength(1);
      const plan = await explainGeneric(statements[0]);
      expect(plan.filter((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'posts')).toEqual([]);
      expect(plan.map((n) => n['Index Name'])).toContain('posts_community_published_created_idx');
      if (page === 1) expect(plan.map((n) => n['Node Type'])).not.toContain('Sort');
    }
  });

  it.each([
    ['a rare token, all of the viewer\'s tribes', 'kw1234', false],
    ['a rare token, one tribe', 'kw1234', true],
    ['a less rare token, all tribes, second page', 'topic7', false],
    ['two words, one tribe', 'garden kw77', true],
  ])('search (%s) reads posts_search_idx, never a Seq Scan on posts', async (_label, q, oneTribe) => {
    const c = oneTribe ? seed.benchTribes[0].id : undefined;
    const first = await run(SEARCH, { q, c, f: 5 });
    await expectIndexed(first.statements, 'posts_search_idx');
    if (first.data.search.pageInfo.hasNextPage) {
      const next = await run(SEARCH, { q, c, f: 5, a: first.data.search.pageInfo.endCursor });
      await expectIndexed(next.statements, 'posts_search_idx');
    }
  });
});
