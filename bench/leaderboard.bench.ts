// Issue 5: GET /v1/communities/:id/challenges/:cid/leaderboard for a challenge of 10,000 participants over the real
// PostgreSQL: p99 of one page beside a bare node:http handler running the one equivalent SQL query (with the join
// to users the service does not do), and SQL statements per leaderboard page at per_page 10 and 50.
import pg from 'pg';
import { BENCH_DATABASE_URL, alternate, bareServer, costSplit, executionPaths, leaderboardAnchor, seedLeaderboard, serviceStatements, report, startBenchService, ISSUE_32 } from './lib.js';

const PARTICIPANTS = 10_000;

async function json(base: string, path: string, init: RequestInit = {}) {
  const res = await fetch(base + path, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
}

export default async function leaderboardBench(): Promise<void> {
  const { service, base } = await startBenchService();
  const pool = new pg.Pool({ connectionString: BENCH_DATABASE_URL, max: 10 });
  try {
    const { headers, communityId, challengeId } = await seedLeaderboard(base, pool, PARTICIPANTS);
    const path = (perPage: number) => `/v1/communities/${communityId}/challenges/${challengeId}/leaderboard?per_page=${perPage}`;
    const check = await json(base, path(50), { headers });
    if (check.status !== 200 || check.body.data.length !== 50 || !check.body.data[0].display_name) {
      throw new Error(`unexpected response ${check.status} ${JSON.stringify(check.body).slice(0, 200)}`);
    }

    const statementsFor = async (perPage: number) => {
      const before = service.deps.database.stats.statements;
      await json(base, path(perPage), { headers });
      return service.deps.database.stats.statements - before;
    };
    const s10 = await statementsFor(10);
    const s50 = await statementsFor(50);

    const bare = await leaderboardAnchor(pool);

    // The service's own statement per request (the page: the caller's suspension, the tribe, the caller's role, the
    // challenge and the participants' users are remembered across requests since migration 0024), with nothing of
    // ours around it and the users from memory as the service has them. Information only; the anchor above stays
    // the one equivalent query.
    const usersById = new Map<string, unknown>();
    const statements = await bareServer(async (url) => {
      const c = url.searchParams.get('c');
      const page = await pool.query({
        name: 'bench_leaderboard_page',
        text: `select user_id, status, started_at, completed_days, streak_run, last_checkin_day, last_checkin_at, xp_earned
               from challenge_enrollments where challenge_id = $1
               order by completed_days desc, xp_earned desc, last_checkin_at asc nulls last, id asc limit $2 offset $3`,
        values: [c, 51, 0],
      });
      const unknown = page.rows.map((r) => r.user_id).filter((id) => !usersById.has(id));
      if (unknown.length > 0) for (const u of (await serviceStatements.users(pool, unknown)).rows) usersById.set(u.id, u);
      // The anchor's fields, the user's from memory: the same body as the anchor's, so the difference is the statement.
      const data = page.rows.slice(0, 50).map((r) => {
        const user = usersById.get(r.user_id) as { username: string; display_name: string } | undefined;
        return {
          user_id: r.user_id, username: user?.username, display_name: user?.display_name, completed_days: r.completed_days,
          streak_run: r.streak_run, last_checkin_day: r.last_checkin_day, started_at: r.started_at, xp_earned: r.xp_earned,
          last_checkin_at: r.last_checkin_at,
        };
      });
      return { data, pagination: { page: 1, per_page: 50, has_more: page.rows.length > 50 } };
    });

    // Subject, anchor and the bare handler with the service's statements in turn, three rounds; medians.
    const [facade, anchor, same] = await alternate([
      { url: base + path(50), headers },
      { url: `${bare.base}/?c=${challengeId}` },
      { url: `${statements.base}/?c=${challengeId}` },
    ]);
    await bare.close();
    await statements.close();

    report(
      `GET /v1/communities/:id/challenges/:cid/leaderboard?per_page=50, ${PARTICIPANTS} participants (resource API via gateway) vs bare node:http + one SQL query`,
      facade,
      anchor,
      ISSUE_32.lists,
      ISSUE_32.p99,
    );
    console.log(`  p99 of one leaderboard page: ${facade.p99} ms (anchor ${anchor.p99} ms)`);
    report('  (information) bare node:http running the service\'s one statement vs the anchor', same, anchor);
    console.log(costSplit(facade, same, anchor, 'the service\'s statement and users instead of the anchor\'s join'));
    console.log(`  SQL statements per leaderboard page: per_page=10 -> ${s10}, per_page=50 -> ${s50} (${s10 === s50 ? 'equal' : 'NOT equal'})`);
    console.log(executionPaths(service));
  } finally {
    await pool.end();
    await service.stop();
  }
}
