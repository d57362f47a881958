// Issue 11: homeFeed(first: 20) over GraphQL (/graphql, session cookie) on the social data set of
// bench/seed-social.ts (1,000,000 posts over 200 tribes; the bench user belongs to 50 of them), for the first page
// and for the page after following 50 cursors, each beside a bare node:http handler running the same SQL in the same
// run; and SQL statements per feed page at first: 10 and first: 50.
//
// The anchor runs, on a pg pool of the service's size, the very statements the service sent for that page with
// nothing remembered across requests (texts and parameters captured from the service's own pool while it served the
// page, after the triggers' `*` made it forget): the viewer's tribes, the feed's keyset statement, then the per-page
// lookups the resolvers batch (reactions, authors, tribes, ...), all of them at once as soon as the feed rows are
// there. Only the session lookup is left out, so the anchor does at most the service's database work of a page read
// from scratch and none of its HTTP, GraphQL, gateway or authentication work. Once it remembers the authors, tribes
// and roles (migration 0024), the service itself sends fewer statements per page (printed).
import pg from 'pg';
import { openSession } from '../subgraphs/identity/index.js';
import { BENCH_DATABASE_URL, bareServer, executionPaths, load, report, startBenchService, type LoadResult, ISSUE_32 } from './lib.js';
import { seedSocial } from './seed-social.js';

const FEED = `query Feed($first: Int, $after: String) {
  homeFeed(first: $first, after: $after) {
    edges { cursor node { id body author { username } community { name } reactions { total viewerReaction } commentCount } }
    pageInfo { hasNextPage endCursor }
  }
}`;
const COMMUNITY_FEED = `query CommunityFeed($communityId: ID!, $first: Int, $after: String) {
  communityFeed(communityId: $communityId, sort: NEW, first: $first, after: $after) {
    edges { cursor node { id body author { username } community { name } reactions { total viewerReaction } commentCount } }
    pageInfo { hasNextPage endCursor }
  }
}`;
const DEEP_PAGES = 50;
const POOL_SIZE = 10;

interface Statement {
  text: string;
  values: unknown[];
  /** The rest of the query config drizzle passed (row mode, type parsers), so the anchor reads rows the same way. */
  config: Record<string, unknown>;
}

/** The first table a statement reads, for printing. */
const tableOf = (text: string) => /\bfrom\s+"?(\w+)"?/i.exec(text)?.[1] ?? '?';

export default async function feedBench(): Promise<void> {
  const seeded = await seedSocial(BENCH_DATABASE_URL);
  const { service, base } = await startBenchService({ DATABASE_POOL_SIZE: String(POOL_SIZE) });
  const pool = new pg.Pool({ connectionString: BENCH_DATABASE_URL, max: POOL_SIZE });
  try {
    const cookie = `svc_session=${await openSession(service.deps, seeded.benchUserId)}`;
    const headers = { 'content-type': 'application/json', cookie };
    const body = (first: number, after: string | null) => JSON.stringify({ query: FEED, variables: { first, after } });
    const post = async (payload: string) => {
      const res = await fetch(`${base}/graphql`, { method: 'POST', headers, body: payload });
      const json = (await res.json()) as any;
      if (res.status !== 200 || json.errors || !json.data?.homeFeed) throw new Error(`homeFeed: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
      return json.data.homeFeed as { edges: Array<{ cursor: string; node: any }>; pageInfo: { hasNextPage: boolean; endCursor: string } };
    };

    // The cursor chain: 50 pages of 20, then the page after them is the deep page.
    let after: string | null = null;
    const seen = new Set<string>();
    for (let i = 0; i < DEEP_PAGES; i += 1) {
      const page = await post(body(20, after));
      if (page.edges.length !== 20 || !page.pageInfo.hasNextPage) throw new Error(`page ${i + 1}: ${page.edges.length} posts`);
      for (const e of page.edges) seen.add(e.node.id);
      after = page.pageInfo.endCursor;
    }
    if (seen.size !== DEEP_PAGES * 20) throw new Error(`the cursor chain repeated posts: ${seen.size} distinct of ${DEEP_PAGES * 20}`);
    const firstBody = body(20, null);
    const deepBody = body(20, after);
    const firstPage = await post(firstBody);
    const deepPage = await post(deepBody);
    if (deepPage.edges.length !== 20 || deepPage.edges.some((e) => seen.has(e.node.id))) throw new Error('deep page: wrong posts');

    // The statements the service sends for one page, from its own pool.
    const servicePool = service.deps.database.pool!;
    const originalQuery = servicePool.query.bind(servicePool) as (...args: any[]) => any;
    let captured: Statement[] | null = null;
    (servicePool as any).query = (config: any, values?: any, cb?: any) => {
      if (captured) {
        const text = typeof config === 'string' ? config : config.text;
        const rest = typeof config === 'string' ? {} : { ...config, text: undefined, values: undefined };
        captured.push({ text, values: (Array.isArray(values) ? values : config?.values) ?? [], config: rest });
      }
      return originalQuery(config, values, cb);
    };
    // Captured with nothing remembered (the triggers' `*` makes the service forget every user, tribe and role it
    // remembered across requests): the anchor, a bare handler that remembers nothing, reads from the database
    // everything the page shows on every request, as the posts and leaderboard anchors read their users by a join.
    const forget = () => originalQuery(`select pg_notify('svc_changes', '*')`);
    const capture = async (payload: string) => {
      await forget();
      captured = [];
      await post(payload);
      const list = captured;
      captured = null;
      return list;
    };
    // communityFeed(sort: NEW, first: 20) of the bench user's tribe with the most posts.
    const tribe = [...seeded.benchTribes].sort((a, b) => b.posts - a.posts)[0];
    const communityBody = JSON.stringify({ query: COMMUNITY_FEED, variables: { communityId: tribe.id, first: 20 } });
    {
      const res = await fetch(`${base}/graphql`, { method: 'POST', headers, body: communityBody });
      const json = (await res.json()) as any;
      if (res.status !== 200 || json.errors || !(json.data?.communityFeed?.edges?.length >= 20)) {
        throw new Error(`communityFeed: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
      }
    }
    await forget();
    captured = [];
    await fetch(`${base}/graphql`, { method: 'POST', headers, body: communityBody }).then((r) => r.json());
    const communityStatements: Statement[] = captured;
    captured = null;
    const firstStatements = await capture(firstBody);
    const deepStatements = await capture(deepBody);
    const statementsFor = async (first: number) => {
      const before = service.deps.database.stats.statements;
      await post(body(first, null));
      return service.deps.database.stats.statements - before;
    };
    await post(body(50, null)); // remembers the authors and tribes of both sizes
    const s10 = await statementsFor(10);
    const s50 = await statementsFor(50);

    // The anchor: the same statements on a pool of the same size; the feed's own statement (the first on posts) and
    // those before it in order, the lookups after it all at once.
    const plan = (statements: Statement[]) => {
      const kept = statements.filter((s) => tableOf(s.text) !== 'sessions');
      const feedAt = kept.findIndex((s) => tableOf(s.text) === 'posts');
      if (feedAt < 0) throw new Error(`no feed statement among ${statements.map((s) => tableOf(s.text)).join(', ')}`);
      return { sequential: kept.slice(0, feedAt + 1), parallel: kept.slice(feedAt + 1), feed: kept[feedAt] };
    };
    const firstPlan = plan(firstStatements);
    const deepPlan = plan(deepStatements);
    const communityPlan = plan(communityStatements);
    const exec = async (s: Statement) => (await pool.query({ ...s.config, text: s.text, values: s.values } as pg.QueryConfig)).rows;
    const bare = await bareServer(async (url) => {
      const page = url.searchParams.get('page');
      const p = page === 'deep' ? deepPlan : page === 'community' ? communityPlan : firstPlan;
      const results: unknown[] = [];
      for (const s of p.sequential) results.push(await exec(s));
      results.push(...(await Promise.all(p.parallel.map(exec))));
      return results;
    });
    const check = (await (await fetch(`${bare.base}/?page=deep`, { method: 'POST', body: deepBody })).json()) as unknown[][];
    const feedRows = check[deepPlan.sequential.length - 1];
    if (feedRows.length !== 21) throw new Error(`anchor: the feed statement gave ${feedRows.length} rows, not 21`);

    // Load: the same generator, connections and duration for the service and the anchor.
    const gqlRequest = (payload: string) => ({ method: 'POST' as const, body: payload });
    const run = async (url: string, h: Record<string, string>, payload: string): Promise<LoadResult> => {
      await load(url, h, 2, 16, gqlRequest(payload)); // warm-up
      return load(url, h, 8, 16, gqlRequest(payload));
    };
    const subjectFirst = await run(`${base}/graphql`, headers, firstBody);
    const subjectDeep = await run(`${base}/graphql`, headers, deepBody);
    const anchorFirst = await run(`${bare.base}/?page=first`, { 'content-type': 'application/json' }, firstBody);
    const anchorDeep = await run(`${bare.base}/?page=deep`, { 'content-type': 'application/json' }, deepBody);
    const subjectCommunity = await run(`${base}/graphql`, headers, communityBody);
    const anchorCommunity = await run(`${bare.base}/?page=community`, { 'content-type': 'application/json' }, communityBody);
    await bare.close();

    // What the feed's statement costs in PostgreSQL at each depth.
    const cost = async (s: Statement) => {
      const plan = (await pool.query(`explain (analyze, buffers, format json) ${s.text}`, s.values)).rows[0]['QUERY PLAN'][0];
      const buffers = plan.Plan['Shared Hit Blocks'] + plan.Plan['Shared Read Blocks'];
      const walk = (n: any): any[] => [n, ...(n.Plans ?? []).flatMap(walk)];
      const scans = walk(plan.Plan).filter((n) => n['Relation Name'] === 'posts').map((n) => `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''}`);
      return `${plan['Execution Time'].toFixed(2)} ms, ${buffers} buffers (posts: ${[...new Set(scans)].join(', ')})`;
    };
    await cost(firstPlan.feed);
    await cost(deepPlan.feed);

    console.log(
      `data set: ${['tribes', 'users', 'members', 'posts', 'comments', 'reactions'].map((k) => `${k} ${Number(seeded.counts[k]).toLocaleString('en')}`).join(', ')}; bench user in ` +
        `${seeded.benchTribes.length} tribes (${seeded.benchTribes.filter((t) => !t.isPublic).length} private)` +
        (seeded.reused ? ' (seed reused)' : `, seeded in ${seeded.seconds.toFixed(0)} s`),
    );
    console.log(
      `anchor statements per page (the service's, less the session lookup): ${firstPlan.sequential.map((s) => tableOf(s.text)).join(' -> ')}` +
        ` -> [${firstPlan.parallel.map((s) => tableOf(s.text)).join(', ')}] at once`,
    );
    report('homeFeed(first: 20), first page: GraphQL via gateway vs bare node:http + the same SQL', subjectFirst, anchorFirst, ISSUE_32.feeds, ISSUE_32.p99);
    console.log(`  p99 ratio: ${(subjectFirst.p99 / anchorFirst.p99).toFixed(2)} (subject / anchor)`);
    report(`homeFeed(first: 20), deep page (after ${DEEP_PAGES} pages via cursors): GraphQL via gateway vs bare node:http + the same SQL`, subjectDeep, anchorDeep, ISSUE_32.feeds, ISSUE_32.p99);
    console.log(`  p99 ratio: ${(subjectDeep.p99 / anchorDeep.p99).toFixed(2)} (subject / anchor)`);
    report(`communityFeed(sort: NEW, first: 20), first page of a tribe of ${tribe.posts} posts: GraphQL via gateway vs bare node:http + the same SQL`, subjectCommunity, anchorCommunity, ISSUE_32.feeds, ISSUE_32.p99);
    console.log(executionPaths(service));
    console.log(`  p99 ratio: ${(subjectCommunity.p99 / anchorCommunity.p99).toFixed(2)} (subject / anchor)`);
    console.log(`  communityFeed statements per page: ${communityStatements.length}: ${communityPlan.sequential.map((s) => tableOf(s.text)).join(' -> ')} -> [${communityPlan.parallel.map((s) => tableOf(s.text)).join(', ')}] at once`);
    console.log('first page vs deep page');
    console.log(`  service: ${subjectFirst.rps.toFixed(0)} vs ${subjectDeep.rps.toFixed(0)} req/s, p99 ${subjectFirst.p99} vs ${subjectDeep.p99} ms`);
    console.log(`  anchor : ${anchorFirst.rps.toFixed(0)} vs ${anchorDeep.rps.toFixed(0)} req/s, p99 ${anchorFirst.p99} vs ${anchorDeep.p99} ms`);
    console.log(`  feed statement (explain analyze): first ${await cost(firstPlan.feed)}; deep ${await cost(deepPlan.feed)}`);
    console.log(`  statements per page with nothing remembered (the anchor's, with the session): first ${firstStatements.length}, deep ${deepStatements.length}`);
    console.log(`  deep page costs no more than the first: ${subjectDeep.rps >= subjectFirst.rps * 0.9 ? 'yes' : 'NO'} (deep rps within 10% of the first or above)`);
    console.log(`SQL statements per feed page, as the service runs them (authors, tribes and roles remembered): first: 10 -> ${s10}, first: 50 -> ${s50} (${s10 === s50 ? 'EQUAL' : 'DIFFERENT'})`);
    void firstPage;
  } finally {
    await pool.end();
    await service.stop();
  }
}
