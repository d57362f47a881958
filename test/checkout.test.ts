import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { ensurePendingOrder, markOrderPaid } from '../subgraphs/commerce/index.js';
import { crew, markPaid, staffedTribe, unique, UNKNOWN_ID, type Cast, type TestUser } from './factory.js';
import { countOf, eventsOf, gql, sqlRows, startService, type TestService } from './support.js';
import { ISO } from './expected.js';

/** The checkout core: pending orders, fulfilment on payment, order.paid, the manual provider's mutation. */
describe('checkout', () => {
  let t: TestService;
  let cast: Cast;
  let otherCast: Cast;

  beforeAll(async () => {
    t = await startService();
    [cast, otherCast] = await Promise.all([crew(t), crew(t)]);
  });
  afterAll(async () => {
    await t.stop();
  });

  const db = () => t.deps.database.db;
  /** A paid course in a fresh tribe of `who`, and `buyer`'s pending order for it (through the resource API). */
  async function pendingCourseOrder(people: Cast = cast, price = 49.9) {
    const s = await staffedTribe(t, people);
    const created = await t.api
      .post(`/v1/communities/${s.tribe.id}/courses`)
      .set({ authorization: `Bearer ${s.moderator.token}` })
      .send({ title: `Paid ${unique()}`, access_type: 'paid', price });
    const courseId = created.body.data.id as string;
    const enrolled = await t.api.post(`/v1/communities/${s.tribe.id}/courses/${courseId}/enroll`).set({ authorization: `Bearer ${s.member.token}` });
    if (enrolled.status !== 202) throw new Error(`enroll: ${enrolled.status} ${JSON.stringify(enrolled.body)}`);
    return { ...s, courseId, orderId: enrolled.body.data.order.id as string };
  }
  const orderRow = async (id: string) => (await sqlRows(t, sql`select status, paid_at, amount_cents, currency from orders where id = ${id}`))[0];
  const enrollmentsOf = (courseId: string) => countOf(t, sql`select count(*)::int as n from course_enrollments where course_id = ${courseId}`);
  const code = (out: { errors?: Array<{ extensions?: Record<string, any> }> }) => out.errors?.[0].extensions?.reason;

  describe('ensurePendingOrder', () => {
    it('creates one pending order per buyer and item, even for concurrent callers', async () => {
      const s = await staffedTribe(t, cast);
      const input = { communityId: s.tribe.id, buyerId: s.member.id, itemType: 'course' as const, itemId: UNKNOWN_ID, amountCents: 1234, currency: 'BRL' };
      const results = await Promise.all(Array.from({ length: 8 }, () => db().transaction((tx) => ensurePendingOrder(tx, input))));
      expect(new Set(results.map((r) => r.order.id)).size).toBe(1);
      expect(results.filter((r) => r.created)).toHaveLength(1);
      expect(results[0].order).toMatchObject({ status: 'pending', amountCents: 1234, currency: 'BRL', productType: 'course', productId: UNKNOWN_ID });
      const other = await db().transaction((tx) => ensurePendingOrder(tx, { ...input, buyerId: s.member2.id }));
      expect(other.order.id).not.toBe(results[0].order.id);
      expect(await countOf(t, sql`select count(*)::int as n from orders where community_id = ${s.tribe.id}`)).toBe(2);
    });

    it('starts a new pending order once the previous one is paid', async () => {
      const s = await pendingCourseOrder();
      await db().transaction((tx) => markOrderPaid(t.deps, tx, s.orderId));
      const next = await db().transaction((tx) =>
        ensurePendingOrder(tx, { communityId: s.tribe.id, buyerId: s.member.id, itemType: 'course', itemId: s.courseId, amountCents: 4990, currency: 'BRL' }),
      );
      expect(next).toMatchObject({ created: true, order: { status: 'pending' } });
      expect(next.order.id).not.toBe(s.orderId);
    });
  });

  describe('markOrderPaid', () => {
    it('marks the order paid, enrolls the buyer and emits order.paid in one go; a second call changes nothing', async () => {
      const s = await pendingCourseOrder();
      const first = await db().transaction((tx) => markOrderPaid(t.deps, tx, s.orderId, new Date('2030-01-01T00:00:00.000Z')));
      expect(first.changed).toBe(true);
      expect(await orderRow(s.orderId)).toEqual({ status: 'paid', paid_at: expect.anything(), amount_cents: 4990, currency: 'BRL' });
      const second = await db().transaction((tx) => markOrderPaid(t.deps, tx, s.orderId, new Date('2031-01-01T00:00:00.000Z')));
      expect(second).toMatchObject({ changed: false, order: { status: 'paid' } });
      expect(new Date((await orderRow(s.orderId)).paid_at).toISOString()).toBe('2030-01-01T00:00:00.000Z');
      expect(await enrollmentsOf(s.courseId)).toBe(1);
      expect(await eventsOf(t, s.tribe.id, 'order.paid')).toEqual([
        { data: { orderId: s.orderId, userId: s.member.id, amount: 4990, currency: 'BRL', productType: 'course', productId: s.courseId, handle: s.tribe.handle } },
      ]);
    });

    it('lets exactly one of several concurrent calls pay the order', async () => {
      const s = await pendingCourseOrder();
      const results = await Promise.all(Array.from({ length: 5 }, () => db().transaction((tx) => markOrderPaid(t.deps, tx, s.orderId))));
      expect(results.filter((r) => r.changed)).toHaveLength(1);
      expect(await eventsOf(t, s.tribe.id, 'order.paid')).toHaveLength(1);
      expect(await enrollmentsOf(s.courseId)).toBe(1);
    });

    it('writes nothing when the caller transaction rolls back', async () => {
      const s = await pendingCourseOrder();
      await expect(
        db().transaction(async (tx) => {
          await markOrderPaid(t.deps, tx, s.orderId);
          throw new Error('provider event rejected later');
        }),
      ).rejects.toThrow('provider event rejected later');
      expect((await orderRow(s.orderId)).status).toBe('pending');
      expect(await enrollmentsOf(s.courseId)).toBe(0);
      expect(await eventsOf(t, s.tribe.id, 'order.paid')).toEqual([]);
    });

    it('pays nothing when the item type has no fulfilment (all or nothing)', async () => {
      const s = await staffedTribe(t, cast);
      const [order] = await sqlRows(
        t,
        sql`insert into orders (community_id, buyer_id, product_type, product_id, amount_cents) values (${s.tribe.id}, ${s.member.id}, 'membership', ${UNKNOWN_ID}, 100) returning id`,
      );
      await expect(db().transaction((tx) => markOrderPaid(t.deps, tx, order.id))).rejects.toThrow('no fulfilment');
      expect((await orderRow(order.id)).status).toBe('pending');
      expect(await eventsOf(t, s.tribe.id, 'order.paid')).toEqual([]);
    });

    it('answers not_found for unknown or malformed ids and order_not_payable (409) for a failed order', async () => {
      await expect(db().transaction((tx) => markOrderPaid(t.deps, tx, UNKNOWN_ID))).rejects.toMatchObject({ code: 'not_found', kind: 'not_found' });
      await expect(db().transaction((tx) => markOrderPaid(t.deps, tx, 'nope'))).rejects.toMatchObject({ code: 'not_found' });
      const s = await pendingCourseOrder();
      await t.deps.database.db.execute(sql`update orders set status = 'failed' where id = ${s.orderId}`);
      await expect(db().transaction((tx) => markOrderPaid(t.deps, tx, s.orderId))).rejects.toMatchObject({ code: 'order_not_payable', kind: 'conflict' });
      expect(await enrollmentsOf(s.courseId)).toBe(0);
    });
  });

  describe('mutation markOrderPaid (manual provider)', () => {
    it.each(['owner'] as const)('lets the tribe %s mark a pending order paid, once', async (who) => {
      const s = await pendingCourseOrder();
      const out = await markPaid(t, s[who], s.orderId);
      expect(out.errors).toBeUndefined();
      expect(out.data.markOrderPaid).toEqual({ id: s.orderId, status: 'paid', paidAt: expect.stringMatching(ISO) });
      const again = await markPaid(t, s[who], s.orderId);
      expect(again.data.markOrderPaid).toEqual(out.data.markOrderPaid);
      expect(await eventsOf(t, s.tribe.id, 'order.paid')).toHaveLength(1);
      expect(await enrollmentsOf(s.courseId)).toBe(1);
    });

    it('refuses admins, moderators, the buyer and another tribe owner (forbidden), and unknown orders (not_found)', async () => {
      const s = await pendingCourseOrder();
      const other = await staffedTribe(t, otherCast);
      for (const who of [s.admin, s.moderator, s.member, s.outsider, other.owner] as TestUser[]) expect(code(await markPaid(t, who, s.orderId))).toBe('forbidden');
      expect(code(await markPaid(t, null as unknown as TestUser, s.orderId))).toBe('unauthorized');
      expect(code(await markPaid(t, s.owner, UNKNOWN_ID))).toBe('not_found');
      expect((await orderRow(s.orderId)).status).toBe('pending');
      expect(await enrollmentsOf(s.courseId)).toBe(0);
    });

    it('reads the paid order back through the Order entity', async () => {
      const s = await pendingCourseOrder(cast, 10);
      await markPaid(t, s.owner, s.orderId);
      const out = await gql(t, s.member, 'mutation($c: ID!){ enrollCourse(courseId: $c){ status order { id } enrollment { status } } }', { c: s.courseId });
      expect(out.data.enrollCourse).toEqual({ status: 'active', order: null, enrollment: { status: 'active' } });
    });
  });
});
