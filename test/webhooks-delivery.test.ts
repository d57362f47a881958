import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { createTribe, join, registerEndpoint, signupUser, type TestUser } from './factory.js';
import {
  answer,
  dropConnection,
  gql,
  hang,
  isolatedDatabase,
  ManualClock,
  plantedResolver,
  Receiver,
  sqlRows,
  startWebhookService,
  type TestService,
} from './support.js';
import { emitEvent, type OutboxEventType } from '../subgraphs/outbox/index.js';
import {
  attempt,
  drain,
  fanOut,
  interruptAttempts,
  MAX_ATTEMPTS,
  PER_ORIGIN_CONCURRENCY,
  PING_MESSAGE,
  RETRY_DELAYS_MS,
} from '../subgraphs/webhooks/index.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const TIMEOUT_MS = 3000;
const BATCH = 5;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** One delivery row as the tests read it. */
interface Row {
  id: string;
  event: string;
  payload: string;
  status: string;
  attempts: number;
  response_status: number | null;
  response_time_ms: number | null;
  last_error: string | null;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  created_at: Date;
}

describe('webhook delivery', () => {
  let t: TestService;
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  const clock = new ManualClock();
  const resolver = plantedResolver({ 'rebind.example.com': ['93.184.216.34'] });
  let owner: TestUser;
  const receivers: Receiver[] = [];
  const endpoints: Array<{ handle: string; id: string }> = [];

  const receiver = async (certificate: 'trusted' | 'untrusted' = 'trusted') => {
    const r = await new Receiver(clock.clock, certificate).start();
    receivers.push(r);
    return r;
  };
  /** A tribe of `owner` with one endpoint pointing at `r`. */
  const tribeWithEndpoint = async (r: Receiver, body: { url?: string; events?: string[]; enabled?: boolean } = {}) => {
    const tribe = await createTribe(t, owner);
    const endpoint = await registerEndpoint(t, owner, tribe.handle, { url: r.url(), ...body }, r);
    endpoints.push({ handle: tribe.handle, id: endpoint.id });
    return { tribe, endpoint };
  };
  /** A new user joins: one member.joined event. */
  const someoneJoins = async (handle: string) => {
    const user = await signupUser(t);
    await join(t, user, handle);
    return user;
  };
  const deliveriesOf = (endpointId: string) =>
    sqlRows<Row>(t, sql`select * from webhook_deliveries where endpoint_id = ${endpointId} order by created_at, id`);
  const one = async (endpointId: string) => {
    const rows = await deliveriesOf(endpointId);
    expect(rows).toHaveLength(1);
    return rows[0];
  };
  const at = (d: Date | null) => (d === null ? null : new Date(d).toISOString());
  const webhooksPath = (handle: string) => `/communities/${handle}/webhooks`;

  beforeAll(async () => {
    db = await isolatedDatabase();
    t = await startWebhookService({
      clock: clock.clock,
      resolve: resolver,
      databaseUrl: db.url,
      // Sessions live on the same clock, which these tests move by weeks.
      env: { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), WEBHOOK_BATCH_SIZE: String(BATCH), SESSION_TTL_HOURS: String(24 * 365) },
    });
    owner = await signupUser(t);
  });
  afterEach(async () => {
    // Each test's endpoints go (with their deliveries), so the next test's drain sees only its own.
    for (const e of endpoints.splice(0)) await t.api.delete(`${webhooksPath(e.handle)}/${e.id}`).set('cookie', owner.cookie);
    clock.advance(HOUR);
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.stop()));
    await t?.stop();
    await db?.drop();
  });

  describe('fan-out: (queued) → pending', () => {
    it('queues one pending delivery per subscribed, enabled endpoint, body serialised once with created fixed at enqueue', async () => {
      const r = await receiver();
      const { tribe, endpoint } = await tribeWithEndpoint(r, { events: ['member.joined', 'member.left'] });
      const postsOnly = await registerEndpoint(t, owner, tribe.handle, { url: r.url('/posts'), events: ['post.created'] });
      const disabled = await registerEndpoint(t, owner, tribe.handle, { url: r.url('/off'), events: ['member.joined'], enabled: false });
      const other = await tribeWithEndpoint(r);
      endpoints.push({ handle: tribe.handle, id: postsOnly.id }, { handle: tribe.handle, id: disabled.id });

      const user = await someoneJoins(tribe.handle);
      const [event] = await sqlRows(t, sql`select id, created_at from outbox_events where community_id = ${tribe.id} and type = 'member.joined'`);
      expect(await fanOut(t.deps)).toBe(1);

      const row = await one(endpoint.id);
      expect(row).toMatchObject({ event: 'member.joined', status: 'pending', attempts: 0, response_status: null, last_error: null, delivered_at: null });
      expect(row.id).toMatch(UUID);
      expect(at(row.next_attempt_at)).toBe(clock.current.toISOString());
      expect(at(row.created_at)).toBe(at(event.created_at));
      expect(row.payload).toBe(
        JSON.stringify({
          id: row.id,
          type: 'member.joined',
          created: Math.floor(new Date(event.created_at).getTime() / 1000),
          data: JSON.parse(row.payload).data,
        }),
      );
      expect(JSON.parse(row.payload).data).toEqual({ userId: user.id, handle: tribe.handle });
      expect(await deliveriesOf(postsOnly.id)).toEqual([]);
      expect(await deliveriesOf(disabled.id)).toEqual([]);
      expect(await deliveriesOf(other.endpoint.id)).toEqual([]);
      const [processed] = await sqlRows(t, sql`select processed_at from outbox_events where id = ${event.id}`);
      expect(at(processed.processed_at)).toBe(clock.current.toISOString());

      expect(await fanOut(t.deps)).toBe(0); // each event once
      expect(await deliveriesOf(endpoint.id)).toHaveLength(1);
    });
  });

  describe('fan-out of the other domains', () => {
    it('delivers order.paid, win.approved and event.created from a plain outbox row, like the member events', async () => {
      const r = await receiver();
      const { tribe, endpoint } = await tribeWithEndpoint(r, { events: ['order.paid', 'win.approved', 'event.created'] });
      const data = {
        'order.paid': { orderId: 'o1', amount: 1990, currency: 'BRL', handle: tribe.handle },
        'win.approved': { winId: 'w1', userId: owner.id, handle: tribe.handle },
        'event.created': { eventId: 'e1', handle: tribe.handle },
      } as const;
      await t.deps.database.db.transaction(async (tx) => {
        for (const [type, body] of Object.entries(data)) await emitEvent(tx, tribe.id, type as OutboxEventType, body);
      });
      expect(await drain(t.deps)).toMatchObject({ attempted: 3, succeeded: 3 });
      expect(r.rejected).toEqual([]);
      expect(Object.fromEntries(r.events.map((e) => [e.type, e.data]))).toEqual(data);
      expect((await deliveriesOf(endpoint.id)).map((d) => d.status)).toEqual(['success', 'success', 'success']);
    });
  });

  describe('drain: pending → success', () => {
    it('POSTs the stored body byte for byte with the three headers, and sets deliveredAt on a 2xx', async () => {
      const r = await receiver();
      r.behaviour = answer(204);
      const { tribe, endpoint } = await tribeWithEndpoint(r);
      await someoneJoins(tribe.handle);
      const result = await drain(t.deps);
      expect(result).toEqual({ attempted: 1, succeeded: 1, retrying: 0, failed: 0, discarded: 0 });

      const row = await one(endpoint.id);
      expect(row).toMatchObject({ status: 'success', attempts: 1, response_status: 204, last_error: null, next_attempt_at: null });
      expect(at(row.delivered_at)).toBe(clock.current.toISOString());
      expect(row.response_time_ms).toBeGreaterThanOrEqual(0);

      expect(r.rejected).toEqual([]);
      expect(r.received).toHaveLength(1);
      const [got] = r.received;
      expect(got.rawBody).toBe(row.payload);
      expect(got.headers['content-type']).toBe('application/json');
      expect(got.headers['x-svc-delivery']).toBe(row.id);
      expect(got.headers['x-svc-event']).toBe('member.joined');
      expect(got.headers['x-svc-signature']).toMatch(new RegExp(`^t=${clock.seconds},v1=[0-9a-f]{64}$`));
      expect(got.event).toMatchObject({ id: row.id, type: 'member.joined' });

      expect(await drain(t.deps)).toMatchObject({ attempted: 0 }); // never sent again
    });

    it('shows in the delivery log the body the receiver received, byte for byte, to the owner but not to a member or the owner of another tribe (REST and GraphQL)', async () => {
      const r = await receiver();
      const { tribe, endpoint } = await tribeWithEndpoint(r);
      await someoneJoins(tribe.handle);
      expect(await drain(t.deps)).toMatchObject({ attempted: 1, succeeded: 1 });
      expect(r.received).toHaveLength(1);
      const sent = r.received[0].rawBody;

      const log = await t.api.get(`${webhooksPath(tribe.handle)}/${endpoint.id}/deliveries`).set('cookie', owner.cookie);
      expect(log.status).toBe(200);
      expect(log.body.deliveries).toHaveLength(1);
      const [row] = log.body.deliveries;
      expect(row).toMatchObject({ event: 'member.joined', status: 'success', attempts: 1, responseStatus: 200, lastError: null });
      expect(row.responseTimeMs).toEqual(expect.any(Number));
      expect(row.body).toBe(sent);
      expect(JSON.parse(row.body)).toMatchObject({ id: row.id, type: 'member.joined' });

      const query = 'query($h: String, $e: ID!){ webhookDeliveries(handle: $h, endpointId: $e){ items { id body } } }';
      const out = await gql(t, owner, query, { h: tribe.handle, e: endpoint.id });
      expect(out).toEqual({ data: { webhookDeliveries: { items: [{ id: row.id, body: sent }] } } });

      // Nobody else reads it: a member of the tribe, or the owner of another tribe.
      const member = await someoneJoins(tribe.handle);
      const stranger = await signupUser(t);
      await createTribe(t, stranger);
      for (const user of [member, stranger]) {
        const res = await t.api.get(`${webhooksPath(tribe.handle)}/${endpoint.id}/deliveries`).set('cookie', user.cookie);
        expect(res.status).toBe(403);
        expect(JSON.stringify(res.body)).not.toContain(row.id);
        const denied = await gql(t, user, query, { h: tribe.handle, e: endpoint.id });
        expect(denied.data ?? null).toBeNull();
        expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      }
    });

    it('reaches a receiver named by an allow-listed host name through the dial-time lookup', async () => {
      const r = await receiver();
      const { tribe, endpoint } = await tribeWithEndpoint(r, { url: r.url('/hooks', 'localhost') });
      await someoneJoins(tribe.handle);
      await drain(t.deps);
      expect(await one(endpoint.id)).toMatchObject({ status: 'success', response_status: 200 });
      expect(r.events).toHaveLength(1);
    });
  });

  describe('drain: pending → pending (retry) → failed', () => {
    it('retries after 1 m, 5 m, 30 m, 2 h and 6 h, then fails for good on the sixth failure', async () => {
      expect(RETRY_DELAYS_MS).toEqual([MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR]);
      expect(MAX_ATTEMPTS).toBe(6);
      const r = await receiver();
      r.behaviour = answer(503);
      const { tribe, endpoint } = await tribeWithEndpoint(r);
      await someoneJoins(tribe.handle);
      const start = clock.current.getTime();

      let elapsed = 0;
      for (let n = 1; n <= 5; n += 1) {
        expect(await drain(t.deps)).toMatchObject({ attempted: 1, retrying: 1 });
        const row = await one(endpoint.id);
        expect(row).toMatchObject({ status: 'pending', attempts: n, response_status: 503, last_error: 'HTTP 503', delivered_at: null });
        expect(at(row.next_attempt_at)).toBe(new Date(clock.current.getTime() + RETRY_DELAYS_MS[n - 1]).toISOString());
        // Not due a second early, due on the dot.
        clock.advance(RETRY_DELAYS_MS[n - 1] - 1000);
        expect(await drain(t.deps)).toMatchObject({ attempted: 0 });
        clock.advance(1000);
        elapsed += RETRY_DELAYS_MS[n - 1];
      }
      expect(clock.current.getTime() - start).toBe(elapsed);
      expect(elapsed).toBe(8 * HOUR + 36 * MINUTE); // the spec's "about 8 h 40"

      expect(await drain(t.deps)).toMatchObject({ attempted: 1, failed: 1 });
      const row = await one(endpoint.id);
      expect(row).toMatchObject({ status: 'failed', attempts: 6, response_status: 503, last_error: 'HTTP 503', next_attempt_at: null, delivered_at: null });
      clock.advance(7 * 24 * HOUR);
      expect(await drain(t.deps)).toMatchObject({ attempted: 0 }); // never retried again

      // Six attempts of the same delivery: same id, same bytes, a fresh t on each.
      expect(r.rejected).toEqual([]);
      expect(r.received).toHaveLength(6);
      expect(new Set(r.received.map((x) => x.rawBody))).toEqual(new Set([row.payload]));
      expect(new Set(r.received.map((x) => x.headers['x-svc-delivery']))).toEqual(new Set([row.id]));
      const ts = r.received.map((x) => Number(/^t=(\d+)/.exec(String(x.headers['x-svc-signature']))![1]));
      expect(new Set(ts).size).toBe(6);
      expect(ts[5] - ts[0]).toBe(elapsed / 1000);
    });

    it('counts a 3xx as a failure and does not follow the redirect', async () => {
      const r = await receiver();
      r.behaviour = answer(302, { location: r.url('/elsewhere') });
      const { tribe, endpoint } = await tribeWithEndpoint(r);
      await someoneJoins(tribe.handle);
      await drain(t.deps);
      expect(await one(endpoint.id)).toMatchObject({ status: 'pending', attempts: 1, response_status: 302, last_error: 'HTTP 302 (redirects are not followed)' });
      expect(r.received.map((x) => x.headers['x-svc-delivery'])).toHaveLength(1);
    });

    it('gives up on a receiver that does not answer within the timeout (status null, lastError timeout)', async () => {
      const r = await receiver();
      r.behaviour = hang;
      const { tribe, endpoint } = await tribeWithEndpoint(r);
      await someoneJoins(tribe.handle);
      const started = Date.now();
      await drain(t.deps);
      const took = Date.now() - started;
      expect(took).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(took).toBeLessThan(TIMEOUT_MS + 2000);
      const row = await one(endpoint.id);
      expect(row).toMatchObject({ status: 'pending', attempts: 1, response_status: null, last_error: `timeout: no complete answer within ${TIMEOUT_MS} ms` });
      expect(row.response_time_ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(r.received).toHaveLength(1); // it got the request, it just never answered
    });

    it('counts a receiver that closes the connection without answering as a failure', async () => {
      const r = await receiver();
      r.behaviour = dropConnection;
      const { tribe, endpoint } = await tribeWithEndpoint(r);
      await someoneJoins(tribe.handle);
      await drain(t.deps);
      expect(await one(endpoint.id)).toMatchObject({
        status: 'pending',
        attempts: 1,
        response_status: null,
        last_error: 'connection closed by the receiver before an answer',
      });
    });

    it('records connection refused when nothing listens', async () => {
      const r = await receiver();
      const { tribe, endpoint } = await tribeWithEndpoint(r);
      await r.stop();
      receivers.splice(receivers.indexOf(r), 1);
      await someoneJoins(tribe.handle);
      await drain(t.deps);
      expect(await one(endpoint.id)).toMatchObject({ status: 'pending', attempts: 1, response_status: null, last_error: 'connection refused' });
    });

    it('records a TLS error for a certificate the service does not trust (checks are never switched off)', async () => {
      const r = await receiver('untrusted');
      const { tribe, endpoint } = await tribeWithEndpoint(r);
      await someoneJoins(tribe.handle);
      await drain(t.deps);
      const row = await one(endpoint.id);
      expect(row).toMatchObject({ status: 'pending', attempts: 1, response_status: null });
      expect(row.last_error).toMatch(/^TLS error: [A-Z_]+$/);
      expect(r.received).toEqual([]);
    });

    it('refuses to dial an address that turned private after registration (DNS rebinding), logged as lastError', async () => {
      const r = await receiver();
      const tribe = await createTribe(t, owner);
      resolver.answers['rebind.example.com'] = ['93.184.216.34'];
      const endpoint = await registerEndpoint(t, owner, tribe.handle, { url: `https://rebind.example.com:${r.port}/hooks` }, r);
      endpoints.push({ handle: tribe.handle, id: endpoint.id });
      resolver.answers['rebind.example.com'] = ['10.9.8.7'];
      await someoneJoins(tribe.handle);
      await drain(t.deps);
      expect(await one(endpoint.id)).toMatchObject({
        status: 'pending',
        attempts: 1,
        response_status: null,
        last_error: 'blocked address 10.9.8.7 (private)',
      });
      expect(r.received).toEqual([]);
    });
  });

  describe('disabled endpoint: pending stays pending', () => {
    it('keeps pending deliveries queued while disabled, without ageing, and resumes them after re-enabling', async () => {
      const r = await receiver();
      r.behaviour = answer(500);
      const { tribe, endpoint } = await tribeWithEndpoint(r);
      await someoneJoins(tribe.handle);
      await drain(t.deps); // one failure: due again in 1 minute
      r.behaviour = answer(200);
      const disable = await t.api.patch(`${webhooksPath(tribe.handle)}/${endpoint.id}`).set('cookie', owner.cookie).send({ enabled: false });
      expect(disable.status).toBe(200);
      expect(disable.body.enabled).toBe(false);

      await someoneJoins(tribe.handle); // an event while disabled: not queued for it
      clock.advance(30 * 24 * HOUR);
      expect(await drain(t.deps)).toMatchObject({ attempted: 0 });
      const waiting = await one(endpoint.id);
      expect(waiting).toMatchObject({ status: 'pending', attempts: 1 });

      const enable = await t.api.patch(`${webhooksPath(tribe.handle)}/${endpoint.id}`).set('cookie', owner.cookie).send({ enabled: true });
      expect(enable.body.enabled).toBe(true);
      expect(await drain(t.deps)).toMatchObject({ attempted: 1, succeeded: 1 });
      expect(await one(endpoint.id)).toMatchObject({ id: waiting.id, status: 'success', attempts: 2 });
      expect(r.events.map((e) => e.id)).toEqual([waiting.id, waiting.id]);
    });
  });

  describe('deleted endpoint: any → removed', () => {
    it('deletes the deliveries with the endpoint and stops an attempt in flight at once, recording nothing', async () => {
      const r = await receiver();
      r.behaviour = hang;
      const { tribe, endpoint } = await tribeWithEndpoint(r);
      for (let i = 0; i < 3; i += 1) await someoneJoins(tribe.handle);
      const draining = drain(t.deps);
      while (r.received.length < 3) await new Promise((resolve) => setTimeout(resolve, 10));

      const started = Date.now();
      const res = await t.api.delete(`${webhooksPath(tribe.handle)}/${endpoint.id}`).set('cookie', owner.cookie);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ok: true });
      expect(await draining).toEqual({ attempted: 3, succeeded: 0, retrying: 0, failed: 0, discarded: 3 });
      expect(Date.now() - started).toBeLessThan(TIMEOUT_MS); // aborted, not timed out
      expect(await deliveriesOf(endpoint.id)).toEqual([]);
      expect(await sqlRows(t, sql`select id from webhook_endpoints where id = ${endpoint.id}`)).toEqual([]);
      endpoints.splice(0);
      clock.advance(HOUR);
      expect(await drain(t.deps)).toMatchObject({ attempted: 0 });
      expect(r.received).toHaveLength(3);
    });

    it('does not record an attempt claimed before the endpoint was deleted elsewhere', async () => {
      const r = await receiver();
      let release: () => void = () => undefined;
      r.behaviour = (_x, _req, res) => {
        release = () => res.writeHead(200).end('ok');
      };
      const { tribe, endpoint } = await tribeWithEndpoint(r);
      await someoneJoins(tribe.handle);
      const draining = drain(t.deps);
      while (r.received.length < 1) await new Promise((resolve) => setTimeout(resolve, 10));
      // Another process deletes it: no abort reaches this one, the answer comes back later.
      await sqlRows(t, sql`delete from webhook_endpoints where id = ${endpoint.id}`);
      release();
      expect(await draining).toMatchObject({ attempted: 1, discarded: 1, succeeded: 0 });
      expect(await deliveriesOf(endpoint.id)).toEqual([]);
      endpoints.splice(0);
    });
  });

  describe('shutdown', () => {
    it('does not count an attempt interrupted because the process stops: a later cycle sends it again', async () => {
      const r = await receiver();
      r.behaviour = hang;
      const { tribe, endpoint } = await tribeWithEndpoint(r);
      await someoneJoins(tribe.handle);
      const draining = drain(t.deps);
      while (r.received.length < 1) await new Promise((resolve) => setTimeout(resolve, 10));
      interruptAttempts(t.deps);
      expect(await draining).toMatchObject({ attempted: 1, discarded: 1 });
      const row = await one(endpoint.id);
      expect(row).toMatchObject({ status: 'pending', attempts: 0, last_error: null });

      r.behaviour = answer(200);
      expect(await drain(t.deps)).toMatchObject({ attempted: 0 }); // still claimed by the stopped attempt
      clock.advance(2 * MINUTE); // the claim lapses
      expect(await drain(t.deps)).toMatchObject({ attempted: 1, succeeded: 1 });
      expect(await one(endpoint.id)).toMatchObject({ id: row.id, status: 'success', attempts: 1 });
      expect(r.received.map((x) => x.headers['x-svc-delivery'])).toEqual([row.id, row.id]);
    });
  });

  describe('resend', () => {
    it('queues a failed delivery again with the same id and body, for six new attempts', async () => {
      const r = await receiver();
      r.behaviour = answer(500);
      const { tribe, endpoint } = await tribeWithEndpoint(r);
      await someoneJoins(tribe.handle);
      for (let n = 0; n < MAX_ATTEMPTS; n += 1) {
        await drain(t.deps);
        clock.advance(7 * HOUR);
      }
      const failed = await one(endpoint.id);
      expect(failed).toMatchObject({ status: 'failed', attempts: 6 });
      const path = `${webhooksPath(tribe.handle)}/${endpoint.id}/deliveries/${failed.id}/resend`;

      r.behaviour = answer(200);
      const res = await t.api.post(path).set('cookie', owner.cookie);
      expect(res.status).toBe(202);
      expect(res.body.delivery).toMatchObject({ id: failed.id, status: 'pending', attempts: 0, nextAttemptAt: clock.current.toISOString() });
      expect((await t.api.post(path).set('cookie', owner.cookie)).body).toEqual({ error: 'not_failed', message: expect.any(String), requestId: expect.any(String) });

      expect(await drain(t.deps)).toMatchObject({ attempted: 1, succeeded: 1 });
      expect(await one(endpoint.id)).toMatchObject({ id: failed.id, status: 'success', attempts: 1, payload: failed.payload });
      expect(r.received.at(-1)!.rawBody).toBe(failed.payload);
      expect(r.received.at(-1)!.headers['x-svc-delivery']).toBe(failed.id);
      expect((await t.api.post(path).set('cookie', owner.cookie)).status).toBe(409);
    });
  });

  describe('batches and concurrency', () => {
    it('sends at most WEBHOOK_BATCH_SIZE per cycle, concurrently, and the rest in later cycles without loss', async () => {
      const r = await receiver();
      r.behaviour = (_x, _req, res) => void setTimeout(() => res.writeHead(200).end(), 1_000);
      const { tribe, endpoint } = await tribeWithEndpoint(r);
      for (let i = 0; i < 12; i += 1) await someoneJoins(tribe.handle);
      const started = Date.now();
      expect(await drain(t.deps)).toMatchObject({ attempted: BATCH, succeeded: BATCH });
      expect(Date.now() - started).toBeLessThan(2 * 1_000); // concurrent: one after another takes BATCH seconds
      expect(await drain(t.deps)).toMatchObject({ attempted: BATCH });
      expect(await drain(t.deps)).toMatchObject({ attempted: 2 });
      expect(await drain(t.deps)).toMatchObject({ attempted: 0 });
      const rows = await deliveriesOf(endpoint.id);
      expect(rows).toHaveLength(12);
      expect(rows.every((x) => x.status === 'success' && x.attempts === 1)).toBe(true);
      expect(new Set(r.events.map((e) => e.id)).size).toBe(12);
      expect(r.received).toHaveLength(12);
    });

    it('keeps at most PER_ORIGIN_CONCURRENCY attempts open per receiver, each timed from its own turn', async () => {
      const r = await receiver();
      let open = 0;
      let most = 0;
      r.behaviour = (_x, _req, res) => {
        open += 1;
        most = Math.max(most, open);
        setTimeout(() => {
          open -= 1;
          res.writeHead(200).end();
        }, 1_000);
      };
      const { endpoint } = await tribeWithEndpoint(r);
      const target = { endpointId: endpoint.id, url: endpoint.url, secret: endpoint.secret };
      const results = await Promise.all(
        Array.from({ length: 3 * PER_ORIGIN_CONCURRENCY }, (_, i) => attempt(t.deps, target, { id: `d${i}`, event: 'ping', payload: `{"id":"d${i}"}` })),
      );
      expect(most).toBe(PER_ORIGIN_CONCURRENCY);
      expect(results.every((x) => x.ok && x.status === 200)).toBe(true);
      // Waiting for a turn is not part of an attempt's time (the last turn's attempts waited two seconds).
      expect(Math.max(...results.map((x) => x.timeMs))).toBeLessThan(2 * 1_000);
    });

    it('never sends the same attempt twice when two workers drain at once', async () => {
      // A second process on the same database (PostgreSQL); on PGlite, a second drain in this process.
      const second = db.url
        ? await startWebhookService({ clock: clock.clock, databaseUrl: db.url, env: { WEBHOOK_BATCH_SIZE: String(BATCH) } })
        : t;
      try {
        const r = await receiver();
        r.behaviour = (_x, _req, res) => void setTimeout(() => res.writeHead(200).end(), 50);
        const { tribe, endpoint } = await tribeWithEndpoint(r);
        for (let i = 0; i < 23; i += 1) await someoneJoins(tribe.handle);
        await fanOut(t.deps);
        const byWorker = [0, 0];
        for (let round = 0; round < 20; round += 1) {
          const [a, b] = await Promise.all([drain(t.deps), drain(second.deps)]);
          byWorker[0] += a.attempted;
          byWorker[1] += b.attempted;
          if (a.attempted + b.attempted === 0) break;
        }
        expect(byWorker[0] + byWorker[1]).toBe(23);
        expect(Math.min(...byWorker)).toBeGreaterThan(0); // both worked, side by side
        const ids = r.received.map((x) => x.headers['x-svc-delivery']);
        expect(ids).toHaveLength(23);
        expect(new Set(ids).size).toBe(23);
        expect(r.rejected).toEqual([]);
        const rows = await deliveriesOf(endpoint.id);
        expect(rows.every((x) => x.status === 'success' && x.attempts === 1)).toBe(true);
      } finally {
        if (second !== t) await second.stop();
      }
    });

    it('fans each event out once when two workers fan out at once', async () => {
      const second = db.url ? await startWebhookService({ clock: clock.clock, databaseUrl: db.url }) : t;
      try {
        const r = await receiver();
        const { tribe, endpoint } = await tribeWithEndpoint(r);
        for (let i = 0; i < 10; i += 1) await someoneJoins(tribe.handle);
        const [a, b] = await Promise.all([fanOut(t.deps), fanOut(second.deps)]);
        expect(a + b).toBe(10);
        expect(await deliveriesOf(endpoint.id)).toHaveLength(10);
      } finally {
        if (second !== t) await second.stop();
      }
    });
  });

  describe('test ping', () => {
    it('sends ping now and answers with the receiver status and time; the ping is in the log', async () => {
      const r = await receiver();
      r.behaviour = answer(202);
      const { tribe, endpoint } = await tribeWithEndpoint(r);
      const res = await t.api.post(`${webhooksPath(tribe.handle)}/${endpoint.id}/test`).set('cookie', owner.cookie);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ ok: true, statusCode: 202, error: null });
      expect(res.body.responseTimeMs).toEqual(expect.any(Number));
      expect(r.rejected).toEqual([]);
      expect(r.events).toEqual([{ id: res.body.delivery.id, type: 'ping', created: clock.seconds, data: { message: PING_MESSAGE } }]);
      expect(r.received[0].headers['x-svc-event']).toBe('ping');
      expect(res.body.delivery).toMatchObject({ event: 'ping', status: 'success', attempts: 1, responseStatus: 202 });
      expect(res.body.delivery.body).toBe(r.received[0].rawBody);

      const log = await t.api.get(`${webhooksPath(tribe.handle)}/${endpoint.id}/deliveries`).set('cookie', owner.cookie);
      expect(log.body.deliveries.map((d: { id: string }) => d.id)).toEqual([res.body.delivery.id]);
      expect(await drain(t.deps)).toMatchObject({ attempted: 0 }); // a test is never retried
    });

    it('reports a failing receiver without retrying, also over the resource API and GraphQL', async () => {
      const r = await receiver();
      r.behaviour = answer(500);
      const { tribe, endpoint } = await tribeWithEndpoint(r);
      const res = await t.api.post(`${webhooksPath(tribe.handle)}/${endpoint.id}/test`).set('cookie', owner.cookie);
      expect(res.body).toMatchObject({ ok: false, statusCode: 500, error: 'HTTP 500' });
      expect(res.body.delivery).toMatchObject({ status: 'failed', attempts: 1, nextAttemptAt: null });

      const token = (await t.api.post('/v1/auth/login').send({ email: owner.email, password: owner.password })).body.data.access_token;
      r.behaviour = answer(200);
      const resource = await t.api.post(`/v1/communities/${tribe.id}/webhooks/${endpoint.id}/test`).set('authorization', `Bearer ${token}`);
      expect(resource.status).toBe(200);
      expect(resource.body.data).toMatchObject({ success: true, status_code: 200, error: null });
      expect(resource.body.data.response_time_ms).toEqual(expect.any(Number));

      const out = await gql(t, owner, 'mutation($c: ID!, $id: ID!){ testWebhookEndpoint(communityId: $c, id: $id){ ok statusCode } }', {
        c: tribe.id,
        id: endpoint.id,
      });
      expect(out).toEqual({ data: { testWebhookEndpoint: { ok: true, statusCode: 200 } } });
      expect(r.events.map((e) => e.type)).toEqual(['ping', 'ping', 'ping']);
      expect(r.rejected).toEqual([]);
    });
  });
});
