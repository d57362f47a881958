import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { crew, markPaid, refreshToken, staffedTribe, unique, UNKNOWN_ID, type Actor, type Cast } from './factory.js';
import { bearer, countOf, eventsOf, gql, memberXp, movableClock, sqlRows, startService, xpAwards, type TestService } from './support.js';
import { expectError, ISO, UUID } from './expected.js';

const HOUR = 60 * 60 * 1000;

/** Token-authenticated resource API: challenges, check-ins, progress and leaderboard (spec 2.6, 4.5). */
describe('resource API challenges', () => {
  let t: TestService;
  let cast: Cast;
  let otherCast: Cast;
  const clock = movableClock();

  beforeAll(async () => {
    t = await startService({}, clock.now);
    [cast, otherCast] = await Promise.all([crew(t), crew(t)]);
  });
  afterAll(async () => {
    await t.stop();
  });

  const base = (tribeId: string) => `/v1/communities/${tribeId}/challenges`;
  const create = (tribeId: string, who: Actor, body: Record<string, unknown>) => t.api.post(base(tribeId)).set(bearer(who)).send(body);
  async function newChallenge(tribeId: string, who: Actor, body: Record<string, unknown> = {}) {
    const res = await create(tribeId, who, { title: `Challenge ${unique()}`, duration_days: 7, challenge_type: 'daily', access_type: 'free', ...body });
    if (res.status !== 201) throw new Error(`createChallenge: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data as Record<string, any>;
  }
  const enroll = (tribeId: string, id: string, who: Actor) => t.api.post(`${base(tribeId)}/${id}/enroll`).set(bearer(who));
  const progress = (tribeId: string, id: string, who: Actor) => t.api.get(`${base(tribeId)}/${id}/progress`).set(bearer(who));
  const checkIn = (tribeId: string, id: string, who: Actor, body: Record<string, unknown>) =>
    t.api.post(`${base(tribeId)}/${id}/checkins`).set(bearer(who)).send(body);
  const day = (n: number, extra: Record<string, unknown> = {}) => ({ content: `day ${n} done`, day_number: n, ...extra });
  const leaderboard = (tribeId: string, id: string, who: Actor, query = '') => t.api.get(`${base(tribeId)}/${id}/leaderboard${query}`).set(bearer(who));
  const checkinsOf = (challengeId: string) => countOf(t, sql`select count(*)::int as n from challenge_checkins where challenge_id = ${challengeId}`);
  /** Moves the clock and gives the actors fresh access tokens (they live one hour of the service's clock). */
  async function advance(ms: number, ...who: Actor[]) {
    clock.advance(ms);
    for (const w of who) await refreshToken(t, w);
  }

  describe('POST /v1/communities/:community_id/challenges', () => {
    it('creates a challenge for a moderator with 201 and the record', async () => {
      const s = await staffedTribe(t, cast);
      const res = await create(s.tribe.id, s.moderator, {
        title: '30 days of code',
        description: 'Ship daily',
        duration_days: 30,
        challenge_type: 'daily',
        access_type: 'members_only',
        xp_reward: 300,
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        data: {
          id: expect.stringMatching(UUID),
          community_id: s.tribe.id,
          title: '30 days of code',
          description: 'Ship daily',
          duration_days: 30,
          challenge_type: 'daily',
          access_type: 'members_only',
          price: 0,
          currency: 'BRL',
          xp_reward: 300,
          created_by: s.moderator.id,
          created_at: expect.stringMatching(ISO),
          updated_at: expect.stringMatching(ISO),
        },
      });
    });

    it('takes a price for a paid challenge and stores integer cents', async () => {
      const s = await staffedTribe(t, cast);
      const res = await create(s.tribe.id, s.admin, { title: 'x', duration_days: 5, challenge_type: 'weekly', access_type: 'paid', price: 29.9, currency: 'EUR' });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({ access_type: 'paid', price: 29.9, currency: 'EUR' });
      expect(await sqlRows(t, sql`select price_cents from challenges where id = ${res.body.data.id}`)).toEqual([{ price_cents: 2990 }]);
    });

    it.each(['member', 'outsider'] as const)('refuses a %s with 403 and writes nothing', async (who) => {
      const s = await staffedTribe(t, cast);
      expectError(await create(s.tribe.id, s[who], { title: 'x', duration_days: 5, challenge_type: 'daily', access_type: 'free' }), 403, 'forbidden');
      expect(await countOf(t, sql`select count(*)::int as n from challenges where community_id = ${s.tribe.id}`)).toBe(0);
    });

    it.each([
      ['no title', { duration_days: 5, challenge_type: 'daily', access_type: 'free' }, 'title'],
      ['no duration_days', { title: 'x', challenge_type: 'daily', access_type: 'free' }, 'durationDays'],
      ['duration_days 0', { title: 'x', duration_days: 0, challenge_type: 'daily', access_type: 'free' }, 'durationDays'],
      ['duration_days 366', { title: 'x', duration_days: 366, challenge_type: 'daily', access_type: 'free' }, 'durationDays'],
      ['no challenge_type', { title: 'x', duration_days: 5, access_type: 'free' }, 'challengeType'],
      ['an unknown challenge_type', { title: 'x', duration_days: 5, challenge_type: 'hourly', access_type: 'free' }, 'challengeType'],
      ['no access_type', { title: 'x', duration_days: 5, challenge_type: 'daily' }, 'accessType'],
      ['paid without a price', { title: 'x', duration_days: 5, challenge_type: 'daily', access_type: 'paid' }, 'price'],
      ['a negative xp_reward', { title: 'x', duration_days: 5, challenge_type: 'daily', access_type: 'free', xp_reward: -5 }, 'xpReward'],
    ])('answers 400 invalid_input for %s and writes nothing', async (_name, body, field) => {
      const s = await staffedTribe(t, cast);
      const res = await create(s.tribe.id, s.moderator, body);
      expectError(res, 400, 'invalid_input');
      expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      expect(await countOf(t, sql`select count(*)::int as n from challenges where community_id = ${s.tribe.id}`)).toBe(0);
    });

    it('answers 400 for a fractional duration_days and 404 for an unknown tribe', async () => {
      const s = await staffedTribe(t, cast);
      expectError(await create(s.tribe.id, s.moderator, { title: 'x', duration_days: 2.5, challenge_type: 'daily', access_type: 'free' }), 400, 'invalid_input');
      expectError(await create(UNKNOWN_ID, s.moderator, { title: 'x', duration_days: 2, challenge_type: 'daily', access_type: 'free' }), 404, 'not_found');
    });
  });

  describe('GET /v1/communities/:community_id/challenges and .../challenges/:id', () => {
    it('lists newest first with pagination and answers one challenge with the caller enrollment', async () => {
      const s = await staffedTribe(t, cast);
      const a = await newChallenge(s.tribe.id, s.moderator, { title: 'a' });
      const b = await newChallenge(s.tribe.id, s.moderator, { title: 'b' });
      const list = await t.api.get(`${base(s.tribe.id)}?per_page=1`).set(bearer(s.member));
      expect(list.status).toBe(200);
      expect(list.body).toEqual({ data: [expect.objectContaining({ id: b.id, title: 'b' })], pagination: { page: 1, per_page: 1, has_more: true } });
      await enroll(s.tribe.id, a.id, s.member);
      const one = await t.api.get(`${base(s.tribe.id)}/${a.id}`).set(bearer(s.member));
      expect(one.status).toBe(200);
      expect(one.body.data).toEqual({ ...a, viewer_enrollment: { id: expect.stringMatching(UUID), status: 'active' } });
    });

    it('answers 404 for unknown ids, 403 for outsiders of a private tribe', async () => {
      const s = await staffedTribe(t, cast, { isPublic: false });
      const c = await newChallenge(s.tribe.id, s.moderator);
      expectError(await t.api.get(`${base(s.tribe.id)}/${UNKNOWN_ID}`).set(bearer(s.member)), 404, 'not_found');
      expectError(await t.api.get(`${base(s.tribe.id)}/${c.id}`).set(bearer(s.outsider)), 403, 'forbidden');
      expectError(await t.api.get(base(s.tribe.id)).set(bearer(s.outsider)), 403, 'forbidden');
    });
  });

  describe('POST /v1/communities/:community_id/challenges/:id/enroll', () => {
    it('enrolls a member with 201 status active, then answers 200 with the same enrollment', async () => {
      const s = await staffedTribe(t, cast);
      const c = await newChallenge(s.tribe.id, s.moderator);
      const res = await enroll(s.tribe.id, c.id, s.member);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        data: {
          id: expect.stringMatching(UUID),
          challenge_id: c.id,
          user_id: s.member.id,
          status: 'active',
          started_at: expect.stringMatching(ISO),
          completed_at: null,
        },
      });
      const again = await enroll(s.tribe.id, c.id, s.member);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(res.body);
    });

    it('refuses outsiders with 403 (enrolling needs membership)', async () => {
      const s = await staffedTribe(t, cast);
      const c = await newChallenge(s.tribe.id, s.moderator);
      expectError(await enroll(s.tribe.id, c.id, s.outsider), 403, 'forbidden');
      expect(await countOf(t, sql`select count(*)::int as n from challenge_enrollments where challenge_id = ${c.id}`)).toBe(0);
    });

    it('answers 202 with the same pending order until paid, then enrolls the buyer with day 1 opening at payment', async () => {
      const s = await staffedTribe(t, cast);
      const c = await newChallenge(s.tribe.id, s.moderator, { access_type: 'paid', price: 15, duration_days: 3 });
      const first = await enroll(s.tribe.id, c.id, s.member);
      expect(first.status).toBe(202);
      expect(first.body.data).toEqual({
        status: 'pending_payment',
        order: { id: expect.stringMatching(UUID), amount: 15, amount_cents: 1500, currency: 'BRL', status: 'pending', checkout: { provider: 'manual' } },
      });
      const second = await enroll(s.tribe.id, c.id, s.member);
      expect(second.status).toBe(202);
      expect(second.body.data.order.id).toBe(first.body.data.order.id);
      expectError(await checkIn(s.tribe.id, c.id, s.member, day(1)), 403, 'not_enrolled');
      expect((await markPaid(t, s.owner, first.body.data.order.id)).data.markOrderPaid.status).toBe('paid');
      const enrolled = await enroll(s.tribe.id, c.id, s.member);
      expect(enrolled.status).toBe(200);
      expect(enrolled.body.data).toMatchObject({ status: 'active', user_id: s.member.id });
      const paidAt = (await sqlRows(t, sql`select paid_at from orders where id = ${first.body.data.order.id}`))[0].paid_at;
      expect(new Date(enrolled.body.data.started_at).getTime()).toBe(new Date(paidAt).getTime());
      expect((await checkIn(s.tribe.id, c.id, s.member, day(1))).status).toBe(201);
      expect((await eventsOf(t, s.tribe.id, 'order.paid')).map((e) => e.data.productType)).toEqual(['challenge']);
    });
  });

  describe('POST /v1/communities/:community_id/challenges/:id/checkins', () => {
    it('records a check-in with 201, awards 10 XP once, and answers the progress', async () => {
      const s = await staffedTribe(t, cast);
      const c = await newChallenge(s.tribe.id, s.moderator, { duration_days: 10 });
      const enrolled = await enroll(s.tribe.id, c.id, s.member);
      const res = await checkIn(s.tribe.id, c.id, s.member, { content: '  Ran 5k  ', day_number: 1, tags: ['run', 'run', 'health'] });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        data: {
          id: expect.stringMatching(UUID),
          challenge_id: c.id,
          user_id: s.member.id,
          day_number: 1,
          content: 'Ran 5k',
          tags: ['run', 'health'],
          xp_awarded: 10,
          created_at: expect.stringMatching(ISO),
          progress: {
            challenge_id: c.id,
            enrollment_id: enrolled.body.data.id,
            status: 'active',
            total_days: 10,
            completed_days: 1,
            progress_percent: 10,
            current_streak: 1,
            last_checkin_at: res.body.data.created_at,
            current_day: 1,
            xp_earned: 10,
          },
        },
      });
      expect(await memberXp(t, s.tribe.id, s.member.id)).toEqual({ xp: 10, level: 1 });
      expect(await xpAwards(t, s.tribe.id, s.member.id, 'challenge.checkin')).toEqual([{ amount: 10, source_key: `challenge.checkin:${res.body.data.id}` }]);
    });

    it('refuses a second check-in for the same day with 409 already_checked_in, writing nothing', async () => {
      const s = await staffedTribe(t, cast);
      const c = await newChallenge(s.tribe.id, s.moderator);
      await enroll(s.tribe.id, c.id, s.member);
      expect((await checkIn(s.tribe.id, c.id, s.member, day(1))).status).toBe(201);
      expectError(await checkIn(s.tribe.id, c.id, s.member, day(1, { content: 'again' })), 409, 'already_checked_in');
      const racing = await Promise.all([1, 2, 3].map(() => checkIn(s.tribe.id, c.id, s.member2, day(1))));
      expect(racing.map((r) => r.status)).toEqual([403, 403, 403]);
      await enroll(s.tribe.id, c.id, s.member2);
      const raced = await Promise.all([1, 2, 3].map(() => checkIn(s.tribe.id, c.id, s.member2, day(1))));
      expect(raced.map((r) => r.status).sort()).toEqual([201, 409, 409]);
      expect(await checkinsOf(c.id)).toBe(2);
      expect(await memberXp(t, s.tribe.id, s.member.id)).toEqual({ xp: 10, level: 1 });
      expect(await memberXp(t, s.tribe.id, s.member2.id)).toEqual({ xp: 10, level: 1 });
    });

    it('refuses a future day with 400 day_not_open', async () => {
      const s = await staffedTribe(t, cast);
      const c = await newChallenge(s.tribe.id, s.moderator);
      await enroll(s.tribe.id, c.id, s.member);
      expectError(await checkIn(s.tribe.id, c.id, s.member, day(2)), 400, 'day_not_open');
      expect(await checkinsOf(c.id)).toBe(0);
    });

    it.each([
      ['day_number 0', day(0), 'day_number'],
      ['day_number above duration_days', day(8), 'day_number'],
      ['no day_number', { content: 'x' }, 'dayNumber'],
      ['no content', { day_number: 1 }, 'content'],
      ['blank content', { content: '   ', day_number: 1 }, 'content'],
      ['11 tags', day(1, { tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }), 'tags'],
      ['a tag longer than 32 characters', day(1, { tags: ['x'.repeat(33)] }), 'tags.0'],
      ['an empty tag', day(1, { tags: [' '] }), 'tags.0'],
    ])('answers 400 invalid_input for %s, writing nothing', async (_name, body, field) => {
      const s = await staffedTribe(t, cast);
      const c = await newChallenge(s.tribe.id, s.moderator, { duration_days: 7 });
      await enroll(s.tribe.id, c.id, s.member);
      const res = await checkIn(s.tribe.id, c.id, s.member, body);
      expectError(res, 400, 'invalid_input');
      expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      expect(await checkinsOf(c.id)).toBe(0);
    });

    it('answers 400 for tags that are not an array or a fractional day_number', async () => {
      const s = await staffedTribe(t, cast);
      const c = await newChallenge(s.tribe.id, s.moderator);
      await enroll(s.tribe.id, c.id, s.member);
      expectError(await checkIn(s.tribe.id, c.id, s.member, day(1, { tags: 'run' })), 400, 'invalid_input');
      expectError(await checkIn(s.tribe.id, c.id, s.member, day(1.5)), 400, 'invalid_input');
      expect(await checkinsOf(c.id)).toBe(0);
    });

    it('answers 403 not_enrolled without an enrollment', async () => {
      const s = await staffedTribe(t, cast);
      const c = await newChallenge(s.tribe.id, s.moderator);
      expectError(await checkIn(s.tribe.id, c.id, s.member, day(1)), 403, 'not_enrolled');
      expectError(await progress(s.tribe.id, c.id, s.member), 403, 'not_enrolled');
    });
  });

  describe('check-in window and streaks across days (injectable clock)', () => {
    it('opens day 2 exactly 24 hours after enrolling', async () => {
      const s = await staffedTribe(t, cast);
      const c = await newChallenge(s.tribe.id, s.moderator);
      await enroll(s.tribe.id, c.id, s.member);
      await advance(24 * HOUR - 60_000, s.member);
      expectError(await checkIn(s.tribe.id, c.id, s.member, day(2)), 400, 'day_not_open');
      await advance(60_000, s.member);
      expect((await checkIn(s.tribe.id, c.id, s.member, day(2))).status).toBe(201);
    });

    it('counts consecutive days, drops to 0 after a missed day, and restarts; back-filled days join the run', async () => {
      const s = await staffedTribe(t, cast);
      await Promise.all([s.moderator, s.member].map((w) => refreshToken(t, w)));
      const c = await newChallenge(s.tribe.id, s.moderator, { duration_days: 5, xp_reward: 100 });
      await enroll(s.tribe.id, c.id, s.member);
      const streak = async () => (await progress(s.tribe.id, c.id, s.member)).body.data;

      expect((await checkIn(s.tribe.id, c.id, s.member, day(1))).body.data.progress.current_streak).toBe(1);
      await advance(24 * HOUR, s.member); // day 2
      expect(await streak()).toMatchObject({ current_day: 2, current_streak: 1 }); // yesterday counts while today is open
      expect((await checkIn(s.tribe.id, c.id, s.member, day(2))).body.data.progress.current_streak).toBe(2);
      await advance(48 * HOUR, s.member); // day 4: day 3 was missed
      expect(await streak()).toMatchObject({ current_day: 4, current_streak: 0, completed_days: 2 });
      expect((await checkIn(s.tribe.id, c.id, s.member, day(4))).body.data.progress).toMatchObject({ current_streak: 1, completed_days: 3 });
      const backfill = await checkIn(s.tribe.id, c.id, s.member, day(3));
      expect(backfill.status).toBe(201);
      expect(backfill.body.data.progress).toMatchObject({ current_streak: 4, completed_days: 4, progress_percent: 80, status: 'active' });
      await advance(24 * HOUR, s.member); // day 5, the last
      const last = await checkIn(s.tribe.id, c.id, s.member, day(5));
      expect(last.body.data.progress).toMatchObject({ status: 'completed', completed_days: 5, progress_percent: 100, current_streak: 5, xp_earned: 150 });
      await advance(10 * 24 * HOUR, s.member); // long after the end: the streak stays as it ended
      expect(await streak()).toMatchObject({ current_day: 15, current_streak: 5, status: 'completed' });
      expect(await memberXp(t, s.tribe.id, s.member.id)).toEqual({ xp: 150, level: 2 });
      expect(await xpAwards(t, s.tribe.id, s.member.id, 'challenge.completed')).toEqual([{ amount: 100, source_key: expect.stringMatching(/^challenge\.completed:/) }]);
      expectError(await checkIn(s.tribe.id, c.id, s.member, day(5)), 409, 'already_checked_in');
    });
  });

  describe('GET /v1/communities/:community_id/challenges/:id/leaderboard', () => {
    it('ranks by completed days, then XP earned, with display names and pages', async () => {
      const s = await staffedTribe(t, cast);
      await Promise.all([s.owner, s.admin, s.moderator, s.member, s.member2].map((w) => refreshToken(t, w)));
      const c = await newChallenge(s.tribe.id, s.moderator, { duration_days: 10 });
      const people = [s.member, s.member2, s.admin, s.owner];
      for (const p of people) await enroll(s.tribe.id, c.id, p);
      await advance(3 * 24 * HOUR, ...people, s.moderator);
      const days = new Map([[s.member.id, 1], [s.member2.id, 3], [s.admin.id, 2], [s.owner.id, 2]]);
      for (const p of people) for (let d = 1; d <= days.get(p.id)!; d += 1) expect((await checkIn(s.tribe.id, c.id, p, day(d))).status).toBe(201);
      // The owner earned more XP in the challenge than the admin with the same completed days.
      await t.deps.database.db.execute(sql`update challenge_enrollments set xp_earned = xp_earned + 5 where challenge_id = ${c.id} and user_id = ${s.owner.id}`);

      const res = await leaderboard(s.tribe.id, c.id, s.member, '?per_page=3');
      expect(res.status).toBe(200);
      expect(res.body.pagination).toEqual({ page: 1, per_page: 3, has_more: true });
      const names = await sqlRows(t, sql`select id, username, display_name from users where id in (${s.member2.id}, ${s.owner.id}, ${s.admin.id})`);
      const nameOf = (id: string) => names.find((n) => n.id === id)!;
      expect(res.body.data).toEqual([
        { rank: 1, user_id: s.member2.id, username: nameOf(s.member2.id).username, display_name: nameOf(s.member2.id).display_name, completed_days: 3, current_streak: 3, xp_earned: 30, last_checkin_at: expect.stringMatching(ISO) },
        { rank: 2, user_id: s.owner.id, username: nameOf(s.owner.id).username, display_name: nameOf(s.owner.id).display_name, completed_days: 2, current_streak: 0, xp_earned: 25, last_checkin_at: expect.stringMatching(ISO) },
        { rank: 3, user_id: s.admin.id, username: nameOf(s.admin.id).username, display_name: nameOf(s.admin.id).display_name, completed_days: 2, current_streak: 0, xp_earned: 20, last_checkin_at: expect.stringMatching(ISO) },
      ]);
      const next = await leaderboard(s.tribe.id, c.id, s.member, '?per_page=3&page=2');
      expect(next.body.data).toEqual([expect.objectContaining({ rank: 4, user_id: s.member.id, completed_days: 1, current_streak: 0 })]);
      expect(next.body.pagination).toEqual({ page: 2, per_page: 3, has_more: false });
    });

    it('shows an empty board as [] and hides a members_only board from outsiders (403)', async () => {
      const s = await staffedTribe(t, cast);
      await Promise.all([s.moderator, s.member, s.outsider].map((w) => refreshToken(t, w)));
      const open = await newChallenge(s.tribe.id, s.moderator);
      expect((await leaderboard(s.tribe.id, open.id, s.outsider)).body).toEqual({ data: [], pagination: { page: 1, per_page: 20, has_more: false } });
      const closed = await newChallenge(s.tribe.id, s.moderator, { access_type: 'members_only' });
      expectError(await leaderboard(s.tribe.id, closed.id, s.outsider), 403, 'forbidden');
      expect((await leaderboard(s.tribe.id, closed.id, s.member)).status).toBe(200);
      expectError(await leaderboard(s.tribe.id, open.id, s.member, '?per_page=-1'), 400, 'invalid_query');
    });
  });

  describe('tribe isolation', () => {
    it('answers 404 on every challenge route for a challenge of another tribe, writing nothing', async () => {
      const mine = await staffedTribe(t, cast);
      const theirs = await staffedTribe(t, otherCast);
      await Promise.all([mine.owner, theirs.moderator, theirs.member].map((w) => refreshToken(t, w)));
      const c = await newChallenge(theirs.tribe.id, theirs.moderator);
      await enroll(theirs.tribe.id, c.id, theirs.member);
      const path = `${base(mine.tribe.id)}/${c.id}`;
      for (const who of [mine.owner, theirs.member]) {
        const answers = [
          await t.api.get(path).set(bearer(who)),
          await t.api.post(`${path}/enroll`).set(bearer(who)),
          await t.api.get(`${path}/progress`).set(bearer(who)),
          await t.api.post(`${path}/checkins`).set(bearer(who)).send(day(1)),
          await t.api.get(`${path}/leaderboard`).set(bearer(who)),
        ];
        for (const res of answers) expectError(res, 404, 'not_found');
      }
      expect(await checkinsOf(c.id)).toBe(0);
      expect(await countOf(t, sql`select count(*)::int as n from challenge_enrollments where challenge_id = ${c.id}`)).toBe(1);
    });
  });

  describe('GraphQL', () => {
    it('serves challenges, check-ins and the leaderboard through the same service', async () => {
      const s = await staffedTribe(t, cast);
      const created = await gql(t, s.moderator, 'mutation($c: ID!){ createChallenge(communityId: $c, input: {title: "g", durationDays: 2, challengeType: "custom", accessType: "free", xpReward: 5}){ id } }', {
        c: s.tribe.id,
      });
      const id = created.data.createChallenge.id;
      expect((await gql(t, s.member, 'mutation($c: ID!){ enrollChallenge(challengeId: $c){ status created } }', { c: id })).data.enrollChallenge).toEqual({ status: 'active', created: true });
      const checked = await gql(t, s.member, 'mutation($c: ID!){ checkIn(challengeId: $c, input: {content: "ok", dayNumber: 1}){ checkin { dayNumber } progress { currentStreak } } }', { c: id });
      expect(checked.data.checkIn).toEqual({ checkin: { dayNumber: 1 }, progress: { currentStreak: 1 } });
      const board = await gql(t, null, 'query($c: ID!){ challengeLeaderboard(challengeId: $c){ items { rank user { id } completedDays } } }', { c: id });
      expect(board.data.challengeLeaderboard.items).toEqual([{ rank: 1, user: { id: s.member.id }, completedDays: 1 }]);
      const repeat = await gql(t, s.member, 'mutation($c: ID!){ checkIn(challengeId: $c, input: {content: "ok", dayNumber: 1}){ checkin { id } } }', { c: id });
      expect(repeat.errors?.[0].extensions).toMatchObject({ reason: 'already_checked_in', status: 409 });
    });
  });
});
