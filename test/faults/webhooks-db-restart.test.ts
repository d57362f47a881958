import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { startWorker, type Worker } from '../../jobs/src/worker.js';
import { createTribe, registerEndpoint, signupUser } from '../factory.js';
import { gql, isolatedDatabase, Receiver, sqlRows, startWebhookService, TEST_DATABASE_URL, waitFor, type TestService } from '../support.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

const EVENTS = 200;
const ANSWER_AFTER_MS = 200;

/**
 * The database goes away in the middle of a webhook drain (every connection cut, as a restart does) and comes
 * back 1.5 s later. The service and its worker reach PostgreSQL through a TCP proxy in this process.
 */
(TEST_DATABASE_URL ? describe : describe.skip)('webhook drain across a database restart', () => {
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  let proxy: TcpProxy;
  let t: TestService;
  let worker: Worker | undefined;
  let receiver: Receiver;

  beforeAll(async () => {
    db = await isolatedDatabase();
    const target = new URL(db.url!);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    t = await startWebhookService({
      databaseUrl: proxy.url(db.url!),
      env: {
        WORKER_POLL_INTERVAL_MS: '100',
        WORKER_LOCK_LIFETIME_MS: '2500',
        WEBHOOK_TIMEOUT_MS: '2000',
        WEBHOOK_FANOUT_INTERVAL_MS: '200',
        WEBHOOK_DRAIN_INTERVAL_MS: '200',
        WEBHOOK_BATCH_SIZE: '50',
      },
    });
    receiver = await new Receiver().start();
  });
  afterAll(async () => {
    proxy?.restore();
    await worker?.stop();
    await receiver?.stop();
    await t?.stop();
    await proxy?.close();
    await db?.drop();
  });

  it('comes back by itself, turns every outbox event into its delivery and sends each delivery exactly once', async () => {
    const owner = await signupUser(t);
    const tribe = await createTribe(t, owner);
    const endpoint = await registerEndpoint(t, owner, tribe.handle, { url: receiver.url(), events: ['post.created'] }, receiver);
    for (let i = 0; i < EVENTS; i += 10) {
      await Promise.all(
        Array.from({ length: 10 }, async (_, j) => {
          const out = await gql(t, owner, 'mutation($c: ID!, $t: String!){ createPost(communityId: $c, input: {content: $t}){ id } }', {
            c: tribe.id,
            t: `<p>post ${i + j}</p>`,
          });
          expect(out.errors).toBeUndefined();
        }),
      );
    }
    // A slow receiver: 50 deliveries a batch, 10 at a time, 200 ms each, so a batch takes about a second.
    receiver.behaviour = (_r, _req, res) => void setTimeout(() => res.writeHead(200).end('ok'), ANSWER_AFTER_MS);
    worker = await startWorker(t.deps);

    await waitFor(() => receiver.received.length >= 70, 20_000, '70 deliveries before the cut');
    const atCut = receiver.received.length;
    proxy.cut();
    const acceptedAtCut = proxy.accepted;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const duringOutage = receiver.received.length - atCut;
    proxy.restore();

    const success = async () =>
      (await sqlRows<{ n: number }>(t, sql`select count(*)::int as n from webhook_deliveries where endpoint_id = ${endpoint.id} and status = 'success'`))[0].n;
    // A claim whose outcome was lost with the connection lapses after its batch's longest wait plus half the lock
    // lifetime (5 x 2 s + 1.25 s here) before another cycle takes its deliveries again: about 15 s in all on a quiet
    // machine, which a full test run on two cores has stretched past 30 s.
    await waitFor(async () => (await success()) === EVENTS, 60_000, `${EVENTS} successful deliveries`);

    const ids = receiver.received.map((r) => String(r.headers['x-svc-delivery']));
    const duplicates = ids.length - new Set(ids).size;
    console.log(
      `database restart: cut after ${atCut} requests, ${duringOutage} arrived while the database was down, ` +
        `${proxy.accepted - acceptedAtCut} new database connections after it, ${ids.length} requests for ${new Set(ids).size} deliveries (${duplicates} duplicates)`,
    );
    expect(atCut).toBeLessThan(EVENTS); // the cut landed in the middle of the drain…
    expect(duringOutage).toBeGreaterThan(0); // …with attempts in flight whose outcome could not be recorded at once
    expect(proxy.accepted).toBeGreaterThan(acceptedAtCut); // the service reconnected by itself

    // No outbox event lost: every one processed, each made exactly one delivery, and every delivery went out once.
    const events = await sqlRows<{ total: number; unprocessed: number }>(
      t,
      sql`select count(*)::int as total, count(*) filter (where processed_at is null)::int as unprocessed
            from outbox_events where community_id = ${tribe.id} and type = 'post.created'`,
    );
    expect(events).toEqual([{ total: EVENTS, unprocessed: 0 }]);
    const rows = await sqlRows<{ id: string; event_id: string; status: string; attempts: number }>(
      t,
      sql`select id, event_id, status, attempts from webhook_deliveries where endpoint_id = ${endpoint.id}`,
    );
    expect(rows).toHaveLength(EVENTS);
    expect(new Set(rows.map((r) => r.event_id)).size).toBe(EVENTS);
    expect(rows.filter((r) => r.status !== 'success' || r.attempts !== 1)).toEqual([]);
    expect(receiver.rejected).toEqual([]);
    expect(duplicates).toBe(0);
    expect(new Set(ids)).toEqual(new Set(rows.map((r) => r.id)));
  }, 120_000);
});
