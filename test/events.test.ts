import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { actor, crew, join, staffedTribe, unique, UNKNOWN_ID, type Actor, type Cast } from './factory.js';
import { bearer, countOf, eventsOf, gql, movableClock, sqlRows, startService, type TestService } from './support.js';
import { expectError, ISO, UUID } from './expected.js';

const TICKET = /^[A-Za-z0-9_-]{22}$/;
const HOUR = 3_600_000;

/** Token-authenticated resource API: tribe events, registration and check-in (spec 2.6, States "Other", 4.5). */
describe('resource API events', () => {
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

  /** An ISO 8601 instant `hours` from the service clock's now. */
  const at = (hours: number) => new Date(clock.now().getTime() + hours * HOUR).toISOString();
  const base = (tribeId: string) => `/v1/communities/${tribeId}/events`;
  const create = (tribeId: string, who: Actor, body: unknown) => t.api.post(base(tribeId)).set(bearer(who)).send(body as object);
  async function newEvent(tribeId: string, who: Actor, body: Record<string, unknown> = {}) {
    const res = await create(tribeId, who, { title: `Event ${unique()}`, event_type: 'online', starts_at: at(24), ends_at: at(25), ...body });
    if (res.status !== 201) throw new Error(`createEvent: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data as Record<string, any>;
  }
  const register = (tribeId: string, eventId: string, who: Actor) => t.api.post(`${base(tribeId)}/${eventId}/register`).set(bearer(who));
  const checkin = (tribeId: string, eventId: string, who: Actor, body: unknown) =>
    t.api.post(`${base(tribeId)}/${eventId}/checkin`).set(bearer(who)).send(body as object);
  const eventsIn = (tribeId: string) => countOf(t, sql`select count(*)::int as n from tribe_events where community_id = ${tribeId}`);
  const registrationsOf = (eventId: string) =>
    sqlRows(
      t,
      sql`select id, user_id, status, ticket_code, order_id, to_char(checked_in_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as checked_in_at,
                 checked_in_by from event_registrations where event_id = ${eventId} order by created_at, id`,
    );

  describe('POST /v1/communities/:community_id/events', () => {
    it('creates an event for a moderator with 201, the event record, the row and event.created in the outbox', async () => {
      const s = await staffedTribe(t, cast);
      const startsAt = at(48);
      const endsAt = at(50);
      const res = await create(s.tribe.id, s.moderator, {
        title: '  Live Q&A  ',
        description: 'Ask anything',
        event_type: 'in_person',
        location: 'Av. Paulista 1000',
        starts_at: startsAt,
        ends_at: endsAt,
        max_attendees: 30,
        price: 0,
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        data: {
          id: expect.stringMatching(UUID),
          community_id: s.tribe.id,
          title: 'Live Q&A',
          description: 'Ask anything',
          event_type: 'in_person',
          location: 'Av. Paulista 1000',
          starts_at: startsAt,
          ends_at: endsAt,
          max_attendees: 30,
          price: 0,
          currency: 'BRL',
          registered_count: 0,
          spots_left: 30,
          created_by: s.moderator.id,
          created_at: expect.stringMatching(ISO),
          updated_at: expect.stringMatching(ISO),
          viewer_registration: null,
        },
      });
      const id = res.body.data.id;
      expect(await sqlRows(t, sql`select title, event_type, max_attendees, price_cents, currency, created_by from tribe_events where id = ${id}`)).toEqual([
        { title: 'Live Q&A', event_type: 'in_person', max_attendees: 30, price_cents: 0, currency: 'BRL', created_by: s.moderator.id },
      ]);
      expect(await eventsOf(t, s.tribe.id, 'event.created')).toEqual([{ data: { eventId: id, handle: s.tribe.handle } }]);
    });

    it.each(['owner', 'admin'] as const)('lets the %s create an event too', async (role) => {
      const s = await staffedTribe(t, cast);
      const event = await newEvent(s.tribe.id, s[role]);
      expect(event.created_by).toBe(s[role].id);
    });

    it('stores the price in integer cents, upper-cases the currency, and treats an omitted max_attendees as unlimited', async () => {
      const s = await staffedTribe(t, cast);
      const event = await newEvent(s.tribe.id, s.owner, { price: 49.9, currency: 'usd' });
      expect(event).toMatchObject({ price: 49.9, currency: 'USD', max_attendees: null, spots_left: null, registered_count: 0 });
      expect(await sqlRows(t, sql`select price_cents, currency, max_attendees from tribe_events where id = ${event.id}`)).toEqual([
        { price_cents: 4990, currency: 'USD', max_attendees: null },
      ]);
    });

    it('accepts a time zone offset and answers the instant in UTC', async () => {
      const s = await staffedTribe(t, cast);
      const event = await newEvent(s.tribe.id, s.owner, { starts_at: '2031-03-01T18:00:00-03:00', ends_at: '2031-03-01T20:30:00-03:00' });
      expect(event).toMatchObject({ starts_at: '2031-03-01T21:00:00.000Z', ends_at: '2031-03-01T23:30:00.000Z' });
    });

    it.each<[string, 'member' | 'outsider']>([
      ['a plain member', 'member'],
      ['a signed-in outsider', 'outsider'],
    ])('refuses %s with 403 and writes nothing', async (_label, role) => {
      const s = await staffedTribe(t, cast);
      const res = await create(s.tribe.id, s[role], { title: 'Nope', event_type: 'online', starts_at: at(1), ends_at: at(2) });
      expectError(res, 403, 'forbidden');
      expect(await eventsIn(s.tribe.id)).toBe(0);
      expect(await eventsOf(t, s.tribe.id, 'event.created')).toEqual([]);
    });

    it('answers 401 without an access token', async () => {
      const s = await staffedTribe(t, cast);
      const res = await t.api.post(base(s.tribe.id)).send({ title: 'x', event_type: 'online', starts_at: at(1), ends_at: at(2) });
      expectError(res, 401, 'unauthorized');
      expect(await eventsIn(s.tribe.id)).toBe(0);
    });

    it('refuses staff of another tribe (403) and an unknown tribe (404)', async () => {
      const s = await staffedTribe(t, cast);
      const other = await staffedTribe(t, otherCast);
      expectError(await create(s.tribe.id, other.owner, { title: 'x', event_type: 'online', starts_at: at(1), ends_at: at(2) }), 403, 'forbidden');
      expectError(await create(UNKNOWN_ID, s.owner, { title: 'x', event_type: 'online', starts_at: at(1), ends_at: at(2) }), 404, 'not_found');
      expect(await eventsIn(s.tribe.id)).toBe(0);
    });

    const valid = () => ({ title: 'Valid', event_type: 'online', starts_at: '2031-05-01T18:00:00Z', ends_at: '2031-05-01T19:00:00Z' });
    it.each<[string, Record<string, unknown>, string]>([
      ['no title', { title: undefined }, 'title'],
      ['a blank title', { title: '   ' }, 'title'],
      ['a title over 200 characters', { title: 'x'.repeat(201) }, 'title'],
      ['no event_type', { event_type: undefined }, 'event_type'],
      ['an unknown event_type', { event_type: 'hybrid' }, 'event_type'],
      ['no starts_at', { starts_at: undefined }, 'starts_at'],
      ['no ends_at', { ends_at: undefined }, 'ends_at'],
      ['a starts_at without a time zone', { starts_at: '2031-05-01T18:00:00' }, 'starts_at'],
      ['a starts_at that is not ISO 8601', { starts_at: 'May 1, 2031 6pm' }, 'starts_at'],
      ['an impossible date', { starts_at: '2031-02-30T18:00:00Z' }, 'starts_at'],
      ['ends_at before starts_at', { ends_at: '2031-05-01T17:00:00Z' }, 'ends_at'],
      ['ends_at equal to starts_at', { ends_at: '2031-05-01T18:00:00Z' }, 'ends_at'],
      ['max_attendees 0', { max_attendees: 0 }, 'max_attendees'],
      ['a negative max_attendees', { max_attendees: -3 }, 'max_attendees'],
      ['a fractional max_attendees', { max_attendees: 2.5 }, 'max_attendees'],
      ['max_attendees as a string', { max_attendees: '10' }, 'max_attendees'],
      ['a negative price', { price: -1 }, 'price'],
      ['a price with 3 decimals', { price: 10.005 }, 'price'],
      ['an unknown currency', { currency: 'ABC' }, 'currency'],
      ['starts_at as a number', { starts_at: 1893456000 }, 'starts_at'],
    ])('answers 400 invalid_input for %s and writes nothing', async (_label, patch, field) => {
      const s = await staffedTribe(t, cast);
      const res = await create(s.tribe.id, s.owner, { ...valid(), ...patch });
      expectError(res, 400, 'invalid_input');
      expect(JSON.stringify(res.body.error)).toContain(field.split('_')[0]);
      expect(await eventsIn(s.tribe.id)).toBe(0);
      expect(await eventsOf(t, s.tribe.id, 'event.created')).toEqual([]);
    });

    it('answers 400 for a body that is not a JSON object, and 415 for a body that is not JSON', async () => {
      const s = await staffedTribe(t, cast);
      expectError(await create(s.tribe.id, s.owner, [valid()]), 400, 'invalid_input');
      const text = await t.api.post(base(s.tribe.id)).set(bearer(s.owner)).set('content-type', 'text/plain').send('title=x');
      expectError(text, 415, 'unsupported_media_type');
      expect(await eventsIn(s.tribe.id)).toBe(0);
    });
  });

  describe('GET /v1/communities/:community_id/events', () => {
    /** A tribe with one past, one ongoing and two upcoming events (by the service clock). */
    async function calendar() {
      const s = await staffedTribe(t, cast);
      const past = await newEvent(s.tribe.id, s.owner, { title: 'past', starts_at: at(-5), ends_at: at(-4) });
      const ongoing = await newEvent(s.tribe.id, s.owner, { title: 'ongoing', starts_at: at(-1), ends_at: at(1) });
      const later = await newEvent(s.tribe.id, s.owner, { title: 'later', starts_at: at(72), ends_at: at(73) });
      const soon = await newEvent(s.tribe.id, s.owner, { title: 'soon', starts_at: at(2), ends_at: at(3) });
      return { s, past, ongoing, later, soon };
    }
    const list = (tribeId: string, who: Actor, query = '') => t.api.get(`${base(tribeId)}${query}`).set(bearer(who));
    const titles = (res: { body: any }) => res.body.data.map((e: any) => e.title);

    it('lists events not yet ended by default, soonest first, an ongoing event included', async () => {
      const { s } = await calendar();
      const res = await list(s.tribe.id, s.member);
      expect(res.status).toBe(200);
      expect(titles(res)).toEqual(['ongoing', 'soon', 'later']);
      expect(res.body.pagination).toEqual({ page: 1, per_page: 20, has_more: false });
      expect(titles(await list(s.tribe.id, s.member, '?status=upcoming'))).toEqual(['ongoing', 'soon', 'later']);
    });

    it('lists ended events with status=past, latest first, and every event with status=all, latest start first', async () => {
      const { s } = await calendar();
      const older = await newEvent(s.tribe.id, s.owner, { title: 'older', starts_at: at(-30), ends_at: at(-29) });
      expect(older.title).toBe('older');
      expect(titles(await list(s.tribe.id, s.member, '?status=past'))).toEqual(['past', 'older']);
      expect(titles(await list(s.tribe.id, s.member, '?status=all'))).toEqual(['later', 'soon', 'ongoing', 'past', 'older']);
    });

    it('moves an event from upcoming to past when the clock passes its end', async () => {
      const s = await staffedTribe(t, cast);
      await newEvent(s.tribe.id, s.owner, { title: 'short', starts_at: at(0.1), ends_at: at(0.2) });
      expect(titles(await list(s.tribe.id, s.member, '?status=upcoming'))).toEqual(['short']);
      // Half an hour on (access tokens live an hour on the same clock).
      clock.advance(HOUR / 2);
      try {
        expect(titles(await list(s.tribe.id, s.member, '?status=upcoming'))).toEqual([]);
        expect(titles(await list(s.tribe.id, s.member, '?status=past'))).toEqual(['short']);
      } finally {
        clock.advance(-HOUR / 2);
      }
    });

    it('pages with page and per_page (at most 50) and says when more follow', async () => {
      const { s } = await calendar();
      const first = await list(s.tribe.id, s.member, '?status=all&per_page=3');
      expect(titles(first)).toEqual(['later', 'soon', 'ongoing']);
      expect(first.body.pagination).toEqual({ page: 1, per_page: 3, has_more: true });
      const second = await list(s.tribe.id, s.member, '?status=all&per_page=3&page=2');
      expect(titles(second)).toEqual(['past']);
      expect(second.body.pagination).toEqual({ page: 2, per_page: 3, has_more: false });
      expect((await list(s.tribe.id, s.member, '?per_page=500')).body.pagination).toEqual({ page: 1, per_page: 50, has_more: false });
      expect((await list(s.tribe.id, s.member, '?status=all&page=9')).body).toEqual({ data: [], pagination: { page: 9, per_page: 20, has_more: false } });
    });

    it.each([
      ['an unknown status', '?status=soon'],
      ['per_page 0', '?per_page=0'],
      ['a page that is not a number', '?page=two'],
      ['status given twice', '?status=past&status=all'],
    ])('answers 400 invalid_query for %s', async (_label, query) => {
      const s = await staffedTribe(t, cast);
      expectError(await list(s.tribe.id, s.member, query), 400, 'invalid_query');
    });

    it("never lists another tribe's events", async () => {
      const { s } = await calendar();
      const other = await staffedTribe(t, otherCast);
      await newEvent(other.tribe.id, other.owner, { title: 'elsewhere' });
      expect(titles(await list(s.tribe.id, s.member, '?status=all'))).not.toContain('elsewhere');
      expect(titles(await list(other.tribe.id, other.member, '?status=all'))).toEqual(['elsewhere']);
    });

    it('shows a private tribe\'s events to members only (403 for an outsider)', async () => {
      const s = await staffedTribe(t, cast, { isPublic: false });
      await newEvent(s.tribe.id, s.owner);
      expect((await list(s.tribe.id, s.member)).body.data).toHaveLength(1);
      expectError(await list(s.tribe.id, s.outsider), 403, 'forbidden');
    });
  });

  describe('GET /v1/communities/:community_id/events/:id', () => {
    it('answers the event with registered_count, spots_left and the caller\'s own registration', async () => {
      const s = await staffedTribe(t, cast);
      const event = await newEvent(s.tribe.id, s.owner, { max_attendees: 3 });
      const reg = (await register(s.tribe.id, event.id, s.member)).body.data;
      const mine = await t.api.get(`${base(s.tribe.id)}/${event.id}`).set(bearer(s.member));
      expect(mine.status).toBe(200);
      expect(mine.body.data).toEqual({ ...event, registered_count: 1, spots_left: 2, viewer_registration: reg });
      const theirs = await t.api.get(`${base(s.tribe.id)}/${event.id}`).set(bearer(s.member2));
      expect(theirs.body.data).toMatchObject({ registered_count: 1, spots_left: 2, viewer_registration: null });
    });

    it('answers 404 for an unknown id, an id that is not a UUID, and an event of another tribe', async () => {
      const s = await staffedTribe(t, cast);
      const other = await staffedTribe(t, otherCast);
      const foreign = await newEvent(other.tribe.id, other.owner);
      expectError(await t.api.get(`${base(s.tribe.id)}/${UNKNOWN_ID}`).set(bearer(s.member)), 404, 'not_found');
      expectError(await t.api.get(`${base(s.tribe.id)}/not-a-uuid`).set(bearer(s.member)), 404, 'not_found');
      expectError(await t.api.get(`${base(s.tribe.id)}/${foreign.id}`).set(bearer(s.owner)), 404, 'not_found');
    });
  });

  describe('POST /v1/communities/:community_id/events/:id/register', () => {
    it('registers a member with 201 and a ticket, then answers the same registration with 200', async () => {
      const s = await staffedTribe(t, cast);
      const event = await newEvent(s.tribe.id, s.owner);
      const first = await register(s.tribe.id, event.id, s.member);
      expect(first.status).toBe(201);
      expect(first.body).toEqual({
        data: {
          id: expect.stringMatching(UUID),
          event_id: event.id,
          user_id: s.member.id,
          status: 'confirmed',
          ticket_code: expect.stringMatching(TICKET),
          order_id: null,
          created_at: expect.stringMatching(ISO),
          checked_in_at: null,
        },
      });
      const again = await register(s.tribe.id, event.id, s.member);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
      expect(await registrationsOf(event.id)).toEqual([
        expect.objectContaining({ id: first.body.data.id, user_id: s.member.id, status: 'confirmed', ticket_code: first.body.data.ticket_code }),
      ]);
    });

    it('gives every registration its own ticket code', async () => {
      const s = await staffedTribe(t, cast);
      const event = await newEvent(s.tribe.id, s.owner);
      const codes = [];
      for (const who of [s.owner, s.admin, s.moderator, s.member, s.member2]) codes.push((await register(s.tribe.id, event.id, who)).body.data.ticket_code);
      expect(new Set(codes).size).toBe(5);
    });

    it('answers 409 event_full when every seat is taken, and writes nothing', async () => {
      const s = await staffedTribe(t, cast);
      const event = await newEvent(s.tribe.id, s.owner, { max_attendees: 1 });
      expect((await register(s.tribe.id, event.id, s.member)).status).toBe(201);
      expectError(await register(s.tribe.id, event.id, s.member2), 409, 'event_full');
      expect(await registrationsOf(event.id)).toHaveLength(1);
      // The holder of the seat still gets their registration back.
      expect((await register(s.tribe.id, event.id, s.member)).status).toBe(200);
    });

    it('answers 409 event_ended once the event is over', async () => {
      const s = await staffedTribe(t, cast);
      const event = await newEvent(s.tribe.id, s.owner, { starts_at: at(-3), ends_at: at(-2) });
      expectError(await register(s.tribe.id, event.id, s.member), 409, 'event_ended');
      expect(await registrationsOf(event.id)).toEqual([]);
    });

    it('refuses a signed-in user who is not a member (403) and writes nothing', async () => {
      const s = await staffedTribe(t, cast);
      const event = await newEvent(s.tribe.id, s.owner);
      expectError(await register(s.tribe.id, event.id, s.outsider), 403, 'forbidden');
      expect(await registrationsOf(event.id)).toEqual([]);
    });

    it('never exceeds max_attendees when 20 members race for 5 seats', async () => {
      const s = await staffedTribe(t, cast);
      const event = await newEvent(s.tribe.id, s.owner, { max_attendees: 5 });
      const racers = await Promise.all(Array.from({ length: 20 }, () => actor(t)));
      for (const r of racers) await join(t, r, s.tribe.handle);
      const results = await Promise.all(racers.map((r) => register(s.tribe.id, event.id, r)));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([...Array(5).fill(201), ...Array(15).fill(409)]);
      for (const r of results.filter((x) => x.status === 409)) expectError(r, 409, 'event_full');
      expect(await registrationsOf(event.id)).toHaveLength(5);
      const after = await t.api.get(`${base(s.tribe.id)}/${event.id}`).set(bearer(s.owner));
      expect(after.body.data).toMatchObject({ registered_count: 5, spots_left: 0 });
    });

    it('creates one registration when the same member registers 5 times at once', async () => {
      const s = await staffedTribe(t, cast);
      const event = await newEvent(s.tribe.id, s.owner, { max_attendees: 10 });
      const results = await Promise.all(Array.from({ length: 5 }, () => register(s.tribe.id, event.id, s.member)));
      expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 201]);
      expect(new Set(results.map((r) => r.body.data.id)).size).toBe(1);
      expect(await registrationsOf(event.id)).toHaveLength(1);
    });
  });

  describe('POST /v1/communities/:community_id/events/:id/checkin', () => {
    async function ticketed() {
      const s = await staffedTribe(t, cast);
      const event = await newEvent(s.tribe.id, s.owner);
      const reg = (await register(s.tribe.id, event.id, s.member)).body.data;
      return { s, event, reg };
    }

    it.each(['owner', 'admin', 'moderator'] as const)('checks a ticket in once for the %s (200, checked_in_at set)', async (role) => {
      const { s, event, reg } = await ticketed();
      const res = await checkin(s.tribe.id, event.id, s[role], { ticket_code: reg.ticket_code });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: { ...reg, checked_in_at: expect.stringMatching(ISO) } });
      expect(await registrationsOf(event.id)).toEqual([
        expect.objectContaining({ checked_in_at: res.body.data.checked_in_at, checked_in_by: s[role].id }),
      ]);
    });

    it('answers 400 already_checked_in on a repeat and keeps the first check-in time', async () => {
      const { s, event, reg } = await ticketed();
      const first = await checkin(s.tribe.id, event.id, s.owner, { ticket_code: reg.ticket_code });
      const repeat = await checkin(s.tribe.id, event.id, s.moderator, { ticket_code: reg.ticket_code });
      expectError(repeat, 400, 'already_checked_in');
      const [row] = await registrationsOf(event.id);
      expect(row.checked_in_at).toBe(first.body.data.checked_in_at);
      expect(row.checked_in_by).toBe(s.owner.id);
    });

    it('lets exactly one of two simultaneous check-ins of a ticket succeed', async () => {
      const { s, event, reg } = await ticketed();
      const results = await Promise.all([s.owner, s.admin, s.moderator].map((who) => checkin(s.tribe.id, event.id, who, { ticket_code: reg.ticket_code })));
      expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400]);
    });

    it('answers 404 for a ticket of another event (same tribe) and checks nothing in', async () => {
      const { s, reg } = await ticketed();
      const otherEvent = await newEvent(s.tribe.id, s.owner);
      expectError(await checkin(s.tribe.id, otherEvent.id, s.owner, { ticket_code: reg.ticket_code }), 404, 'not_found');
      expect((await registrationsOf(reg.event_id))[0].checked_in_at).toBeNull();
    });

    it('answers 404 for an unknown ticket', async () => {
      const { s, event } = await ticketed();
      expectError(await checkin(s.tribe.id, event.id, s.owner, { ticket_code: 'AAAAAAAAAAAAAAAAAAAAAA' }), 404, 'not_found');
    });

    it.each<[string, unknown]>([
      ['no ticket_code', {}],
      ['an empty ticket_code', { ticket_code: '' }],
      ['a ticket_code that is a number', { ticket_code: 12345 }],
      ['a ticket_code over 200 characters', { ticket_code: 'x'.repeat(201) }],
    ])('answers 400 invalid_input for %s', async (_label, body) => {
      const { s, event } = await ticketed();
      const res = await checkin(s.tribe.id, event.id, s.owner, body);
      expectError(res, 400, 'invalid_input');
      expect(JSON.stringify(res.body.error)).toContain('ticket_code');
    });

    it.each(['member', 'outsider'] as const)('refuses a %s (403) and checks nothing in', async (role) => {
      const { s, event, reg } = await ticketed();
      expectError(await checkin(s.tribe.id, event.id, s[role], { ticket_code: reg.ticket_code }), 403, 'forbidden');
      expect((await registrationsOf(event.id))[0].checked_in_at).toBeNull();
    });
  });

  describe('tribe isolation', () => {
    it("answers 404 for tribe B's event under tribe A's path on every route and changes nothing", async () => {
      const a = await staffedTribe(t, cast);
      const b = await staffedTribe(t, otherCast);
      const foreign = await newEvent(b.tribe.id, b.owner);
      const reg = (await register(b.tribe.id, foreign.id, b.member)).body.data;
      // a.owner is owner of A; the member of B registers under A's path too
      expectError(await t.api.get(`${base(a.tribe.id)}/${foreign.id}`).set(bearer(a.owner)), 404, 'not_found');
      expectError(await register(a.tribe.id, foreign.id, a.member), 404, 'not_found');
      expectError(await checkin(a.tribe.id, foreign.id, a.owner, { ticket_code: reg.ticket_code }), 404, 'not_found');
      expect(await registrationsOf(foreign.id)).toEqual([expect.objectContaining({ user_id: b.member.id, checked_in_at: null })]);
    });

    it("does not check in tribe B's ticket at tribe A's event", async () => {
      const a = await staffedTribe(t, cast);
      const b = await staffedTribe(t, otherCast);
      const mine = await newEvent(a.tribe.id, a.owner);
      const foreign = await newEvent(b.tribe.id, b.owner);
      const reg = (await register(b.tribe.id, foreign.id, b.member)).body.data;
      expectError(await checkin(a.tribe.id, mine.id, a.owner, { ticket_code: reg.ticket_code }), 404, 'not_found');
      expect((await registrationsOf(foreign.id))[0].checked_in_at).toBeNull();
    });
  });

  describe('GraphQL', () => {
    it('creates, lists, registers and checks in through the same service', async () => {
      const s = await staffedTribe(t, cast);
      const created = await gql(t, s.owner, `mutation($c: ID!, $i: CreateEventInput!) { createEvent(communityId: $c, input: $i) { id title price currency maxAttendees spotsLeft } }`, {
        c: s.tribe.id,
        i: { title: 'GraphQL event', eventType: 'online', startsAt: at(5), endsAt: at(6), maxAttendees: 2 },
      });
      expect(created.errors).toBeUndefined();
      const id = created.data.createEvent.id;
      expect(created.data.createEvent).toEqual({ id, title: 'GraphQL event', price: 0, currency: 'BRL', maxAttendees: 2, spotsLeft: 2 });
      const reg = await gql(t, s.member, `mutation($e: ID!) { registerForEvent(eventId: $e) { status created registration { ticketCode status event { id } } order { id } } }`, { e: id });
      expect(reg.data.registerForEvent).toMatchObject({ status: 'confirmed', created: true, registration: { status: 'confirmed', event: { id } }, order: null });
      const listed = await gql(t, s.member, `query($c: ID!) { events(communityId: $c) { items { id registeredCount spotsLeft viewerRegistration { status } } perPage hasMore } }`, { c: s.tribe.id });
      expect(listed.data.events).toEqual({ items: [{ id, registeredCount: 1, spotsLeft: 1, viewerRegistration: { status: 'confirmed' } }], perPage: 20, hasMore: false });
      const code = reg.data.registerForEvent.registration.ticketCode;
      const done = await gql(t, s.moderator, `mutation($e: ID!, $c: ID, $t: String) { checkInEvent(eventId: $e, communityId: $c, ticketCode: $t) { checkedInAt } }`, { e: id, c: s.tribe.id, t: code });
      expect(done.data.checkInEvent.checkedInAt).toMatch(ISO);
      const repeat = await gql(t, s.moderator, `mutation($e: ID!, $t: String) { checkInEvent(eventId: $e, ticketCode: $t) { checkedInAt } }`, { e: id, t: code });
      expect(repeat.errors?.[0].extensions).toMatchObject({ reason: 'already_checked_in', status: 400 });
    });

    it("answers a paid registration's order to its buyer and the tribe's owner only: a moderator checking the ticket in reads null", async () => {
      const s = await staffedTribe(t, cast);
      const created = await gql(t, s.owner, `mutation($c: ID!, $i: CreateEventInput!) { createEvent(communityId: $c, input: $i) { id } }`, {
        c: s.tribe.id,
        i: { title: 'Paid event', eventType: 'online', startsAt: at(5), endsAt: at(6), price: 25, currency: 'USD' },
      });
      const id = created.data.createEvent.id;
      const pending = await gql(t, s.member, `mutation($e: ID!) { registerForEvent(eventId: $e) { status order { id } } }`, { e: id });
      expect(pending.data.registerForEvent.status).toBe('pending_payment');
      const orderId = pending.data.registerForEvent.order.id;
      expect((await gql(t, s.owner, `mutation($o: ID!) { markOrderPaid(orderId: $o) { status } }`, { o: orderId })).data.markOrderPaid.status).toBe('paid');
      const registration = `registration { ticketCode order { id amountCents } }`;
      const mine = await gql(t, s.member, `mutation($e: ID!) { registerForEvent(eventId: $e) { ${registration} } }`, { e: id });
      expect(mine.data.registerForEvent.registration.order).toEqual({ id: orderId, amountCents: 2500 });
      const checkIn = `mutation($e: ID!, $t: String) { checkInEvent(eventId: $e, ticketCode: $t) { checkedInAt order { id amountCents } } }`;
      const byModerator = await gql(t, s.moderator, checkIn, { e: id, t: mine.data.registerForEvent.registration.ticketCode });
      expect(byModerator.errors).toBeUndefined();
      expect(byModerator.data.checkInEvent).toEqual({ checkedInAt: expect.stringMatching(ISO), order: null });
      const viewer = await gql(t, s.member, `query($c: ID!) { events(communityId: $c) { items { id viewerRegistration { order { id } } } } }`, { c: s.tribe.id });
      expect(viewer.data.events.items.find((e: { id: string }) => e.id === id).viewerRegistration.order).toEqual({ id: orderId });
    });

    it('refuses createEvent for a member with the forbidden code', async () => {
      const s = await staffedTribe(t, cast);
      const out = await gql(t, s.member, `mutation($c: ID!, $i: CreateEventInput!) { createEvent(communityId: $c, input: $i) { id } }`, {
        c: s.tribe.id,
        i: { title: 'x', eventType: 'online', startsAt: at(5), endsAt: at(6) },
      });
      expect(out.errors?.[0].extensions).toMatchObject({ reason: 'forbidden', status: 403 });
      expect(await eventsIn(s.tribe.id)).toBe(0);
    });
  });
});
