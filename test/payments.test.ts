import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import express from 'express';
import { createHmac, randomUUID } from 'node:crypto';
import request from 'supertest';
import { paymentsRouter } from '../rest-facade/src/application/payments.js';
import { createKey, crew, markPaid, staffedTribe, unique, UNKNOWN_ID, type Actor, type Cast } from './factory.js';
import { bearer, countOf, eventsOf, movableClock, platformGet, sqlRows, startService, type TestService } from './support.js';
import { expectError, ISO, UUID } from './expected.js';

const SECRET = 'whsec_test_0123456789abcdefghijklmnopqrstuv';
const HOUR = 3_600_000;
const STRIPE = '/webhooks/payments/stripe';

/** A Stripe-format signature header over `${t}.${payload}`. */
const signature = (payload: string, t: number, secret = SECRET) =>
  `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${payload}`).digest('hex')}`;

/** A Stripe event paying `orderId` (as Stripe sends them: metadata, amount and currency on the session or the payment intent; the test orders are BRL 49.90). */
function stripeEvent(orderId: unknown, overrides: { id?: string; type?: string; object?: Record<string, unknown> } = {}) {
  const type = overrides.type ?? 'checkout.session.completed';
  const object =
    type === 'payment_intent.succeeded'
      ? { id: `pi_${unique()}`, object: 'payment_intent', amount_received: 4990, currency: 'brl', metadata: { order_id: orderId }, ...overrides.object }
      : { id: `cs_${unique()}`, object: 'checkout.session', payment_status: 'paid', amount_total: 4990, currency: 'brl', metadata: { order_id: orderId }, ...overrides.object };
  return { id: overrides.id ?? `evt_${unique()}${unique()}`, object: 'event', type, created: 1_700_000_000, livemode: false, data: { object } };
}

/** Inbound payments: the Stripe-format webhook, the manual provider's mark-paid, and paid events end to end. */
describe('payments', () => {
  let t: TestService;
  let cast: Cast;
  let otherCast: Cast;
  const clock = movableClock();
  const nowSeconds = () => Math.floor(clock.now().getTime() / 1000);

  beforeAll(async () => {
    t = await startService({ STRIPE_WEBHOOK_SECRET: SECRET }, clock.now);
    [cast, otherCast] = await Promise.all([crew(t), crew(t)]);
  });
  afterAll(async () => {
    await t.stop();
  });

  const at = (hours: number) => new Date(clock.now().getTime() + hours * HOUR).toISOString();
  const base = (tribeId: string) => `/v1/communities/${tribeId}/events`;
  async function paidEvent(tribeId: string, who: Actor, body: Record<string, unknown> = {}) {
    const res = await t.api
      .post(base(tribeId))
      .set(bearer(who))
      .send({ title: `Paid ${unique()}`, event_type: 'online', starts_at: at(24), ends_at: at(26), price: 49.9, ...body });
    if (res.status !== 201) throw new Error(`createEvent: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data as Record<string, any>;
  }
  const register = (tribeId: string, eventId: string, who: Actor) => t.api.post(`${base(tribeId)}/${eventId}/register`).set(bearer(who));
  /** A staffed tribe with a paid event and the member's pending order for it. */
  async function pendingOrder(body: Record<string, unknown> = {}) {
    const s = await staffedTribe(t, cast);
    const event = await paidEvent(s.tribe.id, s.owner, body);
    const res = await register(s.tribe.id, event.id, s.member);
    if (res.status !== 202) throw new Error(`register: ${res.status} ${JSON.stringify(res.body)}`);
    return { s, event, order: res.body.data.order as Record<string, any> };
  }
  /** POSTs `payload` (an object is serialised once; a string is sent byte for byte) signed at `t`. */
  function deliver(payload: unknown, options: { t?: number; secret?: string; header?: string | null; body?: string } = {}) {
    const raw = typeof payload === 'string' ? payload : JSON.stringify(payload);
    const header = options.header === undefined ? signature(raw, options.t ?? nowSeconds(), options.secret) : options.header;
    const req = t.api.post(STRIPE).set('content-type', 'application/json; charset=utf-8');
    if (header !== null) req.set('stripe-signature', header);
    return req.send(options.body ?? raw);
  }
  const orderRow = async (id: string) =>
    (await sqlRows(t, sql`select status, to_char(paid_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as paid_at from orders where id = ${id}`))[0];
  const registrations = (eventId: string) =>
    sqlRows(t, sql`select user_id, status, order_id, ticket_code from event_registrations where event_id = ${eventId} order by created_at, id`);
  const providerEvents = (orderId: string) => countOf(t, sql`select count(*)::int as n from payment_provider_events where order_id = ${orderId}`);
  const paidEvents = async (tribeId: string, orderId: string) =>
    (await eventsOf(t, tribeId, 'order.paid')).filter((e) => e.data.orderId === orderId);
  /** Asserts that nothing about the order changed: still pending, no registration, no order.paid, no provider event. */
  async function expectUntouched(s: { tribe: { id: string } }, eventId: string, orderId: string) {
    expect(await orderRow(orderId)).toEqual({ status: 'pending', paid_at: null });
    expect(await registrations(eventId)).toEqual([]);
    expect(await paidEvents(s.tribe.id, orderId)).toEqual([]);
    expect(await providerEvents(orderId)).toBe(0);
  }

  describe('paid event registration', () => {
    it('answers 202 with the pending order and its checkout, the same order on every call, and takes no seat', async () => {
      const s = await staffedTribe(t, cast);
      const event = await paidEvent(s.tribe.id, s.owner, { max_attendees: 2 });
      const first = await register(s.tribe.id, event.id, s.member);
      expect(first.status).toBe(202);
      expect(first.body).toEqual({
        data: {
          status: 'pending_payment',
          order: { id: expect.stringMatching(UUID), amount: 49.9, amount_cents: 4990, currency: 'BRL', status: 'pending', checkout: { provider: 'manual' } },
        },
      });
      const again = await register(s.tribe.id, event.id, s.member);
      expect(again.status).toBe(202);
      expect(again.body.data.order.id).toBe(first.body.data.order.id);
      expect(
        await sqlRows(t, sql`select buyer_id, product_type, product_id, amount_cents, currency, status from orders where product_id = ${event.id}`),
      ).toEqual([{ buyer_id: s.member.id, product_type: 'event', product_id: event.id, amount_cents: 4990, currency: 'BRL', status: 'pending' }]);
      expect(await registrations(event.id)).toEqual([]);
      const view = await t.api.get(`${base(s.tribe.id)}/${event.id}`).set(bearer(s.member));
      expect(view.body.data).toMatchObject({ registered_count: 0, spots_left: 2, viewer_registration: null });
    });

    it('answers 409 event_full without creating an order when the paid seats are gone', async () => {
      const { s, event, order } = await pendingOrder({ max_attendees: 1 });
      expect((await deliver(stripeEvent(order.id))).status).toBe(200);
      expectError(await register(s.tribe.id, event.id, s.member2), 409, 'event_full');
      expect(await countOf(t, sql`select count(*)::int as n from orders where product_id = ${event.id} and buyer_id = ${s.member2.id}`)).toBe(0);
    });
  });

  describe('POST /webhooks/payments/stripe', () => {
    it('marks the order paid, confirms the registration and emits order.paid in one go (checkout.session.completed)', async () => {
      const { s, event, order } = await pendingOrder();
      const evt = stripeEvent(order.id);
      const res = await deliver(evt);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ received: true });
      const paid = await orderRow(order.id);
      expect(paid).toEqual({ status: 'paid', paid_at: expect.stringMatching(ISO) });
      expect(await registrations(event.id)).toEqual([{ user_id: s.member.id, status: 'confirmed', order_id: order.id, ticket_code: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/) }]);
      expect(await paidEvents(s.tribe.id, order.id)).toEqual([
        {
          data: {
            orderId: order.id,
            userId: s.member.id,
            amount: 4990,
            currency: 'BRL',
            productType: 'event',
            productId: event.id,
            handle: s.tribe.handle,
          },
        },
      ]);
      expect(await sqlRows(t, sql`select provider, event_id, event_type, order_id from payment_provider_events where order_id = ${order.id}`)).toEqual([
        { provider: 'stripe', event_id: evt.id, event_type: 'checkout.session.completed', order_id: order.id },
      ]);
      // Registering now answers the confirmed registration with its ticket.
      const reg = await register(s.tribe.id, event.id, s.member);
      expect(reg.status).toBe(200);
      expect(reg.body.data).toMatchObject({ event_id: event.id, user_id: s.member.id, status: 'confirmed', order_id: order.id });
    });

    it('pays on payment_intent.succeeded too', async () => {
      const { event, order } = await pendingOrder();
      const res = await deliver(stripeEvent(order.id, { type: 'payment_intent.succeeded', object: { amount_received: 4990, currency: 'brl' } }));
      expect(res.status).toBe(200);
      expect((await orderRow(order.id)).status).toBe('paid');
      expect(await registrations(event.id)).toHaveLength(1);
    });

    it('checks the signature over the raw bytes: the same JSON with other whitespace is paid as signed', async () => {
      const { order } = await pendingOrder();
      const pretty = JSON.stringify(stripeEvent(order.id), null, 2);
      expect((await deliver(pretty)).status).toBe(200);
      expect((await orderRow(order.id)).status).toBe('paid');
    });

    it('changes nothing when the same event is delivered again, and answers 200', async () => {
      const { s, event, order } = await pendingOrder();
      const evt = stripeEvent(order.id);
      expect((await deliver(evt)).status).toBe(200);
      const before = await orderRow(order.id);
      clock.advance(60_000);
      try {
        const again = await deliver(evt);
        expect(again.status).toBe(200);
        expect(again.body).toEqual({ received: true });
      } finally {
        clock.advance(-60_000);
      }
      expect(await orderRow(order.id)).toEqual(before);
      expect(await registrations(event.id)).toHaveLength(1);
      expect(await paidEvents(s.tribe.id, order.id)).toHaveLength(1);
      expect(await providerEvents(order.id)).toBe(1);
    });

    it('processes one of two simultaneous deliveries of the same event', async () => {
      const { s, event, order } = await pendingOrder();
      const evt = stripeEvent(order.id);
      const results = await Promise.all([deliver(evt), deliver(evt), deliver(evt)]);
      expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(await registrations(event.id)).toHaveLength(1);
      expect(await paidEvents(s.tribe.id, order.id)).toHaveLength(1);
    });

    it('recognises a replayed event id even when it names another order, and leaves that order pending', async () => {
      const first = await pendingOrder();
      const second = await pendingOrder();
      const evt = stripeEvent(first.order.id);
      expect((await deliver(evt)).status).toBe(200);
      const replay = { ...evt, data: { object: { ...evt.data.object, metadata: { order_id: second.order.id } } } };
      expect((await deliver(replay)).status).toBe(200);
      await expectUntouched(second.s, second.event.id, second.order.id);
    });

    it('a second, different event for an order already paid changes nothing', async () => {
      const { s, event, order } = await pendingOrder();
      expect((await deliver(stripeEvent(order.id))).status).toBe(200);
      const before = await orderRow(order.id);
      expect((await deliver(stripeEvent(order.id, { type: 'payment_intent.succeeded' }))).status).toBe(200);
      expect(await orderRow(order.id)).toEqual(before);
      expect(await registrations(event.id)).toHaveLength(1);
      expect(await paidEvents(s.tribe.id, order.id)).toHaveLength(1);
    });

    // The exact 300-second edges are unit-tested below (a request here takes a few milliseconds of the window).
    it.each([
      ['295 seconds old', -295],
      ['295 seconds ahead', 295],
    ])('accepts a signature made %s', async (_label, offset) => {
      const { order } = await pendingOrder();
      clock.hold(); // the edge stays where it is however long the request takes
      try {
        expect((await deliver(stripeEvent(order.id), { t: nowSeconds() + offset })).status).toBe(200);
      } finally {
        clock.release();
      }
      expect((await orderRow(order.id)).status).toBe('paid');
    });

    it.each<[string, (raw: string) => { t?: number; secret?: string; header?: string | null; body?: string }]>([
      ['a stale timestamp (302 s old)', () => ({ t: nowSeconds() - 302 })],
      ['a future timestamp (302 s ahead)', () => ({ t: nowSeconds() + 302 })],
      ['a timestamp in milliseconds', () => ({ t: clock.now().getTime() })],
      ['a tampered body', (raw) => ({ body: raw.replace('"paid"', '"paid" ') })],
      ['another secret', () => ({ secret: 'whsec_someone_else_0123456789abcdef' })],
      ['no Stripe-Signature header', () => ({ header: null })],
      ['an empty header', () => ({ header: '' })],
      ['a header without t', (raw) => ({ header: signature(raw, nowSeconds()).replace(/^t=\d+,/, '') })],
      ['a header without v1', () => ({ header: `t=${nowSeconds()}` })],
      ['a v0 signature only', (raw) => ({ header: signature(raw, nowSeconds()).replace('v1=', 'v0=') })],
      ['a non-numeric t', (raw) => ({ header: signature(raw, nowSeconds()).replace(/^t=\d+/, 't=soon') })],
      ['a truncated v1', (raw) => ({ header: signature(raw, nowSeconds()).slice(0, -2) })],
    ])('answers 400 invalid_signature for %s and changes nothing', async (_label, make) => {
      const { s, event, order } = await pendingOrder();
      const raw = JSON.stringify(stripeEvent(order.id));
      clock.hold();
      let res;
      try {
        res = await deliver(raw, make(raw));
      } finally {
        clock.release();
      }
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_signature', message: expect.any(String), requestId: expect.any(String) });
      await expectUntouched(s, event.id, order.id);
    });

    it('accepts a header with several v1 signatures when one matches (secret rotation)', async () => {
      const { order } = await pendingOrder();
      const raw = JSON.stringify(stripeEvent(order.id));
      const t0 = nowSeconds();
      const good = signature(raw, t0).split(',')[1];
      const res = await deliver(raw, { header: `t=${t0},v1=${'0'.repeat(64)},${good}` });
      expect(res.status).toBe(200);
      expect((await orderRow(order.id)).status).toBe('paid');
    });

    it('answers 400 unknown_order for an order id that names no order and records nothing', async () => {
      const evt = stripeEvent(UNKNOWN_ID);
      const res = await deliver(evt);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'unknown_order', message: expect.any(String), requestId: expect.any(String) });
      expect(await countOf(t, sql`select count(*)::int as n from payment_provider_events where event_id = ${evt.id}`)).toBe(0);
      expect((await deliver(stripeEvent('not-a-uuid'))).body).toEqual({ error: 'unknown_order', message: expect.any(String), requestId: expect.any(String) });
      expect((await deliver(stripeEvent(42))).body).toEqual({ error: 'unknown_order', message: expect.any(String), requestId: expect.any(String) });
    });

    it('answers 400 missing_order_id when the metadata has no order id', async () => {
      const { s, event, order } = await pendingOrder();
      const res = await deliver(stripeEvent(order.id, { object: { metadata: {} } }));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'missing_order_id', message: expect.any(String), requestId: expect.any(String) });
      expect((await deliver(stripeEvent(order.id, { object: { metadata: null } }))).body).toEqual({ error: 'missing_order_id', message: expect.any(String), requestId: expect.any(String) });
      await expectUntouched(s, event.id, order.id);
    });

    it.each([
      ['a body that is not JSON', 'order paid, trust me'],
      ['an empty body', ''],
      ['a JSON array', '[1,2]'],
      ['an event without data.object', JSON.stringify({ id: 'evt_1', type: 'checkout.session.completed', data: {} })],
      ['an event without an id', JSON.stringify({ type: 'checkout.session.completed', data: { object: {} } })],
    ])('answers 400 invalid_payload for %s (signed) and records nothing', async (_label, raw) => {
      const before = await countOf(t, sql`select count(*)::int as n from payment_provider_events`);
      const res = await deliver(raw);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_payload', message: expect.any(String), requestId: expect.any(String) });
      expect(await countOf(t, sql`select count(*)::int as n from payment_provider_events`)).toBe(before);
    });

    it.each([
      ['a different amount', { amount_total: 100, currency: 'brl' }],
      ['a different currency', { amount_total: 4990, currency: 'usd' }],
      ['no amount', { amount_total: undefined, currency: 'brl' }],
      ['no currency', { amount_total: 4990, currency: undefined }],
      ['a fractional amount', { amount_total: 4990.5, currency: 'brl' }],
    ])('answers 400 amount_mismatch for %s and changes nothing', async (_label, object) => {
      const { s, event, order } = await pendingOrder();
      const res = await deliver(stripeEvent(order.id, { object }));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'amount_mismatch', message: expect.any(String), requestId: expect.any(String) });
      await expectUntouched(s, event.id, order.id);
    });

    it('acknowledges other event types with 200 {received: true} and ignores them', async () => {
      const { s, event, order } = await pendingOrder();
      const res = await deliver(stripeEvent(order.id, { type: 'charge.dispute.created' }));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ received: true });
      await expectUntouched(s, event.id, order.id);
    });

    it('waits for async_payment_succeeded when a checkout session completes unpaid (boleto)', async () => {
      const { event, order } = await pendingOrder();
      const completed = await deliver(stripeEvent(order.id, { object: { payment_status: 'unpaid' } }));
      expect(completed.status).toBe(200);
      expect((await orderRow(order.id)).status).toBe('pending');
      const paid = await deliver(stripeEvent(order.id, { type: 'checkout.session.async_payment_succeeded' }));
      expect(paid.status).toBe(200);
      expect((await orderRow(order.id)).status).toBe('paid');
      expect(await registrations(event.id)).toHaveLength(1);
    });

    it('answers 409 order_not_payable for a refunded order and changes nothing', async () => {
      const { s, event, order } = await pendingOrder();
      await sqlRows(t, sql`update orders set status = 'refunded' where id = ${order.id}`);
      const res = await deliver(stripeEvent(order.id));
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ error: 'order_not_payable', message: expect.any(String), requestId: expect.any(String) });
      expect(await registrations(event.id)).toEqual([]);
      expect(await paidEvents(s.tribe.id, order.id)).toEqual([]);
      expect(await providerEvents(order.id)).toBe(0);
    });

    it('answers 413 for a body over the size limit', async () => {
      const res = await deliver(JSON.stringify({ pad: 'x'.repeat(200 * 1024) }));
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ error: 'payload_too_large', message: expect.any(String), requestId: expect.any(String) });
    });

    it('answers 503 payments_not_configured when STRIPE_WEBHOOK_SECRET is unset, and changes nothing', async () => {
      const { s, event, order } = await pendingOrder();
      const deps = { ...t.deps, config: { ...t.deps.config, payments: {} } };
      const bare = express().use(paymentsRouter(deps));
      const raw = JSON.stringify(stripeEvent(order.id));
      const res = await request(bare).post(STRIPE).set('content-type', 'application/json').set('stripe-signature', signature(raw, nowSeconds())).send(raw);
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ error: 'payments_not_configured', message: expect.any(String) }); // the router alone: no request id middleware before it
      await expectUntouched(s, event.id, order.id);
    });
  });

  describe('seat taken while paying', () => {
    it('keeps the late payment as paid and marks the registration refund_required: no seat, no check-in', async () => {
      const s = await staffedTribe(t, cast);
      const event = await paidEvent(s.tribe.id, s.owner, { max_attendees: 1 });
      const first = (await register(s.tribe.id, event.id, s.member)).body.data.order;
      const second = (await register(s.tribe.id, event.id, s.member2)).body.data.order;
      expect((await deliver(stripeEvent(first.id))).status).toBe(200);
      expect((await deliver(stripeEvent(second.id))).status).toBe(200);
      expect((await orderRow(second.id)).status).toBe('paid');
      expect(await registrations(event.id)).toEqual([
        expect.objectContaining({ user_id: s.member.id, status: 'confirmed', order_id: first.id }),
        expect.objectContaining({ user_id: s.member2.id, status: 'refund_required', order_id: second.id }),
      ]);
      const late = await register(s.tribe.id, event.id, s.member2);
      expect(late.status).toBe(200);
      expect(late.body.data).toMatchObject({ status: 'refund_required' });
      const view = await t.api.get(`${base(s.tribe.id)}/${event.id}`).set(bearer(s.owner));
      expect(view.body.data).toMatchObject({ registered_count: 1, spots_left: 0 });
      const door = await t.api.post(`${base(s.tribe.id)}/${event.id}/checkin`).set(bearer(s.owner)).send({ ticket_code: late.body.data.ticket_code });
      expectError(door, 400, 'ticket_not_valid');
    });
  });

  describe('POST /communities/:handle/orders/:orderId/mark-paid', () => {
    const markPaidRest = (handle: string, orderId: string, cookie?: string) => {
      const req = t.api.post(`/communities/${handle}/orders/${orderId}/mark-paid`);
      return cookie ? req.set('cookie', cookie) : req;
    };

    it.each(['owner'] as const)('lets the %s mark an order paid: order, registration and order.paid', async (role) => {
      const { s, event, order } = await pendingOrder();
      const res = await markPaidRest(s.tribe.handle, order.id, s[role].cookie);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        ok: true,
        order: {
          id: order.id,
          productType: 'event',
          productId: event.id,
          amountCents: 4990,
          currency: 'BRL',
          status: 'paid',
          paidAt: expect.stringMatching(ISO),
          createdAt: expect.stringMatching(ISO),
        },
      });
      expect(await registrations(event.id)).toEqual([expect.objectContaining({ user_id: s.member.id, status: 'confirmed', order_id: order.id })]);
      expect(await paidEvents(s.tribe.id, order.id)).toHaveLength(1);
      // Twice: the same paid order, nothing new.
      const again = await markPaidRest(s.tribe.handle, order.id, s.owner.cookie);
      expect(again.status).toBe(200);
      expect(again.body.order.paidAt).toBe(res.body.order.paidAt);
      expect(await paidEvents(s.tribe.id, order.id)).toHaveLength(1);
    });

    it.each(['admin', 'moderator', 'member'] as const)('refuses the %s with 403 forbidden and changes nothing', async (role) => {
      const { s, event, order } = await pendingOrder();
      const res = await markPaidRest(s.tribe.handle, order.id, s[role].cookie);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'forbidden', message: expect.any(String), requestId: expect.any(String) });
      await expectUntouched(s, event.id, order.id);
    });

    it('answers 401 without a session', async () => {
      const { s, event, order } = await pendingOrder();
      const res = await markPaidRest(s.tribe.handle, order.id);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized', message: expect.any(String), requestId: expect.any(String) });
      await expectUntouched(s, event.id, order.id);
    });

    it("answers 404 for tribe B's order under tribe A's handle, and B's order stays pending", async () => {
      const a = await staffedTribe(t, cast);
      const b = await staffedTribe(t, otherCast);
      const event = await paidEvent(b.tribe.id, b.owner);
      const order = (await register(b.tribe.id, event.id, b.member)).body.data.order;
      const res = await markPaidRest(a.tribe.handle, order.id, a.owner.cookie);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not_found', message: expect.any(String), requestId: expect.any(String) });
      await expectUntouched(b, event.id, order.id);
    });

    it('answers 404 for an unknown order, an order id that is not a UUID and an unknown tribe', async () => {
      const s = await staffedTribe(t, cast);
      expect((await markPaidRest(s.tribe.handle, randomUUID(), s.owner.cookie)).body).toEqual({ error: 'not_found', message: expect.any(String), requestId: expect.any(String) });
      expect((await markPaidRest(s.tribe.handle, 'nope', s.owner.cookie)).status).toBe(404);
      expect((await markPaidRest(`no-such-${unique()}`, randomUUID(), s.owner.cookie)).status).toBe(404);
    });

    it('answers 409 order_not_payable for a refunded order', async () => {
      const { s, order } = await pendingOrder();
      await sqlRows(t, sql`update orders set status = 'refunded' where id = ${order.id}`);
      const res = await markPaidRest(s.tribe.handle, order.id, s.owner.cookie);
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ error: 'order_not_payable', message: expect.any(String), requestId: expect.any(String) });
    });

    it('agrees with the GraphQL markOrderPaid of the manual provider', async () => {
      const { s, event, order } = await pendingOrder();
      const out = await markPaid(t, s.owner, order.id);
      expect(out.data.markOrderPaid).toMatchObject({ id: order.id, status: 'paid' });
      expect(await registrations(event.id)).toHaveLength(1);
    });
  });

  describe('Platform API shows the rows of these flows', () => {
    it('lists the created event in /v1/events and the paid order in /v1/orders', async () => {
      const { s, event, order } = await pendingOrder({ location: 'Online room', max_attendees: 10 });
      expect((await deliver(stripeEvent(order.id))).status).toBe(200);
      const key = await createKey(t, s.owner, s.tribe.handle, ['events:read', 'orders:read']);
      const events = await platformGet(t, '/v1/events', key.key);
      expect(events.status).toBe(200);
      expect(events.body).toEqual({
        object: 'list',
        data: [
          {
            object: 'event',
            id: event.id,
            title: event.title,
            description: '',
            eventType: 'online',
            location: 'Online room',
            startsAt: event.starts_at,
            endsAt: event.ends_at,
            maxAttendees: 10,
            priceCents: 4990,
            currency: 'BRL',
            createdAt: event.created_at,
            updatedAt: event.updated_at,
          },
        ],
        page: 1,
        pageSize: 25,
        hasMore: false,
      });
      const orders = await platformGet(t, '/v1/orders', key.key);
      expect(orders.status).toBe(200);
      expect(orders.body).toEqual({
        object: 'list',
        data: [
          {
            object: 'order',
            id: order.id,
            buyer: { userId: s.member.id, username: s.member.username, displayName: expect.any(String) },
            productType: 'event',
            productId: event.id,
            amountCents: 4990,
            currency: 'BRL',
            status: 'paid',
            paidAt: expect.stringMatching(ISO),
            createdAt: expect.stringMatching(ISO),
            updatedAt: expect.stringMatching(ISO),
          },
        ],
        page: 1,
        pageSize: 25,
        hasMore: false,
      });
      // Another tribe's key sees none of it.
      const other = await staffedTribe(t, otherCast);
      const otherKey = await createKey(t, other.owner, other.tribe.handle, ['events:read', 'orders:read']);
      expect((await platformGet(t, '/v1/events', otherKey.key)).body.data).toEqual([]);
      expect((await platformGet(t, '/v1/orders', otherKey.key)).body.data).toEqual([]);
    });
  });
});
