import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import Stripe from 'stripe';
import { crew, staffedTribe, unique, type Actor, type Cast } from './factory.js';
import { bearer, countOf, failure, gql, movableClock, sqlRows, startService, type TestService } from './support.js';
import { expectError } from './expected.js';

const SECRET = 'whsec_test_currency_0123456789abcdefghij';
const HOUR = 3_600_000;
const stripe = new Stripe('sk_test_not_used_for_requests');

/**
 * Prices follow each currency's minor unit (ISO 4217: JPY none, USD 2, KWD 3, stored as the spec's integer cents): a
 * price with more decimals than its currency has is refused naming `price`, so no order is ever created that no
 * payment can match (the attack of issue 29: `JPY 100.5` stored as 10050 hundredths of a yen, pending forever).
 */
describe('prices in the currency minor unit', () => {
  let t: TestService;
  let cast: Cast;
  const clock = movableClock();

  beforeAll(async () => {
    t = await startService({ STRIPE_WEBHOOK_SECRET: SECRET }, clock.now);
    cast = await crew(t);
  });
  afterAll(async () => {
    await t.stop();
  });

  const at = (hours: number) => new Date(clock.now().getTime() + hours * HOUR).toISOString();
  const create = {
    course: (tribeId: string, who: Actor, price: unknown, currency: string) =>
      t.api.post(`/v1/communities/${tribeId}/courses`).set(bearer(who)).send({ title: `Course ${unique()}`, access_type: 'paid', price, currency }),
    event: (tribeId: string, who: Actor, price: unknown, currency: string) =>
      t.api
        .post(`/v1/communities/${tribeId}/events`)
        .set(bearer(who))
        .send({ title: `Event ${unique()}`, event_type: 'online', starts_at: at(24), ends_at: at(26), price, currency }),
    challenge: (tribeId: string, who: Actor, price: unknown, currency: string) =>
      t.api
        .post(`/v1/communities/${tribeId}/challenges`)
        .set(bearer(who))
        .send({ title: `Challenge ${unique()}`, duration_days: 7, challenge_type: 'daily', access_type: 'paid', price, currency }),
  };
  const tables = { course: 'courses', event: 'tribe_events', challenge: 'challenges' } as const;
  const itemsOf = (kind: keyof typeof tables, tribeId: string) =>
    countOf(t, sql`select count(*)::int as n from ${sql.identifier(tables[kind])} where community_id = ${tribeId}`);

  describe.each(Object.keys(create) as Array<keyof typeof create>)('creating a paid %s', (kind) => {
    it.each([
      ['JPY', 100.5, 'price in JPY takes no decimals (ISO 4217 minor unit)'],
      ['JPY', 1500.01, 'price in JPY takes no decimals (ISO 4217 minor unit)'],
      ['ISK', 10.5, 'price in ISK takes no decimals (ISO 4217 minor unit)'],
      ['USD', 49.999, 'price must be a number from 0 to 1000000 with at most 2 decimals'],
    ])('refuses %s %s with 400 invalid_input naming price, and writes nothing', async (currency, price, message) => {
      const s = await staffedTribe(t, cast);
      const res = await create[kind](s.tribe.id, s.owner, price, currency);
      expectError(res, 400, 'invalid_input');
      expect(res.body.error.details).toEqual([{ field: 'price', message }]);
      expect(await itemsOf(kind, s.tribe.id)).toBe(0);
    });

    it.each([
      ['JPY', 1500, 150000],
      ['USD', 49.99, 4999],
      ['KWD', 1.25, 125],
    ])('accepts %s %s (whole minor units), stored as %s cents', async (currency, price, cents) => {
      const s = await staffedTribe(t, cast);
      const res = await create[kind](s.tribe.id, s.owner, price, currency);
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({ price, currency });
      expect(await sqlRows(t, sql`select price_cents from ${sql.identifier(tables[kind])} where id = ${res.body.data.id}`)).toEqual([{ price_cents: cents }]);
    });
  });

  it('GraphQL createCourse refuses JPY 100.5 with BAD_USER_INPUT invalid_input naming price, and writes nothing', async () => {
    const s = await staffedTribe(t, cast);
    const out = await gql(
      t,
      s.owner,
      `mutation($communityId: ID!) { createCourse(communityId: $communityId, input: { title: "Yen", accessType: "paid", price: 100.5, currency: "JPY" }) { id } }`,
      { communityId: s.tribe.id },
    );
    expect(failure(out)).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input' });
    expect(out.errors![0].extensions!.details).toEqual([{ field: 'price', message: 'price in JPY takes no decimals (ISO 4217 minor unit)' }]);
    expect(await itemsOf('course', s.tribe.id)).toBe(0);
  });

  describe('paid end to end with events signed by the stripe library', () => {
    /** A Stripe `checkout.session.completed` for the order, signed as Stripe signs it (`stripe.webhooks`). */
    function deliver(orderId: string, amountTotal: number, currency: string) {
      const payload = JSON.stringify({
        id: `evt_${unique()}${unique()}`,
        object: 'event',
        type: 'checkout.session.completed',
        created: Math.floor(clock.now().getTime() / 1000),
        livemode: false,
        data: { object: { id: `cs_${unique()}`, object: 'checkout.session', payment_status: 'paid', amount_total: amountTotal, currency, metadata: { order_id: orderId } } },
      });
      const header = stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp: Math.floor(clock.now().getTime() / 1000) });
      return t.api.post('/webhooks/payments/stripe').set('content-type', 'application/json').set('stripe-signature', header).send(payload);
    }
    const orderRow = async (id: string) => (await sqlRows(t, sql`select status, amount_cents, currency from orders where id = ${id}`))[0];

    it.each([
      // currency, price sent, Stripe's amount (its smallest unit), what the order stores (cents), a wrong Stripe amount
      ['JPY', 1500, 1500, 150000, 150000],
      ['USD', 49.99, 4999, 4999, 49990],
      ['KWD', 1.25, 1250, 125, 125],
    ])('pays a %s %s order when Stripe charges %s of its smallest unit', async (currency, price, stripeAmount, cents, wrongAmount) => {
      const s = await staffedTribe(t, cast);
      const event = await create.event(s.tribe.id, s.owner, price, currency);
      expect(event.status).toBe(201);
      const reg = await t.api.post(`/v1/communities/${s.tribe.id}/events/${event.body.data.id}/register`).set(bearer(s.member));
      expect(reg.status).toBe(202);
      const orderId = reg.body.data.order.id as string;
      expect(await orderRow(orderId)).toEqual({ status: 'pending', amount_cents: cents, currency });

      // An amount in the wrong unit is refused and changes nothing.
      const wrong = await deliver(orderId, wrongAmount, currency.toLowerCase());
      expect({ status: wrong.status, body: wrong.body }).toEqual({ status: 400, body: { error: 'amount_mismatch', message: expect.any(String), requestId: expect.any(String) } });
      expect(await orderRow(orderId)).toEqual({ status: 'pending', amount_cents: cents, currency });

      const paid = await deliver(orderId, stripeAmount, currency.toLowerCase());
      expect(paid.status).toBe(200);
      expect(await orderRow(orderId)).toEqual({ status: 'paid', amount_cents: cents, currency });
    });
  });
});
