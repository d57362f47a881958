import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { createTribe, registerEndpoint, signupUser, type TestUser } from './factory.js';
import { answer, isolatedDatabase, ManualClock, Receiver, sqlRows, startWebhookService, waitFor, type TestService } from './support.js';
import { drain, interruptAttempts, PER_ORIGIN_CONCURRENCY } from '../subgraphs/webhooks/index.js';

/** Large enough to be claimed in several statements (the first takes 5 × PER_ORIGIN_CONCURRENCY). */
const BATCH = 12 * PER_ORIGIN_CONCURRENCY;
const MINUTE = 60_000;

/**
 * A drain of a large batch: later claims and the writing of outcomes overlap the sending, and the cycle still
 * sends each claimed delivery once, records each outcome, and leaves interrupted ones to a later cycle.
 */
describe('webhook drain of a large batch', () => {
  let t: TestService;
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  const clock = new ManualClock();
  let owner: TestUser;
  const receivers: Receiver[] = [];

  /** A tribe whose endpoint points at a new receiver, with `n` member.joined events turned into deliveries. */
  const queued = async (n: number) => {
    const r = await new Receiver(clock.clock).start();
    receivers.push(r);
    const tribe = await createTribe(t, owner);
    const endpoint = await registerEndpoint(t, owner, tribe.handle, { url: r.url(), events: ['member.joined'] }, r);
    await sqlRows(
      t,
      sql`insert into outbox_events (community_id, type, data)
          select ${tribe.id}, 'member.joined', jsonb_build_object('userId', gen_random_uuid(), 'handle', ${tribe.handle}::text)
          from generate_series(1, ${n}::int)`,
    );
    return { r, endpoint };
  };
  const statusesOf = async (endpointId: string) =>
    sqlRows<{ status: string; attempts: number; n: number }>(
      t,
      sql`select status, attempts, count(*)::int as n from webhook_deliveries where endpoint_id = ${endpointId} group by 1, 2 order by 1, 2`,
    );

  beforeAll(async () => {
    db = await isolatedDatabase();
    t = await startWebhookService({ clock: clock.clock, databaseUrl: db.url, env: { WEBHOOK_BATCH_SIZE: String(BATCH), WEBHOOK_TIMEOUT_MS: '10000' } }); // a loaded CI machine: 3 of 120 attempts passed 2 s once
    owner = await signupUser(t);
  });
  afterEach(async () => {
    // Nothing of one test is left due for the next one's drain.
    await sqlRows(t, sql`delete from webhook_deliveries`);
  });
  afterAll(async () => {
    for (const r of receivers) await r.stop();
    await t?.stop();
    await db?.drop();
  });

  it('sends each delivery of the batch once and records it, and the rest in the next cycle', async () => {
    const { r, endpoint } = await queued(BATCH + 30);
    expect(await drain(t.deps)).toEqual({ attempted: BATCH, succeeded: BATCH, retrying: 0, failed: 0, discarded: 0 });
    expect(await drain(t.deps)).toEqual({ attempted: 30, succeeded: 30, retrying: 0, failed: 0, discarded: 0 });
    expect(await drain(t.deps)).toMatchObject({ attempted: 0 });
    expect(await statusesOf(endpoint.id)).toEqual([{ status: 'success', attempts: 1, n: BATCH + 30 }]);
    const ids = r.received.map((x) => x.headers['x-svc-delivery']);
    expect(ids).toHaveLength(BATCH + 30);
    expect(new Set(ids).size).toBe(BATCH + 30);
    expect(r.rejected).toEqual([]);
  });

  it('writes outcomes while the batch is still being sent; a stop keeps them and leaves the rest to a later cycle', async () => {
    const { r, endpoint } = await queued(BATCH);
    const answered = BATCH / 2;
    let seen = 0;
    r.behaviour = (_x, _req, res) => {
      seen += 1;
      if (seen <= answered) res.writeHead(200).end(); // the others hang
    };
    let settled = false;
    const draining = drain(t.deps).finally(() => (settled = true));
    // Recorded before the cycle ends: it cannot end while attempts hang.
    await waitFor(async () => (await statusesOf(endpoint.id)).some((s) => s.status === 'success' && s.n >= answered - PER_ORIGIN_CONCURRENCY), 10_000, 'outcomes written mid-cycle');
    expect(settled).toBe(false);
    await waitFor(() => seen >= answered + PER_ORIGIN_CONCURRENCY, 10_000, 'the hanging attempts in flight');
    interruptAttempts(t.deps);
    expect(await draining).toEqual({ attempted: BATCH, succeeded: answered, retrying: 0, failed: 0, discarded: BATCH - answered });
    expect(await statusesOf(endpoint.id)).toEqual([
      { status: 'pending', attempts: 0, n: BATCH - answered },
      { status: 'success', attempts: 1, n: answered },
    ]);

    r.behaviour = answer(200);
    expect(await drain(t.deps)).toMatchObject({ attempted: 0 }); // still claimed by the stopped cycle
    clock.advance(30 * MINUTE); // the claims lapse (a claim lasts the batch's sending time at WEBHOOK_TIMEOUT_MS, plus a margin)
    expect(await drain(t.deps)).toEqual({ attempted: BATCH - answered, succeeded: BATCH - answered, retrying: 0, failed: 0, discarded: 0 });
    expect(await statusesOf(endpoint.id)).toEqual([{ status: 'success', attempts: 1, n: BATCH }]);
    expect(r.rejected).toEqual([]);
  });
});
