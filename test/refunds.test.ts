import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { createHmac } from 'node:crypto';
import type { OrderRefundedData } from '../verifier/src/index.js';
import { consumeNotifications } from '../subgraphs/engagement/index.js';
import { drain } from '../subgraphs/webhooks/index.js';
import { createKey, crew, markPaid, registerEndpoint, staffedTribe, unique, UNKNOWN_ID, type Actor, type Cast } from './factory.js';
import { bearer, countOf, eventsOf, gql, isolatedDatabase, movableClock, platformGet, Receiver, sqlRows, startWebhookService, type TestService } from './support.js';

const SECRET = 'whsec_test_0123456789abcdefghijklmnopqrstuv';
const HOUR = 3_600_000;
const STRIPE = '/webhooks/payments/stripe';
const PRICE = 4990; // BRL 49.90 in cents, Stripe's smallest unit of BRL too

const Q = {
  refund: `mutation($o: ID!, $a: Int, $r: String){ refundOrder(orderId: $o, amount: $a, reason: $r){
    id status amountCents refundedCents refundableCents refundRequestedAt refunds { provider refundId amountCents status reason } } }`,
  requests: `query($c: ID!, $f: Int, $a: String){ refundRequests(communityId: $c, first: $f, after: $a){
    edges { cursor node { id status refundRequestedAt refundRequestReason } } pageInfo { hasNextPage endCursor } } }`,
  notifications: 'query { notifications(first: 50){ edges { node { kind text eventId community { id } } } } }',
};

/** Refunds: Stripe-format refund events, refundOrder on the manual provider, refund_required, order.refunded. */
describe('refunds', () => {
  let t: TestService;
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  let cast: Cast;
  let otherCast: Cast;
  const clock = movableClock();
  const nowSeconds = () => Math.floor(clock.now().getTime() / 1000);
  const receivers: Receiver[] = [];
  /** One staffed tribe most tests share (each test buys its own new event or course in it). */
  let shared: Awaited<ReturnType<typeof staffedTribe>>;

  beforeAll(async () => {
    db = await isolatedDatabase();
    t = await startWebhookService({ clock: clock.now, databaseUrl: db.url, env: { STRIPE_WEBHOOK_SECRET: SECRET } });
    [cast, otherCast] = await Promise.all([crew(t), crew(t)]);
    shared = await staffedTribe(t, cast);
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.stop()));
    await t?.stop();
    await db?.drop();
  });

  // ---- helpers ----

  const at = (hours: number) => new Date(clock.now().getTime() + hours * HOUR).toISOString();
  const events = (tribeId: string) => `/v1/communities/${tribeId}/events`;
  async function paidEvent(tribeId: string, who: Actor, body: Record<string, unknown> = {}) {
    const res = await t.api
      .post(events(tribeId))
      .set(bearer(who))
      .send({ title: `Paid ${unique()}`, event_type: 'online', starts_at: at(24), ends_at: at(26), price: 49.9, ...body });
    if (res.status !== 201) throw new Error(`createEvent: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data as Record<string, any>;
  }
  const register = (tribeId: string, eventId: string, who: Actor) => t.api.post(`${events(tribeId)}/${eventId}/register`).set(bearer(who));
  async function pendingEventOrder(body: Record<string, unknown> = {}, options: { ownTribe?: boolean } = {}) {
    const s = options.ownTribe ? await staffedTribe(t, cast) : shared;
    const event = await paidEvent(s.tribe.id, s.owner, body);
    const res = await register(s.tribe.id, event.id, s.member);
    if (res.status !== 202) throw new Error(`register: ${res.status} ${JSON.stringify(res.body)}`);
    return { s, event, orderId: res.body.data.order.id as string };
  }

  const signature = (payload: string, ts: number) => `t=${ts},v1=${createHmac('sha256', SECRET).update(`${ts}.${payload}`).digest('hex')}`;
  /** POSTs a signed Stripe-format event. */
  function deliver(event: unknown, options: { header?: string } = {}) {
    const raw = JSON.stringify(event);
    return t.api
      .post(STRIPE)
      .set('content-type', 'application/json')
      .set('stripe-signature', options.header ?? signature(raw, nowSeconds()))
      .send(raw);
  }
  const stripeEvent = (type: string, object: Record<string, unknown>, id = `evt_${unique()}${unique()}`) => ({
    id,
    object: 'event',
    type,
    created: nowSeconds(),
    livemode: false,
    data: { object },
  });
  /** Pays `orderId` through Stripe (payment_intent.succeeded); returns the payment intent and charge ids it named. */
  async function payByStripe(orderId: string) {
    const pi = `pi_${unique()}`;
    const ch = `ch_${unique()}`;
    const res = await deliver(
      stripeEvent('payment_intent.succeeded', { id: pi, object: 'payment_intent', amount_received: PRICE, currency: 'brl', latest_charge: ch, metadata: { order_id: orderId } }),
    );
    if (res.status !== 200) throw new Error(`pay: ${res.status} ${JSON.stringify(res.body)}`);
    return { pi, ch };
  }
  /** A Stripe refund object (as refund.created / refund.updated carry it): no order id, only the payment. */
  const refundObject = (pay: { pi: string; ch: string }, id: string, amount: number, status = 'succeeded', extra: Record<string, unknown> = {}) => ({
    id,
    object: 'refund',
    amount,
    currency: 'brl',
    status,
    payment_intent: pay.pi,
    charge: pay.ch,
    metadata: {},
    ...extra,
  });
  /** A Stripe charge after refunds (charge.refunded): its total refunded and, optionally, the refunds it lists. */
  const chargeObject = (pay: { pi: string; ch: string }, amountRefunded: number, refunds: Array<Record<string, unknown>> | null, extra: Record<string, unknown> = {}) => ({
    id: pay.ch,
    object: 'charge',
    amount: PRICE,
    amount_refunded: amountRefunded,
    currency: 'brl',
    payment_intent: pay.pi,
    refunded: amountRefunded === PRICE,
    metadata: {},
    ...(refunds ? { refunds: { object: 'list', data: refunds } } : {}),
    ...extra,
  });

  const orderRow = async (id: string) =>
    (
      await sqlRows(
        t,
        sql`select status, refunded_cents, payment_provider, refund_requested_at is not null as refund_requested from orders where id = ${id}`,
      )
    )[0];
  const refundRows = (orderId: string) =>
    sqlRows(t, sql`select provider, refund_id, amount_cents, status from order_refunds where order_id = ${orderId} order by created_at, refund_id`);
  const registrations = (eventId: string) => sqlRows(t, sql`select user_id, status, order_id from event_registrations where event_id = ${eventId} order by created_at`);
  const refundedEvents = async (tribeId: string, orderId: string) =>
    (await eventsOf(t, tribeId, 'order.refunded')).filter((e) => e.data.orderId === orderId).map((e) => e.data);
  const providerEvents = (orderId: string) => countOf(t, sql`select count(*)::int as n from payment_provider_events where order_id = ${orderId}`);
  const spotsLeft = async (tribeId: string, eventId: string, who: Actor) =>
    (await t.api.get(`${events(tribeId)}/${eventId}`).set(bearer(who))).body.data.spots_left as number | null;
  const reason = (out: { errors?: Array<{ extensions?: Record<string, any> }> }) => out.errors?.[0]?.extensions;

  // ---- Stripe-format refund events ----

  describe('POST /webhooks/payments/stripe refund events', () => {
    it('refund.created partially refunds the order (matched by its payment intent), then a second refund completes it: the registration is cancelled and its seat freed', async () => {
      const { s, event, orderId } = await pendingEventOrder({ max_attendees: 1 });
      const pay = await payByStripe(orderId);
      expect(await orderRow(orderId)).toEqual({ status: 'paid', refunded_cents: 0, payment_provider: 'stripe', refund_requested: false });
      expect(await spotsLeft(s.tribe.id, event.id, s.owner)).toBe(0);

      const first = await deliver(stripeEvent('refund.created', refundObject(pay, 're_part1', 1000)));
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ received: true });
      expect(await orderRow(orderId)).toMatchObject({ status: 'partially_refunded', refunded_cents: 1000 });
      expect(await registrations(event.id)).toEqual([{ user_id: s.member.id, status: 'confirmed', order_id: orderId }]);

      const second = await deliver(stripeEvent('refund.created', refundObject(pay, 're_part2', PRICE - 1000)));
      expect(second.status).toBe(200);
      expect(await orderRow(orderId)).toMatchObject({ status: 'refunded', refunded_cents: PRICE });
      expect(await registrations(event.id)).toEqual([]);
      expect(await spotsLeft(s.tribe.id, event.id, s.owner)).toBe(1);
      // The seat is free again: another member takes it.
      expect((await register(s.tribe.id, event.id, s.member2)).status).toBe(202);

      expect(await refundRows(orderId)).toEqual([
        { provider: 'stripe', refund_id: 're_part1', amount_cents: 1000, status: 'succeeded' },
        { provider: 'stripe', refund_id: 're_part2', amount_cents: PRICE - 1000, status: 'succeeded' },
      ]);
      const base = { orderId, userId: s.member.id, amount: PRICE, currency: 'BRL', productType: 'event', productId: event.id, handle: s.tribe.handle };
      expect(await refundedEvents(s.tribe.id, orderId)).toEqual([
        { ...base, amountRefunded: 1000, totalRefunded: 1000, status: 'partially_refunded' },
        { ...base, amountRefunded: PRICE - 1000, totalRefunded: PRICE, status: 'refunded' },
      ]);
    });

    it('counts a refund once whatever the order of its events: refund.updated before refund.created, the same event twice, a charge.refunded summarising it', async () => {
      const { s, event, orderId } = await pendingEventOrder();
      const pay = await payByStripe(orderId);
      const updated = stripeEvent('refund.updated', refundObject(pay, 're_once', PRICE, 'succeeded'));
      expect((await deliver(updated)).status).toBe(200);
      expect(await orderRow(orderId)).toMatchObject({ status: 'refunded', refunded_cents: PRICE });
      // Late refund.created (still pending when Stripe sent it): the status does not go back.
      expect((await deliver(stripeEvent('refund.created', refundObject(pay, 're_once', PRICE, 'pending')))).status).toBe(200);
      // The same event delivered again.
      const again = await deliver(updated);
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ received: true });
      // The charge's summary of the refund already applied.
      expect((await deliver(stripeEvent('charge.refunded', chargeObject(pay, PRICE, [refundObject(pay, 're_once', PRICE)])))).status).toBe(200);

      expect(await orderRow(orderId)).toMatchObject({ status: 'refunded', refunded_cents: PRICE });
      expect(await refundRows(orderId)).toEqual([{ provider: 'stripe', refund_id: 're_once', amount_cents: PRICE, status: 'succeeded' }]);
      expect(await refundedEvents(s.tribe.id, orderId)).toHaveLength(1);
      expect(await registrations(event.id)).toEqual([]);
      // payment + 3 distinct refund events (the replay is not recorded twice)
      expect(await providerEvents(orderId)).toBe(4);
    });

    it('charge.refunded alone refunds its total (matched by metadata.order_id); refunds told later for the same money add nothing, a new one adds', async () => {
      const { s, orderId } = await pendingEventOrder();
      const pay = await payByStripe(orderId);
      expect((await deliver(stripeEvent('charge.refunded', chargeObject(pay, 1500, null, { metadata: { order_id: orderId } })))).status).toBe(200);
      expect(await orderRow(orderId)).toMatchObject({ status: 'partially_refunded', refunded_cents: 1500 });
      expect((await deliver(stripeEvent('refund.created', refundObject(pay, 're_summarised', 1500)))).status).toBe(200);
      expect(await orderRow(orderId)).toMatchObject({ status: 'partially_refunded', refunded_cents: 1500 });
      expect((await deliver(stripeEvent('refund.created', refundObject(pay, 're_rest', PRICE - 1500)))).status).toBe(200);
      expect(await orderRow(orderId)).toMatchObject({ status: 'refunded', refunded_cents: PRICE });
      expect((await refundedEvents(s.tribe.id, orderId)).map((d) => [d.amountRefunded, d.totalRefunded, d.status])).toEqual([
        [1500, 1500, 'partially_refunded'],
        [PRICE - 1500, PRICE, 'refunded'],
      ]);
    });

    it('answers 200 and changes nothing when a payment event arrives after the refund (the payment told again)', async () => {
      const { s, event, orderId } = await pendingEventOrder();
      const pay = await payByStripe(orderId);
      expect((await deliver(stripeEvent('refund.created', refundObject(pay, `re_${unique()}`, PRICE)))).status).toBe(200);
      const late = await deliver(
        stripeEvent('checkout.session.completed', { id: `cs_${unique()}`, object: 'checkout.session', payment_status: 'paid', amount_total: PRICE, currency: 'brl', payment_intent: pay.pi, metadata: { order_id: orderId } }),
      );
      expect(late.status).toBe(200);
      expect(await orderRow(orderId)).toMatchObject({ status: 'refunded', refunded_cents: PRICE });
      expect(await registrations(event.id)).toEqual([]);
      expect((await eventsOf(t, s.tribe.id, 'order.paid')).filter((e) => e.data.orderId === orderId)).toHaveLength(1);
    });

    it('never refunds more than the order amount', async () => {
      const { orderId } = await pendingEventOrder();
      const pay = await payByStripe(orderId);
      expect((await deliver(stripeEvent('refund.created', refundObject(pay, 're_big_1', 4000)))).status).toBe(200);
      expect((await deliver(stripeEvent('refund.created', refundObject(pay, 're_big_2', 4000)))).status).toBe(200);
      expect(await orderRow(orderId)).toMatchObject({ status: 'refunded', refunded_cents: PRICE });
      expect((await deliver(stripeEvent('charge.refunded', chargeObject(pay, 999_999, null)))).status).toBe(200);
      expect(await orderRow(orderId)).toMatchObject({ status: 'refunded', refunded_cents: PRICE });
    });

    it('does not count a pending refund until it succeeds, nor a failed one', async () => {
      const { orderId } = await pendingEventOrder();
      const pay = await payByStripe(orderId);
      expect((await deliver(stripeEvent('refund.created', refundObject(pay, 're_slow', 2000, 'pending')))).status).toBe(200);
      expect((await deliver(stripeEvent('refund.created', refundObject(pay, 're_bad', 1000, 'failed')))).status).toBe(200);
      expect(await orderRow(orderId)).toMatchObject({ status: 'paid', refunded_cents: 0 });
      expect((await deliver(stripeEvent('refund.updated', refundObject(pay, 're_slow', 2000, 'succeeded')))).status).toBe(200);
      expect(await orderRow(orderId)).toMatchObject({ status: 'partially_refunded', refunded_cents: 2000 });
    });

    it('answers 409 order_not_refundable for an order not paid yet and records nothing, so the retry after the payment refunds it (out of order)', async () => {
      const { s, orderId } = await pendingEventOrder();
      const early = stripeEvent('charge.refunded', chargeObject({ pi: 'pi_x', ch: `ch_${unique()}` }, PRICE, null, { metadata: { order_id: orderId } }));
      const res = await deliver(early);
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ error: 'order_not_refundable', message: expect.any(String), requestId: expect.any(String) });
      expect(await orderRow(orderId)).toMatchObject({ status: 'pending', refunded_cents: 0 });
      expect(await providerEvents(orderId)).toBe(0);
      await payByStripe(orderId);
      expect((await deliver(early)).status).toBe(200);
      expect(await orderRow(orderId)).toMatchObject({ status: 'refunded', refunded_cents: PRICE });
      expect(await refundedEvents(s.tribe.id, orderId)).toHaveLength(1);
    });

    it.each([
      ['no order id and no payment', (pay: { pi: string; ch: string }) => refundObject(pay, 're_x', 100, 'succeeded', { payment_intent: null, charge: null }), 400, 'missing_order_id'],
      ['a payment nobody recorded', () => refundObject({ pi: 'pi_unknown', ch: 'ch_unknown' }, 're_x', 100), 400, 'unknown_order'],
      ['an unknown metadata.order_id', (pay: { pi: string; ch: string }) => refundObject(pay, 're_x', 100, 'succeeded', { metadata: { order_id: UNKNOWN_ID } }), 400, 'unknown_order'],
      ['another currency', (pay: { pi: string; ch: string }) => refundObject(pay, 're_x', 100, 'succeeded', { currency: 'usd' }), 400, 'amount_mismatch'],
      ['a fractional amount', (pay: { pi: string; ch: string }) => refundObject(pay, 're_x', 10.5), 400, 'amount_mismatch'],
    ])('refuses a refund with %s and changes nothing', async (_what, object, status, code) => {
      const { s, orderId } = await pendingEventOrder();
      const pay = await payByStripe(orderId);
      const res = await deliver(stripeEvent('refund.created', object(pay)));
      expect(res.status).toBe(status);
      expect(res.body).toEqual({ error: code, message: expect.any(String), requestId: expect.any(String) });
      expect(await orderRow(orderId)).toMatchObject({ status: 'paid', refunded_cents: 0 });
      expect(await refundRows(orderId)).toEqual([]);
      expect(await refundedEvents(s.tribe.id, orderId)).toEqual([]);
      expect(await providerEvents(orderId)).toBe(1);
    });

    it('refuses a refund event with a bad signature (400 invalid_signature) and changes nothing', async () => {
      const { orderId } = await pendingEventOrder();
      const pay = await payByStripe(orderId);
      const res = await deliver(stripeEvent('refund.created', refundObject(pay, 're_forged', PRICE)), { header: `t=${nowSeconds()},v1=${'0'.repeat(64)}` });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_signature', message: expect.any(String), requestId: expect.any(String) });
      expect(await orderRow(orderId)).toMatchObject({ status: 'paid', refunded_cents: 0 });
    });
  });

  // ---- refundOrder (manual provider) ----

  describe('refundOrder', () => {
    /** A paid course and the member's order for it, paid through the manual provider. */
    async function paidCourseOrder() {
      const s = shared;
      const created = await t.api.post(`/v1/communities/${s.tribe.id}/courses`).set(bearer(s.moderator)).send({ title: `Paid ${unique()}`, access_type: 'paid', price: 49.9 });
      const courseId = created.body.data.id as string;
      const enrolled = await t.api.post(`/v1/communities/${s.tribe.id}/courses/${courseId}/enroll`).set(bearer(s.member));
      const orderId = enrolled.body.data.order.id as string;
      expect((await markPaid(t, s.owner, orderId)).errors).toBeUndefined();
      return { s, courseId, orderId };
    }
    const enrollments = (courseId: string) => countOf(t, sql`select count(*)::int as n from course_enrollments where course_id = ${courseId}`);

    it('lets the owner refund part, then the rest by default: the course enrollment is taken back, the Platform API shows each status, and the buyer may buy again', async () => {
      const { s, courseId, orderId } = await paidCourseOrder();
      expect(await enrollments(courseId)).toBe(1);
      const part = await gql(t, s.owner, Q.refund, { o: orderId, a: 990, r: 'goodwill' });
      expect(part.errors).toBeUndefined();
      expect(part.data.refundOrder).toMatchObject({ status: 'partially_refunded', amountCents: PRICE, refundedCents: 990, refundableCents: PRICE - 990 });
      expect(part.data.refundOrder.refunds).toEqual([{ provider: 'manual', refundId: expect.stringMatching(/^mre_/), amountCents: 990, status: 'succeeded', reason: 'goodwill' }]);
      expect(await enrollments(courseId)).toBe(1);
      // The Platform API shows the new status.
      const key = await createKey(t, s.owner, s.tribe.handle, ['orders:read']);
      const platformStatus = async () =>
        ((await platformGet(t, '/v1/orders?pageSize=100', key.key)).body.data as Array<{ id: string; status: string }>).find((o) => o.id === orderId)?.status;
      expect(await platformStatus()).toBe('partially_refunded');

      const rest = await gql(t, s.owner, Q.refund, { o: orderId });
      expect(rest.errors).toBeUndefined();
      expect(rest.data.refundOrder).toMatchObject({ status: 'refunded', refundedCents: PRICE, refundableCents: 0 });
      expect(rest.data.refundOrder.refunds.map((r: any) => r.amountCents)).toEqual([990, PRICE - 990]);
      expect(await enrollments(courseId)).toBe(0);
      expect(await platformStatus()).toBe('refunded');
      expect((await refundedEvents(s.tribe.id, orderId)).map((d) => d.status)).toEqual(['partially_refunded', 'refunded']);
      // Nothing left: refunding again is refused.
      expect(reason(await gql(t, s.owner, Q.refund, { o: orderId }))).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'order_not_refundable' });
      const again = await t.api.post(`/v1/communities/${s.tribe.id}/courses/${courseId}/enroll`).set(bearer(s.member));
      expect(again.status).toBe(202);
      expect(again.body.data.order.id).not.toBe(orderId);
    });

    it('takes back a challenge enrollment on a full refund', async () => {
      const s = shared;
      const created = await t.api
        .post(`/v1/communities/${s.tribe.id}/challenges`)
        .set(bearer(s.moderator))
        .send({ title: `Paid ${unique()}`, duration_days: 7, challenge_type: 'daily', access_type: 'paid', price: 49.9 });
      expect(created.status).toBe(201);
      const challengeId = created.body.data.id as string;
      const enrolled = await t.api.post(`/v1/communities/${s.tribe.id}/challenges/${challengeId}/enroll`).set(bearer(s.member));
      const orderId = enrolled.body.data.order.id as string;
      expect((await markPaid(t, s.owner, orderId)).errors).toBeUndefined();
      const count = () => countOf(t, sql`select count(*)::int as n from challenge_enrollments where challenge_id = ${challengeId}`);
      expect(await count()).toBe(1);
      expect((await gql(t, s.owner, Q.refund, { o: orderId })).data.refundOrder.status).toBe('refunded');
      expect(await count()).toBe(0);
    });

    it('is FORBIDDEN to admins and members, NOT_FOUND to the owner of another tribe or for an unknown order, and changes nothing', async () => {
      const { s, orderId } = await paidCourseOrder();
      for (const who of [s.admin, s.moderator, s.member]) {
        expect(reason(await gql(t, who, Q.refund, { o: orderId }))).toMatchObject({ code: 'FORBIDDEN' });
      }
      expect(reason(await gql(t, otherCast.owner, Q.refund, { o: orderId }))).toMatchObject({ code: 'NOT_FOUND' });
      expect(reason(await gql(t, s.owner, Q.refund, { o: UNKNOWN_ID }))).toMatchObject({ code: 'NOT_FOUND' });
      expect(reason(await gql(t, s.owner, Q.refund, { o: 'not-a-uuid' }))).toMatchObject({ code: 'NOT_FOUND' });
      expect(reason(await gql(t, null, Q.refund, { o: orderId }))).toMatchObject({ code: 'UNAUTHENTICATED' });
      expect(await orderRow(orderId)).toMatchObject({ status: 'paid', refunded_cents: 0 });
      expect(await refundRows(orderId)).toEqual([]);
    });

    it.each([
      ['0', { a: 0 }, 'invalid_amount'],
      ['a negative amount', { a: -5 }, 'invalid_amount'],
      ['more than the order', { a: PRICE + 1 }, 'amount_exceeds_refundable'],
      ['a reason over 500 characters', { a: 100, r: 'x'.repeat(501) }, 'invalid_reason'],
    ])('refuses %s with BAD_USER_INPUT and writes nothing', async (_what, vars, code) => {
      const { s, orderId } = await paidCourseOrder();
      expect(reason(await gql(t, s.owner, Q.refund, { o: orderId, ...vars }))).toMatchObject({ code: 'BAD_USER_INPUT', reason: code });
      expect(await orderRow(orderId)).toMatchObject({ status: 'paid', refunded_cents: 0 });
      expect(await refundRows(orderId)).toEqual([]);
      expect(await refundedEvents(s.tribe.id, orderId)).toEqual([]);
    });

    it('refuses more than what is left after a partial refund, a pending order, and an order paid through Stripe', async () => {
      const { s, orderId } = await paidCourseOrder();
      expect((await gql(t, s.owner, Q.refund, { o: orderId, a: 4000 })).errors).toBeUndefined();
      expect(reason(await gql(t, s.owner, Q.refund, { o: orderId, a: 991 }))).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'amount_exceeds_refundable' });
      expect(await orderRow(orderId)).toMatchObject({ refunded_cents: 4000 });

      const pending = await pendingEventOrder();
      expect(reason(await gql(t, pending.s.owner, Q.refund, { o: pending.orderId }))).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'order_not_refundable' });

      const viaStripe = await pendingEventOrder();
      await payByStripe(viaStripe.orderId);
      expect(reason(await gql(t, viaStripe.s.owner, Q.refund, { o: viaStripe.orderId }))).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'refund_through_provider' });
      expect(await orderRow(viaStripe.orderId)).toMatchObject({ status: 'paid', refunded_cents: 0 });
    });

    it('lets exactly the order amount through when the owner sends many refunds at once', async () => {
      const { s, orderId } = await paidCourseOrder();
      const results = await Promise.all(Array.from({ length: 6 }, () => gql(t, s.owner, Q.refund, { o: orderId, a: 1000 })));
      expect(results.filter((r) => !r.errors)).toHaveLength(4);
      expect(await orderRow(orderId)).toMatchObject({ status: 'partially_refunded', refunded_cents: 4000 });
    });
  });

  // ---- refund_required ----

  describe('refund_required registrations', () => {
    /** An event of one seat: member takes it, member2 pays while it fills up. */
    async function lateBuyer(pay: (orderId: string, s: Awaited<ReturnType<typeof staffedTribe>>) => Promise<unknown>) {
      const s = await staffedTribe(t, cast);
      const event = await paidEvent(s.tribe.id, s.owner, { max_attendees: 1 });
      const first = (await register(s.tribe.id, event.id, s.member)).body.data.order.id as string;
      const late = (await register(s.tribe.id, event.id, s.member2)).body.data.order.id as string;
      await pay(first, s);
      await pay(late, s);
      return { s, event, first, late };
    }
    const manualPay = async (orderId: string, s: Awaited<ReturnType<typeof staffedTribe>>) => expect((await markPaid(t, s.owner, orderId)).errors).toBeUndefined();

    it('marks the late order for the owner (refundRequests) and notifies the owner; refundOrder completes it and clears the mark (manual provider)', async () => {
      const { s, event, first, late } = await lateBuyer(manualPay);
      expect(await registrations(event.id)).toEqual([
        { user_id: s.member.id, status: 'confirmed', order_id: first },
        { user_id: s.member2.id, status: 'refund_required', order_id: late },
      ]);
      expect(await orderRow(late)).toEqual({ status: 'paid', refunded_cents: 0, payment_provider: 'manual', refund_requested: true });
      expect(await orderRow(first)).toMatchObject({ refund_requested: false });

      const listed = await gql(t, s.owner, Q.requests, { c: s.tribe.id });
      expect(listed.errors).toBeUndefined();
      expect(listed.data.refundRequests.edges.map((e: any) => e.node)).toEqual([
        { id: late, status: 'paid', refundRequestedAt: expect.any(String), refundRequestReason: expect.stringMatching(/^event_full/) },
      ]);
      expect(reason(await gql(t, s.admin, Q.requests, { c: s.tribe.id }))).toMatchObject({ code: 'FORBIDDEN' });
      expect(reason(await gql(t, otherCast.owner, Q.requests, { c: s.tribe.id }))).toMatchObject({ code: 'FORBIDDEN' });

      await consumeNotifications(t.deps);
      const kinds = async (who: Actor) =>
        (await gql(t, who, Q.notifications)).data.notifications.edges.map((e: any) => e.node).filter((n: any) => n.kind === 'refund_required');
      expect(await kinds(s.owner)).toEqual([
        { kind: 'refund_required', text: `A paid registration for "${event.title}" got no seat: refund the buyer`, eventId: event.id, community: { id: s.tribe.id } },
      ]);
      expect(await kinds(s.admin)).toEqual([]);
      expect(await kinds(s.member2)).toEqual([]);

      const refunded = await gql(t, s.owner, Q.refund, { o: late, r: 'event full' });
      expect(refunded.data.refundOrder).toMatchObject({ status: 'refunded', refundRequestedAt: null });
      expect(await registrations(event.id)).toEqual([{ user_id: s.member.id, status: 'confirmed', order_id: first }]);
      expect((await gql(t, s.owner, Q.requests, { c: s.tribe.id })).data.refundRequests.edges).toEqual([]);
      await consumeNotifications(t.deps);
      expect(await kinds(s.owner)).toHaveLength(1);
    });

    it('on Stripe marks it too, refuses refundOrder, and the inbound refund event completes it', async () => {
      const pays = new Map<string, { pi: string; ch: string }>();
      const { s, event, late } = await lateBuyer(async (orderId) => pays.set(orderId, await payByStripe(orderId)));
      expect(await orderRow(late)).toEqual({ status: 'paid', refunded_cents: 0, payment_provider: 'stripe', refund_requested: true });
      expect(reason(await gql(t, s.owner, Q.refund, { o: late }))).toMatchObject({ reason: 'refund_through_provider' });
      expect((await deliver(stripeEvent('refund.created', refundObject(pays.get(late)!, `re_${unique()}`, PRICE)))).status).toBe(200);
      expect(await orderRow(late)).toMatchObject({ status: 'refunded', refund_requested: false });
      expect((await registrations(event.id)).map((r) => r.status)).toEqual(['confirmed']);
    });
  });

  // ---- order.refunded to a webhook receiver ----

  describe('order.refunded webhook', () => {
    it('is delivered to a subscribed endpoint over HTTPS, verified by @svc/webhook-verifier, with the order.paid fields and the refund', async () => {
      const r = await new Receiver(clock.now).start();
      receivers.push(r);
      const { s, event, orderId } = await pendingEventOrder({}, { ownTribe: true });
      await registerEndpoint(t, s.owner, s.tribe.handle, { url: r.url(), events: ['order.refunded'] }, r);
      expect((await markPaid(t, s.owner, orderId)).errors).toBeUndefined();
      expect((await gql(t, s.owner, Q.refund, { o: orderId, a: 1990 })).errors).toBeUndefined();
      const result = await drain(t.deps);
      expect(result).toMatchObject({ attempted: 1, succeeded: 1 });
      expect(r.rejected).toEqual([]);
      expect(r.events).toHaveLength(1);
      const [delivered] = r.events;
      expect(delivered.type).toBe('order.refunded');
      const data = delivered.data as unknown as OrderRefundedData;
      expect(data).toEqual({
        orderId,
        userId: s.member.id,
        amount: PRICE,
        currency: 'BRL',
        productType: 'event',
        productId: event.id,
        handle: s.tribe.handle,
        amountRefunded: 1990,
        totalRefunded: 1990,
        status: 'partially_refunded',
      });
      expect(r.received[0].headers['x-svc-event']).toBe('order.refunded');
    });
  });
});
