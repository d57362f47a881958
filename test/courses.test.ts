import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { crew, markPaid, staffedTribe, unique, UNKNOWN_ID, type Actor, type Cast } from './factory.js';
import { bearer, countOf, eventsOf, gql, memberXp, sqlRows, startService, xpAwards, type TestService } from './support.js';
import { expectError, ISO, UUID } from './expected.js';

/** Token-authenticated resource API: courses, modules, lessons, enrollment and progress (spec 2.6, 4.5). */
describe('resource API courses', () => {
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

  const base = (tribeId: string) => `/v1/communities/${tribeId}/courses`;
  const createCourse = (tribeId: string, who: Actor, body: Record<string, unknown>) => t.api.post(base(tribeId)).set(bearer(who)).send(body);
  async function newCourse(tribeId: string, who: Actor, body: Record<string, unknown> = {}) {
    const res = await createCourse(tribeId, who, { title: `Course ${unique()}`, access_type: 'free', ...body });
    if (res.status !== 201) throw new Error(`createCourse: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data as Record<string, any>;
  }
  async function newModule(tribeId: string, courseId: string, who: Actor, body: Record<string, unknown> = {}) {
    const res = await t.api.post(`${base(tribeId)}/${courseId}/modules`).set(bearer(who)).send({ title: `Module ${unique()}`, ...body });
    if (res.status !== 201) throw new Error(`addModule: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data as Record<string, any>;
  }
  async function newLesson(tribeId: string, courseId: string, moduleId: string, who: Actor, body: Record<string, unknown> = {}) {
    const res = await t.api
      .post(`${base(tribeId)}/${courseId}/modules/${moduleId}/lessons`)
      .set(bearer(who))
      .send({ title: `Lesson ${unique()}`, content: '<p>Read this</p>', ...body });
    if (res.status !== 201) throw new Error(`addLesson: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data as Record<string, any>;
  }
  /** A course with one module of `lessons` lessons, made by the tribe's moderator. */
  async function courseWithLessons(s: Awaited<ReturnType<typeof staffedTribe>>, lessons: number, body: Record<string, unknown> = {}) {
    const course = await newCourse(s.tribe.id, s.moderator, body);
    const module = await newModule(s.tribe.id, course.id, s.moderator);
    const list = [];
    for (let i = 0; i < lessons; i += 1) list.push(await newLesson(s.tribe.id, course.id, module.id, s.moderator));
    return { course, module, lessons: list };
  }
  const enroll = (tribeId: string, courseId: string, who: Actor) => t.api.post(`${base(tribeId)}/${courseId}/enroll`).set(bearer(who));
  const progress = (tribeId: string, courseId: string, who: Actor) => t.api.get(`${base(tribeId)}/${courseId}/progress`).set(bearer(who));
  const complete = (tribeId: string, courseId: string, lessonId: string, who: Actor) =>
    t.api.post(`${base(tribeId)}/${courseId}/lessons/${lessonId}/complete`).set(bearer(who));
  const coursesOf = (tribeId: string) => countOf(t, sql`select count(*)::int as n from courses where community_id = ${tribeId}`);

  describe('POST /v1/communities/:community_id/courses', () => {
    it('creates a free course for a moderator with 201 and the course record', async () => {
      const s = await staffedTribe(t, cast);
      const res = await createCourse(s.tribe.id, s.moderator, { title: '  Intro  ', description: 'Basics', access_type: 'free' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        data: {
          id: expect.stringMatching(UUID),
          community_id: s.tribe.id,
          title: 'Intro',
          description: 'Basics',
          access_type: 'free',
          price: 0,
          currency: 'BRL',
          xp_reward: 0,
          created_by: s.moderator.id,
          created_at: expect.stringMatching(ISO),
          updated_at: expect.stringMatching(ISO),
        },
      });
      expect(await sqlRows(t, sql`select title, access_type, price_cents, currency from courses where id = ${res.body.data.id}`)).toEqual([
        { title: 'Intro', access_type: 'free', price_cents: 0, currency: 'BRL' },
      ]);
    });

    it('stores a paid price as exact integer cents and answers it as the spec number', async () => {
      const s = await staffedTribe(t, cast);
      for (const [price, cents] of [[49.9, 4990], [19.99, 1999], [0.01, 1], [1000000, 100000000], [1.1, 110]] as const) {
        const res = await createCourse(s.tribe.id, s.owner, { title: 'Paid', access_type: 'paid', price, currency: 'usd', xp_reward: 50 });
        expect(res.status).toBe(201);
        expect(res.body.data).toMatchObject({ access_type: 'paid', price, currency: 'USD', xp_reward: 50 });
        expect(await sqlRows(t, sql`select price_cents from courses where id = ${res.body.data.id}`)).toEqual([{ price_cents: cents }]);
      }
    });

    it('lets owners and admins create courses too', async () => {
      const s = await staffedTribe(t, cast);
      for (const who of [s.owner, s.admin]) expect((await createCourse(s.tribe.id, who, { title: 'x', access_type: 'members_only' })).status).toBe(201);
    });

    it.each(['member', 'outsider'] as const)('refuses a %s with 403 and writes nothing', async (who) => {
      const s = await staffedTribe(t, cast);
      expectError(await createCourse(s.tribe.id, s[who], { title: 'x', access_type: 'free' }), 403, 'forbidden');
      expect(await coursesOf(s.tribe.id)).toBe(0);
    });

    it('checks the role before the body: a member with a bad body gets 403', async () => {
      const s = await staffedTribe(t, cast);
      expectError(await createCourse(s.tribe.id, s.member, {}), 403, 'forbidden');
    });

    it.each([
      ['no title', { access_type: 'free' }, 'title'],
      ['a blank title', { title: '   ', access_type: 'free' }, 'title'],
      ['no access_type', { title: 'x' }, 'accessType'],
      ['an unknown access_type', { title: 'x', access_type: 'vip' }, 'accessType'],
      ['paid without a price', { title: 'x', access_type: 'paid' }, 'price'],
      ['paid with price 0', { title: 'x', access_type: 'paid', price: 0 }, 'price'],
      ['a price with 3 decimals', { title: 'x', access_type: 'paid', price: 49.999 }, 'price'],
      ['a negative price', { title: 'x', access_type: 'paid', price: -5 }, 'price'],
      ['a price above 1000000', { title: 'x', access_type: 'paid', price: 1000000.01 }, 'price'],
      ['a price on a free course', { title: 'x', access_type: 'free', price: 10 }, 'price'],
      ['an unknown currency', { title: 'x', access_type: 'paid', price: 10, currency: 'XYZ' }, 'currency'],
      ['a negative xp_reward', { title: 'x', access_type: 'free', xp_reward: -1 }, 'xpReward'],
    ])('answers 400 invalid_input for %s and writes nothing', async (_name, body, field) => {
      const s = await staffedTribe(t, cast);
      const res = await createCourse(s.tribe.id, s.moderator, body);
      expectError(res, 400, 'invalid_input');
      expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      expect(await coursesOf(s.tribe.id)).toBe(0);
    });

    it('answers 400 for JSON of the wrong type (a price string, a numeric title)', async () => {
      const s = await staffedTribe(t, cast);
      expectError(await createCourse(s.tribe.id, s.moderator, { title: 'x', access_type: 'paid', price: 'lots' }), 400, 'invalid_input');
      expectError(await createCourse(s.tribe.id, s.moderator, { title: 5, access_type: 'free' }), 400, 'invalid_input');
      expectError(await t.api.post(base(s.tribe.id)).set(bearer(s.moderator)).send([1]), 400, 'invalid_input');
      expect(await coursesOf(s.tribe.id)).toBe(0);
    });

    it('answers 404 for an unknown tribe and 401 without a token', async () => {
      expectError(await createCourse(UNKNOWN_ID, cast.owner, { title: 'x', access_type: 'free' }), 404, 'not_found');
      expectError(await t.api.post(base(UNKNOWN_ID)).send({ title: 'x', access_type: 'free' }), 401, 'unauthorized');
    });
  });

  describe('GET /v1/communities/:community_id/courses', () => {
    it('lists the tribe courses newest first with exact pagination', async () => {
      const s = await staffedTribe(t, cast);
      const made = [];
      for (let i = 0; i < 3; i += 1) made.push(await newCourse(s.tribe.id, s.moderator, { title: `c${i}` }));
      await newCourse((await staffedTribe(t, otherCast)).tribe.id, otherCast.moderator);
      const first = await t.api.get(`${base(s.tribe.id)}?per_page=2`).set(bearer(s.member));
      expect(first.status).toBe(200);
      expect(first.body.data.map((c: any) => c.title)).toEqual(['c2', 'c1']);
      expect(first.body.pagination).toEqual({ page: 1, per_page: 2, has_more: true });
      expect(first.body.data[0]).not.toHaveProperty('modules');
      const second = await t.api.get(`${base(s.tribe.id)}?per_page=2&page=2`).set(bearer(s.member));
      expect(second.body.data.map((c: any) => c.id)).toEqual([made[0].id]);
      expect(second.body.pagination).toEqual({ page: 2, per_page: 2, has_more: false });
    });

    it('shows a public tribe catalogue to outsiders and hides a private one (403)', async () => {
      const open = await staffedTribe(t, cast);
      await newCourse(open.tribe.id, open.moderator);
      expect((await t.api.get(base(open.tribe.id)).set(bearer(open.outsider))).body.data).toHaveLength(1);
      const closed = await staffedTribe(t, cast, { isPublic: false });
      expectError(await t.api.get(base(closed.tribe.id)).set(bearer(closed.outsider)), 403, 'forbidden');
    });

    it('answers 400 invalid_query for a bad per_page and 404 for an unknown tribe', async () => {
      const s = await staffedTribe(t, cast);
      expectError(await t.api.get(`${base(s.tribe.id)}?per_page=0`).set(bearer(s.member)), 400, 'invalid_query');
      expectError(await t.api.get(`${base(s.tribe.id)}?page=x`).set(bearer(s.member)), 400, 'invalid_query');
      expectError(await t.api.get(base(UNKNOWN_ID)).set(bearer(s.member)), 404, 'not_found');
    });

    it('clamps per_page above 50 to 50', async () => {
      const s = await staffedTribe(t, cast);
      const res = await t.api.get(`${base(s.tribe.id)}?per_page=500`).set(bearer(s.member));
      expect(res.body.pagination).toEqual({ page: 1, per_page: 50, has_more: false });
    });
  });

  describe('POST /v1/communities/:community_id/courses/:id/modules and .../modules/:module_id/lessons', () => {
    it('adds modules and lessons for moderators, appending when position is omitted', async () => {
      const s = await staffedTribe(t, cast);
      const course = await newCourse(s.tribe.id, s.moderator);
      const res = await t.api.post(`${base(s.tribe.id)}/${course.id}/modules`).set(bearer(s.moderator)).send({ title: 'Week 1', position: 3 });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        data: { id: expect.stringMatching(UUID), course_id: course.id, title: 'Week 1', position: 3, created_at: expect.stringMatching(ISO) },
      });
      expect((await newModule(s.tribe.id, course.id, s.admin)).position).toBe(4);
      const lesson = await t.api
        .post(`${base(s.tribe.id)}/${course.id}/modules/${res.body.data.id}/lessons`)
        .set(bearer(s.owner))
        .send({ title: 'Hello', content: '<p>Hi<script>alert(1)</script></p>' });
      expect(lesson.status).toBe(201);
      expect(lesson.body).toEqual({
        data: {
          id: expect.stringMatching(UUID),
          course_id: course.id,
          module_id: res.body.data.id,
          title: 'Hello',
          content: '<p>Hi</p>',
          position: 0,
          created_at: expect.stringMatching(ISO),
        },
      });
      expect((await newLesson(s.tribe.id, course.id, res.body.data.id, s.moderator)).position).toBe(1);
    });

    it('refuses members with 403 and writes nothing', async () => {
      const s = await staffedTribe(t, cast);
      const course = await newCourse(s.tribe.id, s.moderator);
      const module = await newModule(s.tribe.id, course.id, s.moderator);
      expectError(await t.api.post(`${base(s.tribe.id)}/${course.id}/modules`).set(bearer(s.member)).send({ title: 'x' }), 403, 'forbidden');
      expectError(
        await t.api.post(`${base(s.tribe.id)}/${course.id}/modules/${module.id}/lessons`).set(bearer(s.member)).send({ title: 'x' }),
        403,
        'forbidden',
      );
      expect(await countOf(t, sql`select count(*)::int as n from course_modules where course_id = ${course.id}`)).toBe(1);
      expect(await countOf(t, sql`select count(*)::int as n from course_lessons where course_id = ${course.id}`)).toBe(0);
    });

    it('answers 400 for a missing title or a negative position, writing nothing', async () => {
      const s = await staffedTribe(t, cast);
      const course = await newCourse(s.tribe.id, s.moderator);
      expectError(await t.api.post(`${base(s.tribe.id)}/${course.id}/modules`).set(bearer(s.moderator)).send({}), 400, 'invalid_input');
      expectError(
        await t.api.post(`${base(s.tribe.id)}/${course.id}/modules`).set(bearer(s.moderator)).send({ title: 'x', position: -1 }),
        400,
        'invalid_input',
      );
      const module = await newModule(s.tribe.id, course.id, s.moderator);
      expectError(
        await t.api.post(`${base(s.tribe.id)}/${course.id}/modules/${module.id}/lessons`).set(bearer(s.moderator)).send({ content: 'x' }),
        400,
        'invalid_input',
      );
      expect(await countOf(t, sql`select count(*)::int as n from course_modules where course_id = ${course.id}`)).toBe(1);
      expect(await countOf(t, sql`select count(*)::int as n from course_lessons where course_id = ${course.id}`)).toBe(0);
    });

    it('answers 404 for a module of another course', async () => {
      const s = await staffedTribe(t, cast);
      const a = await newCourse(s.tribe.id, s.moderator);
      const b = await newCourse(s.tribe.id, s.moderator);
      const moduleOfB = await newModule(s.tribe.id, b.id, s.moderator);
      expectError(
        await t.api.post(`${base(s.tribe.id)}/${a.id}/modules/${moduleOfB.id}/lessons`).set(bearer(s.moderator)).send({ title: 'x' }),
        404,
        'not_found',
      );
      expectError(
        await t.api.post(`${base(s.tribe.id)}/${a.id}/modules/not-a-uuid/lessons`).set(bearer(s.moderator)).send({ title: 'x' }),
        404,
        'not_found',
      );
    });
  });

  describe('GET /v1/communities/:community_id/courses/:id', () => {
    it('answers the course with its modules and lessons in position order', async () => {
      const s = await staffedTribe(t, cast);
      const course = await newCourse(s.tribe.id, s.moderator, { xp_reward: 30 });
      const second = await newModule(s.tribe.id, course.id, s.moderator, { title: 'B', position: 2 });
      const first = await newModule(s.tribe.id, course.id, s.moderator, { title: 'A', position: 1 });
      await newLesson(s.tribe.id, course.id, first.id, s.moderator, { title: 'A2', position: 2 });
      await newLesson(s.tribe.id, course.id, first.id, s.moderator, { title: 'A1', position: 1 });
      await newLesson(s.tribe.id, course.id, second.id, s.moderator, { title: 'B1' });
      const res = await t.api.get(`${base(s.tribe.id)}/${course.id}`).set(bearer(s.member));
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ id: course.id, community_id: s.tribe.id, xp_reward: 30, viewer_enrollment: null });
      expect(res.body.data.modules.map((m: any) => [m.title, m.lessons.map((l: any) => l.title)])).toEqual([
        ['A', ['A1', 'A2']],
        ['B', ['B1']],
      ]);
      expect(res.body.data.modules[0].lessons[0]).toEqual({
        id: expect.stringMatching(UUID),
        course_id: course.id,
        module_id: first.id,
        title: 'A1',
        content: '<p>Read this</p>',
        position: 1,
        created_at: expect.stringMatching(ISO),
      });
    });

    it('hides lesson bodies of a paid course from members not enrolled, not from moderators', async () => {
      const s = await staffedTribe(t, cast);
      const { course } = await courseWithLessons(s, 1, { access_type: 'paid', price: 10 });
      const lessonBody = async (who: Actor) => (await t.api.get(`${base(s.tribe.id)}/${course.id}`).set(bearer(who))).body.data.modules[0].lessons[0].content;
      expect(await lessonBody(s.member)).toBeNull();
      expect(await lessonBody(s.outsider)).toBeNull();
      expect(await lessonBody(s.moderator)).toBe('<p>Read this</p>');
    });

    it('hides lesson bodies of a members_only course from outsiders of a public tribe; free ones are open', async () => {
      const s = await staffedTribe(t, cast);
      const membersOnly = (await courseWithLessons(s, 1, { access_type: 'members_only' })).course;
      const free = (await courseWithLessons(s, 1, { access_type: 'free' })).course;
      const lessonBody = async (id: string, who: Actor) => (await t.api.get(`${base(s.tribe.id)}/${id}`).set(bearer(who))).body.data.modules[0].lessons[0].content;
      expect(await lessonBody(membersOnly.id, s.outsider)).toBeNull();
      expect(await lessonBody(membersOnly.id, s.member)).toBe('<p>Read this</p>');
      expect(await lessonBody(free.id, s.outsider)).toBe('<p>Read this</p>');
    });

    it('answers 404 for an unknown or malformed id and 403 in a private tribe for outsiders', async () => {
      const s = await staffedTribe(t, cast, { isPublic: false });
      const course = await newCourse(s.tribe.id, s.moderator);
      expectError(await t.api.get(`${base(s.tribe.id)}/${UNKNOWN_ID}`).set(bearer(s.member)), 404, 'not_found');
      expectError(await t.api.get(`${base(s.tribe.id)}/nope`).set(bearer(s.member)), 404, 'not_found');
      expectError(await t.api.get(`${base(s.tribe.id)}/${course.id}`).set(bearer(s.outsider)), 403, 'forbidden');
    });
  });

  describe('POST /v1/communities/:community_id/courses/:id/enroll', () => {
    it('enrolls a member in a free course with 201 status active, and answers 200 with the same enrollment again', async () => {
      const s = await staffedTribe(t, cast);
      const course = await newCourse(s.tribe.id, s.moderator);
      const res = await enroll(s.tribe.id, course.id, s.member);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        data: {
          id: expect.stringMatching(UUID),
          course_id: course.id,
          user_id: s.member.id,
          status: 'active',
          enrolled_at: expect.stringMatching(ISO),
          completed_at: null,
          last_accessed_at: expect.stringMatching(ISO),
        },
      });
      const again = await enroll(s.tribe.id, course.id, s.member);
      expect(again.status).toBe(200);
      expect(again.body.data).toEqual(res.body.data);
      expect(await countOf(t, sql`select count(*)::int as n from course_enrollments where course_id = ${course.id}`)).toBe(1);
    });

    it.each(['free', 'members_only'])('refuses an outsider of a public tribe in a %s course with 403 (enrolling needs membership)', async (accessType) => {
      const s = await staffedTribe(t, cast);
      const course = await newCourse(s.tribe.id, s.moderator, { access_type: accessType });
      expectError(await enroll(s.tribe.id, course.id, s.outsider), 403, 'forbidden');
      expect(await countOf(t, sql`select count(*)::int as n from course_enrollments where course_id = ${course.id}`)).toBe(0);
    });

    it('answers 202 with a pending order for a paid course, the same order on every call, and no enrollment', async () => {
      const s = await staffedTribe(t, cast);
      const course = await newCourse(s.tribe.id, s.moderator, { access_type: 'paid', price: 49.9 });
      const res = await enroll(s.tribe.id, course.id, s.member);
      expect(res.status).toBe(202);
      expect(res.body).toEqual({
        data: {
          status: 'pending_payment',
          order: { id: expect.stringMatching(UUID), amount: 49.9, amount_cents: 4990, currency: 'BRL', status: 'pending', checkout: { provider: 'manual' } },
        },
      });
      const again = await enroll(s.tribe.id, course.id, s.member);
      expect(again.status).toBe(202);
      expect(again.body.data.order.id).toBe(res.body.data.order.id);
      expect(await sqlRows(t, sql`select buyer_id, product_type, product_id, amount_cents, currency, status from orders where product_id = ${course.id}`)).toEqual([
        { buyer_id: s.member.id, product_type: 'course', product_id: course.id, amount_cents: 4990, currency: 'BRL', status: 'pending' },
      ]);
      expect(await countOf(t, sql`select count(*)::int as n from course_enrollments where course_id = ${course.id}`)).toBe(0);
      expectError(await progress(s.tribe.id, course.id, s.member), 403, 'not_enrolled');
    });

    it('gives one pending order to concurrent enroll calls', async () => {
      const s = await staffedTribe(t, cast);
      const course = await newCourse(s.tribe.id, s.moderator, { access_type: 'paid', price: 5 });
      const results = await Promise.all(Array.from({ length: 6 }, () => enroll(s.tribe.id, course.id, s.member2)));
      expect(results.map((r) => r.status)).toEqual(Array(6).fill(202));
      expect(new Set(results.map((r) => r.body.data.order.id)).size).toBe(1);
      expect(await countOf(t, sql`select count(*)::int as n from orders where product_id = ${course.id}`)).toBe(1);
    });

    it('enrolls the buyer once the order is paid (manual provider), end to end, with order.paid', async () => {
      const s = await staffedTribe(t, cast);
      const { course, lessons } = await courseWithLessons(s, 1, { access_type: 'paid', price: 19.99, xp_reward: 40 });
      const pending = await enroll(s.tribe.id, course.id, s.member);
      const orderId = pending.body.data.order.id;
      const paid = await markPaid(t, s.owner, orderId);
      expect(paid.errors).toBeUndefined();
      expect(paid.data.markOrderPaid).toEqual({ id: orderId, status: 'paid', paidAt: expect.stringMatching(ISO) });
      const enrolled = await enroll(s.tribe.id, course.id, s.member);
      expect(enrolled.status).toBe(200);
      expect(enrolled.body.data).toMatchObject({ course_id: course.id, user_id: s.member.id, status: 'active' });
      expect(await sqlRows(t, sql`select order_id from course_enrollments where course_id = ${course.id}`)).toEqual([{ order_id: orderId }]);
      expect(await eventsOf(t, s.tribe.id, 'order.paid')).toEqual([
        {
          data: {
            orderId,
            userId: s.member.id,
            amount: 1999,
            currency: 'BRL',
            productType: 'course',
            productId: course.id,
            handle: s.tribe.handle,
          },
        },
      ]);
      const detail = await t.api.get(`${base(s.tribe.id)}/${course.id}`).set(bearer(s.member));
      expect(detail.body.data.modules[0].lessons[0].content).toBe('<p>Read this</p>');
      const done = await complete(s.tribe.id, course.id, lessons[0].id, s.member);
      expect(done.body.data).toMatchObject({ status: 'completed', completed_lessons: 1, progress_percent: 100 });
      expect(await memberXp(t, s.tribe.id, s.member.id)).toEqual({ xp: 40, level: 1 });
    });

    it('answers 404 for an unknown course', async () => {
      const s = await staffedTribe(t, cast);
      expectError(await enroll(s.tribe.id, UNKNOWN_ID, s.member), 404, 'not_found');
    });
  });

  describe('GET /v1/communities/:community_id/courses/:id/progress', () => {
    it('answers zero progress right after enrolling', async () => {
      const s = await staffedTribe(t, cast);
      const { course } = await courseWithLessons(s, 3);
      const enrolled = await enroll(s.tribe.id, course.id, s.member);
      const res = await progress(s.tribe.id, course.id, s.member);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        data: {
          course_id: course.id,
          enrollment_id: enrolled.body.data.id,
          status: 'active',
          total_lessons: 3,
          completed_lessons: 0,
          progress_percent: 0,
          last_accessed_at: enrolled.body.data.last_accessed_at,
          completed_lesson_ids: [],
        },
      });
    });

    it('answers 403 not_enrolled without an enrollment', async () => {
      const s = await staffedTribe(t, cast);
      const course = await newCourse(s.tribe.id, s.moderator);
      expectError(await progress(s.tribe.id, course.id, s.member), 403, 'not_enrolled');
    });
  });

  describe('POST /v1/communities/:community_id/courses/:id/lessons/:lesson_id/complete', () => {
    it('answers the updated progress and counts a lesson completed twice once', async () => {
      const s = await staffedTribe(t, cast);
      const { course, lessons } = await courseWithLessons(s, 3, { xp_reward: 120 });
      await enroll(s.tribe.id, course.id, s.member);
      const first = await complete(s.tribe.id, course.id, lessons[0].id, s.member);
      expect(first.status).toBe(200);
      expect(first.body.data).toMatchObject({ status: 'active', total_lessons: 3, completed_lessons: 1, progress_percent: 33.33, completed_lesson_ids: [lessons[0].id] });
      const twice = await complete(s.tribe.id, course.id, lessons[0].id, s.member);
      expect(twice.status).toBe(200);
      expect(twice.body.data).toEqual(first.body.data);
      expect(await countOf(t, sql`select count(*)::int as n from lesson_completions where lesson_id = ${lessons[0].id}`)).toBe(1);
    });

    it('completes the enrollment on the last lesson and awards the course XP once', async () => {
      const s = await staffedTribe(t, cast);
      const { course, lessons } = await courseWithLessons(s, 2, { xp_reward: 120 });
      const enrolled = await enroll(s.tribe.id, course.id, s.member);
      await complete(s.tribe.id, course.id, lessons[1].id, s.member);
      expect(await memberXp(t, s.tribe.id, s.member.id)).toEqual({ xp: 0, level: 1 });
      const last = await complete(s.tribe.id, course.id, lessons[0].id, s.member);
      expect(last.body.data).toMatchObject({ status: 'completed', completed_lessons: 2, progress_percent: 100 });
      expect(await memberXp(t, s.tribe.id, s.member.id)).toEqual({ xp: 120, level: 2 });
      await complete(s.tribe.id, course.id, lessons[0].id, s.member);
      await complete(s.tribe.id, course.id, lessons[1].id, s.member);
      expect(await memberXp(t, s.tribe.id, s.member.id)).toEqual({ xp: 120, level: 2 });
      expect(await xpAwards(t, s.tribe.id, s.member.id, 'course.completed')).toEqual([{ amount: 120, source_key: `course.completed:${enrolled.body.data.id}` }]);
      const again = await enroll(s.tribe.id, course.id, s.member);
      expect(again.body.data).toMatchObject({ status: 'completed', completed_at: expect.stringMatching(ISO) });
    });

    it('awards the XP once when the last two lessons are completed at the same time', async () => {
      const s = await staffedTribe(t, cast);
      const { course, lessons } = await courseWithLessons(s, 2, { xp_reward: 75 });
      await enroll(s.tribe.id, course.id, s.member2);
      await Promise.all(lessons.map((l) => complete(s.tribe.id, course.id, l.id, s.member2)));
      expect((await progress(s.tribe.id, course.id, s.member2)).body.data).toMatchObject({ status: 'completed', completed_lessons: 2 });
      expect(await memberXp(t, s.tribe.id, s.member2.id)).toEqual({ xp: 75, level: 1 });
    });

    it('answers 403 not_enrolled without an enrollment and 404 for a lesson of another course', async () => {
      const s = await staffedTribe(t, cast);
      const a = await courseWithLessons(s, 1);
      const b = await courseWithLessons(s, 1);
      expectError(await complete(s.tribe.id, a.course.id, a.lessons[0].id, s.member), 403, 'not_enrolled');
      await enroll(s.tribe.id, a.course.id, s.member);
      expectError(await complete(s.tribe.id, a.course.id, b.lessons[0].id, s.member), 404, 'not_found');
      expectError(await complete(s.tribe.id, a.course.id, UNKNOWN_ID, s.member), 404, 'not_found');
      expect(await countOf(t, sql`select count(*)::int as n from lesson_completions where lesson_id = ${b.lessons[0].id}`)).toBe(0);
    });
  });

  describe('tribe isolation', () => {
    it('answers 404 on every course route for a course of another tribe, writing nothing', async () => {
      const mine = await staffedTribe(t, cast);
      const theirs = await staffedTribe(t, otherCast);
      const { course, module, lessons } = await courseWithLessons(theirs, 1);
      await enroll(theirs.tribe.id, course.id, theirs.member);
      // Everyone in `cast` is staff or member of `mine` only; the owner of `mine` is the caller.
      const who = bearer(mine.owner);
      const path = `${base(mine.tribe.id)}/${course.id}`;
      const answers = [
        await t.api.get(path).set(who),
        await t.api.post(`${path}/modules`).set(who).send({ title: 'x' }),
        await t.api.post(`${path}/modules/${module.id}/lessons`).set(who).send({ title: 'x' }),
        await t.api.post(`${path}/enroll`).set(who),
        await t.api.get(`${path}/progress`).set(who),
        await t.api.post(`${path}/lessons/${lessons[0].id}/complete`).set(who),
      ];
      for (const res of answers) expectError(res, 404, 'not_found');
      // The course's own tribe member is not reachable through another tribe either.
      expectError(await t.api.get(`${base(mine.tribe.id)}/${course.id}/progress`).set(bearer(theirs.member)), 404, 'not_found');
      expect(await countOf(t, sql`select count(*)::int as n from course_modules where course_id = ${course.id}`)).toBe(1);
      expect(await countOf(t, sql`select count(*)::int as n from course_enrollments where course_id = ${course.id}`)).toBe(1);
      expect(await countOf(t, sql`select count(*)::int as n from lesson_completions where lesson_id = ${lessons[0].id}`)).toBe(0);
    });

    it('answers 404 for a module of another tribe under my course', async () => {
      const mine = await staffedTribe(t, cast);
      const theirs = await staffedTribe(t, otherCast);
      const course = await newCourse(mine.tribe.id, mine.moderator);
      const { module } = await courseWithLessons(theirs, 0);
      expectError(
        await t.api.post(`${base(mine.tribe.id)}/${course.id}/modules/${module.id}/lessons`).set(bearer(mine.moderator)).send({ title: 'x' }),
        404,
        'not_found',
      );
    });
  });

  describe('DELETE /v1/communities/:id', () => {
    it('removes the tribe courses with their modules, lessons and enrollments, and its challenges', async () => {
      const s = await staffedTribe(t, cast);
      const { course, lessons } = await courseWithLessons(s, 1);
      await enroll(s.tribe.id, course.id, s.member);
      await complete(s.tribe.id, course.id, lessons[0].id, s.member);
      const challenge = await t.api
        .post(`/v1/communities/${s.tribe.id}/challenges`)
        .set(bearer(s.moderator))
        .send({ title: 'c', duration_days: 3, challenge_type: 'daily', access_type: 'free' });
      expect(challenge.status).toBe(201);
      expect((await t.api.delete(`/v1/communities/${s.tribe.id}`).set(bearer(s.owner))).status).toBe(204);
      expect(await coursesOf(s.tribe.id)).toBe(0);
      expect(await countOf(t, sql`select count(*)::int as n from course_lessons where course_id = ${course.id}`)).toBe(0);
      expect(await countOf(t, sql`select count(*)::int as n from course_enrollments where course_id = ${course.id}`)).toBe(0);
      expect(await countOf(t, sql`select count(*)::int as n from challenges where id = ${challenge.body.data.id}`)).toBe(0);
    });
  });

  describe('GraphQL', () => {
    it('serves courses, enrollment and progress to the web app through the same service', async () => {
      const s = await staffedTribe(t, cast);
      const { course, lessons } = await courseWithLessons(s, 1, { xp_reward: 10 });
      const enrolled = await gql(t, s.member, 'mutation($c: ID!){ enrollCourse(courseId: $c){ status created enrollment { id status user { id } } } }', { c: course.id });
      expect(enrolled.data.enrollCourse).toMatchObject({ status: 'active', created: true, enrollment: { status: 'active', user: { id: s.member.id } } });
      const done = await gql(t, s.member, 'mutation($c: ID!, $l: ID!){ completeLesson(courseId: $c, lessonId: $l){ completedLessons progressPercent enrollment { status } } }', {
        c: course.id,
        l: lessons[0].id,
      });
      expect(done.data.completeLesson).toEqual({ completedLessons: 1, progressPercent: 100, enrollment: { status: 'completed' } });
      const read = await gql(t, s.member, 'query($c: ID!){ course(id: $c){ title price viewerEnrollment { status } modules { lessons { title content } } } }', { c: course.id });
      expect(read.data.course).toMatchObject({ price: 0, viewerEnrollment: { status: 'completed' } });
      const denied = await gql(t, s.member, 'mutation($c: ID!){ createCourse(communityId: $c, input: {title: "x", accessType: "free"}){ id } }', { c: s.tribe.id });
      expect(denied.errors?.[0].extensions?.reason).toBe('forbidden');
    });
  });
});
