// payment.completed (spec 6.1, issue 31): a subscribable webhook event, written with order.paid when a payment
// completes, carrying the order, amount, currency, buyer and product plus the payment; the resource API's webhook
// example (which names it) registers as written.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import { actor, join, markPaid, unique, type Actor } from './factory.js';
import { bearer, eventsOf, isolatedDatabase, plantedResolver, Receiver, startWebhookService, type TestService } from './support.js';
import { WEBHOOK_EXAMPLE } from '../rest-facade/src/resource/openapi.js';
import { drain, fanOut } from '../subgraphs/webhooks/index.js';

const SECRET = 'whsec_test_0123456789abcdefghijklmnopqrstuv';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('payment.completed webhook event', () => {
  let t: TestService;
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  let receiver: Receiver;
  let owner: Actor;
  let buyer: Actor;

  beforeAll(async () => {
    db = await isolatedDatabase();
    t = await startWebhookService({
      databaseUrl: db.url,
      resolve: plantedResolver({ 'example.com': ['93.184.216.34'] }),
      env: { STRIPE_WEBHOOK_SECRET: SECRET, WEBHOOK_TIMEOUT_MS: '2000' },
    });
    receiver = await new Receiver().start();
    [owner, buyer] = await Promise.all([actor(t), actor(t)]);
  }, 120_000);
  afterAll(async () => {
    await receiver?.stop();
    await t?.stop();
    await db?.drop();
  });

  /** A tribe of `owner` (resource API) that `buyer` joined, with a paid event and the buyer's pending order for it. */
  async function pendingOrder() {
    const created = await t.api.post('/v1/communities').set(bearer(owner)).send({ name: 'Paid things', handle: `pay-${unique()}` });
    expect(created.status).toBe(201);
    const tribe = created.body.data as { id: string; handle: string };
    await join(t, buyer, tribe.handle);
    const starts = new Date(Date.now() + 86_400_000);
    const event = await t.api.post(`/v1/communities/${tribe.id}/events`).set(bearer(owner)).send({
      title: 'Workshop', event_type: 'online', starts_at: starts.toISOString(), ends_at: new Date(starts.getTime() + 3_600_000).toISOString(), price: 49.9,
    });
    expect(event.status).toBe(201);
    const registered = await t.api.post(`/v1/communities/${tribe.id}/events/${event.body.data.id}/register`).set(bearer(buyer));
    expect(registered.status).toBe(202);
    return { tribe, eventId: event.body.data.id as string, orderId: registered.body.data.order.id as string };
  }

  it('registers the resource API example as written: payment.completed is subscribable there and on the control plane', async () => {
    const created = await t.api.post('/v1/communities').set(bearer(owner)).send({ name: 'Example', handle: `ex-${unique()}` });
    const res = await t.api.post(`/v1/communities/${created.body.data.id}/webhooks`).set(bearer(owner)).send(WEBHOOK_EXAMPLE);
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ url: WEBHOOK_EXAMPLE.url, events: WEBHOOK_EXAMPLE.events, description: WEBHOOK_EXAMPLE.description, is_active: true });
    const listed = await t.api.get(`/communities/${created.body.data.handle}/webhooks`).set('cookie', owner.cookie);
    expect(listed.body.availableEvents).toContain('payment.completed');
    const only = await t.api.post(`/communities/${created.body.data.handle}/webhooks`).set('cookie', owner.cookie).send({ url: 'https://example.com/pay', events: ['payment.completed'] });
    expect(only.status).toBe(201);
    expect(only.body.events).toEqual(['payment.completed']);
  });

  it('delivers payment.completed with the order, amount, currency, buyer, product and payment when Stripe confirms the payment, once', async () => {
    const { tribe, eventId, orderId } = await pendingOrder();
    const endpoint = await t.api.post(`/v1/communities/${tribe.id}/webhooks`).set(bearer(owner)).send({ url: receiver.url('/pay'), events: ['payment.completed'] });
    expect(endpoint.status).toBe(201);
    receiver.secret = endpoint.body.data.secret;

    const stripe = JSON.stringify({
      id: `evt_${unique()}`, object: 'event', type: 'checkout.session.completed',
      data: { object: { id: `cs_${unique()}`, object: 'checkout.session', payment_status: 'paid', payment_intent: 'pi_test_123', amount_total: 4990, currency: 'brl', metadata: { order_id: orderId } } },
    });
    const sign = (raw: string) => {
      const ts = Math.floor(Date.now() / 1000);
      return `t=${ts},v1=${createHmac('sha256', SECRET).update(`${ts}.${raw}`).digest('hex')}`;
    };
    const paid = await t.api.post('/webhooks/payments/stripe').set('content-type', 'application/json').set('stripe-signature', sign(stripe)).send(stripe);
    expect(paid.status).toBe(200);

    expect(await fanOut(t.deps)).toBeGreaterThanOrEqual(1);
    expect(await drain(t.deps)).toMatchObject({ attempted: 1, succeeded: 1 });
    expect(receiver.rejected).toEqual([]);
    const delivered = receiver.received.filter((r) => r.event?.data && (r.event.data as { orderId?: string }).orderId === orderId);
    expect(delivered).toHaveLength(1);
    expect(delivered[0].headers['x-svc-event']).toBe('payment.completed');
    expect(delivered[0].event).toMatchObject({ type: 'payment.completed' });
    expect(delivered[0].event!.data).toEqual({
      orderId,
      userId: buyer.id,
      amount: 4990,
      currency: 'BRL',
      productType: 'event',
      productId: eventId,
      handle: tribe.handle,
      provider: 'stripe',
      paymentId: 'pi_test_123',
      paidAt: expect.stringMatching(ISO),
    });

    // The same payment told again: nothing more is written or sent.
    const again = await t.api.post('/webhooks/payments/stripe').set('content-type', 'application/json').set('stripe-signature', sign(stripe)).send(stripe);
    expect(again.status).toBe(200);
    expect((await eventsOf(t, tribe.id, 'payment.completed')).filter((e) => e.data.orderId === orderId)).toHaveLength(1);
  });

  it('is written with order.paid by the manual provider too (provider manual, paymentId null), and not again on a second mark', async () => {
    const { tribe, orderId } = await pendingOrder();
    const out = await markPaid(t, owner, orderId);
    expect(out.errors).toBeUndefined();
    expect((await markPaid(t, owner, orderId)).errors).toBeUndefined();
    const completed = (await eventsOf(t, tribe.id, 'payment.completed')).map((e) => e.data);
    const orderPaid = (await eventsOf(t, tribe.id, 'order.paid')).map((e) => e.data);
    expect(completed).toEqual([{ ...orderPaid[0], provider: 'manual', paymentId: null, paidAt: out.data.markOrderPaid.paidAt }]);
    expect(orderPaid).toHaveLength(1);
  });
});
