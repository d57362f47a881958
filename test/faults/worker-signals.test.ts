import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { ServerResponse } from 'node:http';
import { sql } from 'drizzle-orm';
import { createTribe, registerEndpoint, signupUser, type TestUser } from '../factory.js';
import { answer, gql, isolatedDatabase, Receiver, sqlRows, startWebhookService, TEST_DATABASE_URL, waitFor, type TestService } from '../support.js';
import { spawnWorker, type WorkerProcess } from './worker-process.js';

const DELIVERIES = 25;
const BATCH = 10;
const TIMEOUT_MS = 3000;
const LOCK_LIFETIME_MS = 4000;
/** How long a worker's claim on a batch lasts: its attempts' worst case plus half the lock lifetime (see drain). */
const CLAIM_MS = Math.ceil(BATCH / 10) * TIMEOUT_MS + LOCK_LIFETIME_MS / 2;
const WORKER_ENV = { WEBHOOK_BATCH_SIZE: String(BATCH), WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), WORKER_LOCK_LIFETIME_MS: String(LOCK_LIFETIME_MS) };

interface Row {
  id: string;
  status: string;
  attempts: number;
  last_error: string | null;
}

/** Worker-only processes (`server/worker.ts`) stopped by SIGKILL and SIGTERM in the middle of a batch. */
(TEST_DATABASE_URL ? describe : describe.skip)('worker process faults', () => {
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  let t: TestService;
  let receiver: Receiver;
  let owner: TestUser;
  const workers: WorkerProcess[] = [];
  const worker = (env: Record<string, string> = {}) => {
    const w = spawnWorker(db.url!, { ...WORKER_ENV, ...env });
    workers.push(w);
    return w;
  };
  /** A tribe with an endpoint at the receiver and `n` post.created events waiting in the outbox. */
  const queued = async (n: number) => {
    const tribe = await createTribe(t, owner);
    const endpoint = await registerEndpoint(t, owner, tribe.handle, { url: receiver.url(), events: ['post.created'] }, receiver);
    for (let i = 0; i < n; i += 1) {
      const out = await gql(t, owner, 'mutation($c: ID!){ createPost(communityId: $c, input: {content: "<p>hi</p>"}){ id } }', { c: tribe.id });
      expect(out.errors).toBeUndefined();
    }
    return endpoint;
  };
  const rowsOf = (endpointId: string) =>
    sqlRows<Row>(t, sql`select id, status, attempts, last_error from webhook_deliveries where endpoint_id = ${endpointId} order by id`);
  const allDelivered = async (endpointId: string) => {
    const rows = await rowsOf(endpointId);
    return rows.length === DELIVERIES && rows.every((r) => r.status === 'success');
  };
  const sent = () => receiver.received.map((r) => String(r.headers['x-svc-delivery']));

  beforeAll(async () => {
    db = await isolatedDatabase();
    t = await startWebhookService({ databaseUrl: db.url });
    receiver = await new Receiver().start();
    owner = await signupUser(t);
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });
  afterAll(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    await receiver?.stop();
    await t?.stop();
    await db?.drop();
  });

  it('SIGKILL mid-batch: another worker sends every delivery the dead one held, once its claim lapses', async () => {
    const held: ServerResponse[] = [];
    receiver.behaviour = (_r, _req, res) => void held.push(res); // holds every request open
    const endpoint = await queued(DELIVERIES);
    const first = worker();
    await first.ready;
    await waitFor(() => held.length >= BATCH, 20_000, 'the first batch in flight');
    const inFlight = new Set(sent());
    first.child.kill('SIGKILL');
    const killedAt = Date.now();
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(inFlight.size).toBe(BATCH);

    receiver.behaviour = answer(200);
    const second = worker();
    await second.ready;
    const readyAt = Date.now();
    await waitFor(() => allDelivered(endpoint.id), 30_000, `all ${DELIVERIES} deliveries`);
    const tookOver = Date.now() - killedAt;
    // Once the second worker runs and the dead one's claim has lapsed, what is left is a cycle or two (the worker's
    // start-up is not counted: under CI's load, starting a process takes from a few to twenty seconds).
    const afterBoth = Date.now() - Math.max(readyAt, killedAt + CLAIM_MS);

    const rows = await rowsOf(endpoint.id);
    const ids = sent();
    const duplicates = ids.length - new Set(ids).size;
    console.log(
      `SIGKILL: ${inFlight.size} deliveries in flight in the killed worker; all ${DELIVERIES} delivered ${tookOver} ms after the kill ` +
        `(claim ${CLAIM_MS} ms); ${ids.length} requests, ${duplicates} duplicates (the held ones, sent again)`,
    );
    expect(new Set(ids)).toEqual(new Set(rows.map((r) => r.id))); // none lost
    for (const id of inFlight) expect(ids.filter((x) => x === id)).toHaveLength(2); // at least once: twice here
    expect(rows.every((r) => r.attempts === 1)).toBe(true); // the dead worker's attempts were never recorded
    expect(duplicates).toBe(BATCH);
    expect(afterBoth).toBeLessThan(8_000); // bounded: the claim, then a cycle of the second worker
    expect(receiver.rejected).toEqual([]);
  }, 90_000);

  it('SIGTERM mid-batch: the worker exits cleanly within 10 s and a later worker sends what it interrupted', async () => {
    // Answers 1 s after the request: in flight at the signal, and 2 s inside the timeout (an answer that a loaded
    // machine delivers late must not become a recorded timeout: the test is about the stop).
    receiver.behaviour = (_r, _req, res) => void setTimeout(() => res.writeHead(200).end(), 1000).unref();
    const before = receiver.received.length;
    const endpoint = await queued(DELIVERIES);
    const first = worker();
    await first.ready;
    await waitFor(() => receiver.received.length - before >= BATCH, 20_000, 'the first batch in flight');
    first.child.kill('SIGTERM');
    const signalledAt = Date.now();
    const exit = await first.exited;
    const exitMs = Date.now() - signalledAt;
    console.log(`SIGTERM: exited with code ${exit.code} ${exitMs} ms after the signal`);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(exitMs).toBeLessThan(10_000);
    expect(first.logs.some((l) => l.includes('"worker shutting down"'))).toBe(true);

    // Nothing half-written: each row is either recorded as a success or untouched, waiting to be sent again.
    const after = await rowsOf(endpoint.id);
    expect(after).toHaveLength(DELIVERIES);
    expect(after.filter((r) => !(r.status === 'success' && r.attempts === 1) && !(r.status === 'pending' && r.attempts === 0 && r.last_error === null))).toEqual([]);

    receiver.behaviour = answer(200);
    const second = worker();
    await second.ready;
    await waitFor(() => allDelivered(endpoint.id), 30_000, `all ${DELIVERIES} deliveries`);
    const rows = await rowsOf(endpoint.id);
    const ids = receiver.received.slice(before).map((r) => String(r.headers['x-svc-delivery']));
    expect(new Set(ids)).toEqual(new Set(rows.map((r) => r.id)));
    expect(rows.every((r) => r.attempts === 1)).toBe(true);
    expect(receiver.rejected).toEqual([]);
  }, 90_000);
});
