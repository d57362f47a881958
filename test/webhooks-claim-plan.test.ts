// The drain's claim on a burst the planner has no statistics for (issue 15): a fresh table that autovacuum has not
// analysed yet, 3,000 deliveries due. The claim takes the oldest due deliveries of enabled endpoints, in order, and
// its plan reads the due index in that order and stops after the limit: no bitmap scan of every pending row, no sort
// (what PostgreSQL chose before, 15 to 20 ms per claim). The claim's own transaction is captured from the pool and
// replayed with EXPLAIN. PostgreSQL only: the planner is the point.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { claimDue } from '../subgraphs/webhooks/webhooks.repository.js';
import { isolatedDatabase, startService, TEST_DATABASE_URL, type TestService } from './support.js';

if (!TEST_DATABASE_URL) console.warn('webhooks-claim-plan.test.ts is skipped: it EXPLAINs the claim on PostgreSQL, not PGlite');
const onPostgres = TEST_DATABASE_URL ? it : it.skip;

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}
const nodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)];

let t: TestService;
let db: Awaited<ReturnType<typeof isolatedDatabase>>;
let client: pg.Client;
const enabled = randomUUID();
const disabled = randomUUID();

beforeAll(async () => {
  if (!TEST_DATABASE_URL) return;
  db = await isolatedDatabase();
  t = await startService({ DATABASE_URL: db.url! });
  client = new pg.Client({ connectionString: db.url! });
  await client.connect();
  const tribe = randomUUID();
  await client.query(`insert into communities (id, handle, name) values ($1, 'claim-plan', 'Claim plan')`, [tribe]);
  await client.query(
    `insert into webhook_endpoints (id, community_id, url, events, secret, enabled)
     values ($1, $3, 'https://a.example/h', '{member.joined}', 'whsec_a', true), ($2, $3, 'https://b.example/h', '{member.joined}', 'whsec_b', false)`,
    [enabled, disabled, tribe],
  );
  // The disabled endpoint's deliveries are the oldest: a claim must step over them, not take them.
  await client.query(
    `insert into webhook_deliveries (id, endpoint_id, community_id, event, payload, status, next_attempt_at, created_at)
     select gen_random_uuid(), case when g <= 500 then $2::uuid else $1::uuid end, $3, 'member.joined', repeat('x', 1000), 'pending',
            timestamptz '2026-01-01' + g * interval '1 second', now()
       from generate_series(1, 3000) g`,
    [enabled, disabled, tribe],
  );
}, 60_000);

afterAll(async () => {
  if (!TEST_DATABASE_URL) return;
  await client.end();
  await t.stop();
  await db.drop();
});

onPostgres('a claim on 3,000 due deliveries without statistics reads the due index in order and stops at the limit: no bitmap scan, no sort', async () => {
  const { rows: stats } = await client.query(`select count(*)::int as n from pg_stats where tablename = 'webhook_deliveries'`);
  expect(stats[0].n).toBe(0); // never analysed: the planner guesses

  // Capture the claim's transaction as the service sends it.
  const pool = t.deps.database.pool!;
  const sent: Array<{ text: string; values: unknown[] }> = [];
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  const capturing = async () => {
    const c = await connect();
    const query = c.query.bind(c) as (...args: any[]) => any;
    (c as any).query = (config: any, values?: any, cb?: any) => {
      sent.push({ text: typeof config === 'string' ? config : config.text, values: (Array.isArray(values) ? values : config?.values) ?? [] });
      return query(config, values, cb);
    };
    return c;
  };
  // pool.query checks out its client with a callback; transactions with a promise.
  (pool as any).connect = (cb?: (err: unknown, c?: pg.PoolClient, done?: () => void) => void) => {
    if (!cb) return capturing();
    capturing().then((c) => cb(undefined, c, () => c.release()), (err) => cb(err));
  };
  const now = new Date('2026-06-01T00:00:00Z');
  let claimed: Awaited<ReturnType<typeof claimDue>>;
  try {
    claimed = await claimDue(t.deps.database.db, now, new Date(now.getTime() + 60_000), 50, randomUUID());
  } finally {
    (pool as any).connect = connect;
  }

  // What it claimed: the 50 oldest due deliveries of the enabled endpoint, none of the disabled one's.
  expect(claimed).toHaveLength(50);
  expect(new Set(claimed.map((d) => d.endpointId))).toEqual(new Set([enabled]));
  const { rows: oldest } = await client.query(
    `select id from webhook_deliveries where endpoint_id = $1 order by next_attempt_at, id limit 50`,
    [enabled],
  );
  expect(claimed.map((d) => d.id).sort()).toEqual(oldest.map((r) => r.id).sort());

  // Its plan, replayed with the same settings and parameters (after releasing the claim, so the same rows are due).
  await client.query(`update webhook_deliveries set claim_id = null, claimed_until = null`);
  const inTransaction = sent.filter((s) => !/^(begin|commit|rollback)/i.test(s.text.trim()));
  const update = inTransaction.find((s) => /^\s*update webhook_deliveries/i.test(s.text));
  expect(update).toBeDefined();
  await client.query('begin');
  try {
    for (const s of inTransaction.filter((x) => x !== update)) await client.query(s.text, s.values);
    const { rows } = await client.query(`explain (format json) ${update!.text}`, update!.values);
    const plan = nodes(rows[0]['QUERY PLAN'][0].Plan as PlanNode);
    const types = plan.map((n) => n['Node Type']);
    expect(types).not.toContain('Bitmap Heap Scan');
    expect(types).not.toContain('Sort');
    expect(plan.some((n) => n['Node Type'] === 'Index Scan' && n['Index Name'] === 'webhook_deliveries_due_idx')).toBe(true);
  } finally {
    await client.query('rollback');
  }
});
