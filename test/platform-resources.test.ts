import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import {
  ALL_SCOPES,
  createKey,
  createPost,
  createTribe,
  join,
  seedEvent,
  seedOrder,
  setJoinedAt,
  setPostTimes,
  setRole,
  signupUser,
  type CreatedKey,
  type TestUser,
} from './factory.js';
import { platformGet, sqlRows, startService, type TestService } from './support.js';
import { forbiddenBody, ISO } from './expected.js';

/** Two tribes with members, posts, events and orders each; every list test checks that B never leaks into A. */
describe('Platform API resources', () => {
  let t: TestService;
  let ownerA: TestUser;
  let ownerB: TestUser;
  let people: TestUser[];
  let tribeA: { id: string; handle: string; name: string };
  let tribeB: { id: string; handle: string; name: string };
  let keyA: CreatedKey;
  let keyB: CreatedKey;

  beforeAll(async () => {
    t = await startService();
    [ownerA, ownerB] = await Promise.all([signupUser(t, { displayName: 'Owner A' }), signupUser(t, { displayName: 'Owner B' })]);
    tribeA = await createTribe(t, ownerA, { name: 'Tribe A' });
    tribeB = await createTribe(t, ownerB, { name: 'Tribe B' });
    people = await Promise.all(Array.from({ length: 4 }, (_, i) => signupUser(t, { displayName: `Person ${i}` })));
    for (const p of people) await join(t, p, tribeA.handle);
    // people[3] is in both tribes.
    await join(t, people[3], tribeB.handle);
    await setRole(t, ownerA, tribeA.id, people[0].id, 'moderator');
    await setJoinedAt(t, tribeA.id, ownerA.id, '2030-01-01T00:00:00.000Z');
    for (const [i, p] of people.entries()) await setJoinedAt(t, tribeA.id, p.id, `2030-01-0${i + 2}T00:00:00.000Z`);
    keyA = await createKey(t, ownerA, tribeA.handle, ALL_SCOPES, 'integration A');
    keyB = await createKey(t, ownerB, tribeB.handle, ALL_SCOPES, 'integration B');
  });
  afterAll(async () => {
    await t.stop();
  });

  describe('GET /v1/me', () => {
    it("answers the key's identity: its tribe and its scopes", async () => {
      const res = await platformGet(t, '/v1/me', keyA.key);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body).toEqual({
        object: 'api_key',
        id: keyA.id,
        name: 'integration A',
        keyPrefix: keyA.keyPrefix,
        scopes: ALL_SCOPES,
        community: { id: tribeA.id, handle: tribeA.handle, name: 'Tribe A' },
      });
    });

    it('needs no scope: a key with only the reserved community:read scope reads it', async () => {
      const key = await createKey(t, ownerB, tribeB.handle, ['community:read']);
      const res = await platformGet(t, '/v1/me', key.key);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'api_key', scopes: ['community:read'], community: { id: tribeB.id, handle: tribeB.handle } });
    });
  });

  describe('GET /v1/members', () => {
    it('lists the members of the key tribe as member objects, sorted by joinedAt descending', async () => {
      const res = await platformGet(t, '/v1/members', keyA.key);
      expect(res.status).toBe(200);
      const expected = [...people].reverse().map((p, i) => ({
        object: 'member',
        userId: p.id,
        username: p.username,
        displayName: `Person ${3 - i}`,
        avatarUrl: null,
        role: p === people[0] ? 'moderator' : 'member',
        xp: 0,
        level: 1,
        joinedAt: `2030-01-0${3 - i + 2}T00:00:00.000Z`,
      }));
      expect(res.body).toEqual({
        object: 'list',
        data: [
          ...expected,
          {
            object: 'member',
            userId: ownerA.id,
            username: ownerA.username,
            displayName: 'Owner A',
            avatarUrl: null,
            role: 'owner',
            xp: 0,
            level: 1,
            joinedAt: '2030-01-01T00:00:00.000Z',
          },
        ],
        page: 1,
        pageSize: 25,
        hasMore: false,
      });
    });

    it("never lists another tribe's members", async () => {
      const a = await platformGet(t, '/v1/members', keyA.key);
      expect(a.body.data.map((m: { userId: string }) => m.userId)).not.toContain(ownerB.id);
      const b = await platformGet(t, '/v1/members', keyB.key);
      expect(b.body.data.map((m: { userId: string }) => m.userId).sort()).toEqual([ownerB.id, people[3].id].sort());
    });

    it('pages by offset; hasMore is true when the page came back full', async () => {
      const p1 = await platformGet(t, '/v1/members?pageSize=2', keyA.key);
      expect(p1.body).toMatchObject({ object: 'list', page: 1, pageSize: 2, hasMore: true });
      expect(p1.body.data.map((m: { userId: string }) => m.userId)).toEqual([people[3].id, people[2].id]);
      const p2 = await platformGet(t, '/v1/members?page=2&pageSize=2', keyA.key);
      expect(p2.body.data.map((m: { userId: string }) => m.userId)).toEqual([people[1].id, people[0].id]);
      expect(p2.body.hasMore).toBe(true);
      const p3 = await platformGet(t, '/v1/members?page=3&pageSize=2', keyA.key);
      expect(p3.body).toEqual({ object: 'list', data: [expect.objectContaining({ userId: ownerA.id })], page: 3, pageSize: 2, hasMore: false });
    });

    it('says hasMore when the last page is exactly full, and the next page is an empty list, not an error', async () => {
      const full = await platformGet(t, '/v1/members?pageSize=5', keyA.key);
      expect(full.body).toMatchObject({ page: 1, pageSize: 5, hasMore: true });
      expect(full.body.data).toHaveLength(5);
      const empty = await platformGet(t, '/v1/members?page=2&pageSize=5', keyA.key);
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual({ object: 'list', data: [], page: 2, pageSize: 5, hasMore: false });
    });

    it.each([
      ['pageSize=5000', 1, 100],
      ['pageSize=101', 1, 100],
      ['pageSize=0', 1, 1],
      ['pageSize=-7', 1, 1],
      ['pageSize=abc', 1, 25],
      ['pageSize=2.5', 1, 25],
      ['pageSize=', 1, 25],
      ['page=-3', 1, 25],
      ['page=0', 1, 25],
      ['page=abc', 1, 25],
      ['page=1e3', 1, 25],
      ['page=99999999999999999999&pageSize=1', 1_000_000_000, 1],
      ['page=2&page=3', 1, 25],
      ['page=%2B2&pageSize=%2B1', 2, 1],
    ])('clamps %s silently to page %d, pageSize %d (no 400)', async (query, page, pageSize) => {
      const res = await platformGet(t, `/v1/members?${query}`, keyA.key);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'list', page, pageSize });
    });

    it('serves the clamped page: pageSize=0 gives one member, page=-3 the first page', async () => {
      const one = await platformGet(t, '/v1/members?pageSize=0', keyA.key);
      expect(one.body.data.map((m: { userId: string }) => m.userId)).toEqual([people[3].id]);
      expect(one.body.hasMore).toBe(true);
      const first = await platformGet(t, '/v1/members?page=-3&pageSize=2', keyA.key);
      expect(first.body.data.map((m: { userId: string }) => m.userId)).toEqual([people[3].id, people[2].id]);
    });

    it('answers 403 forbidden to a key without members:read', async () => {
      const key = await createKey(t, ownerA, tribeA.handle, ['posts:read', 'events:read', 'orders:read', 'community:read']);
      const res = await platformGet(t, '/v1/members', key.key);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(forbiddenBody('members:read'));
    });
  });

  describe('GET /v1/members/{username}', () => {
    it('answers one member, flat, with object at the root', async () => {
      const res = await platformGet(t, `/v1/members/${people[0].username}`, keyA.key);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        object: 'member',
        userId: people[0].id,
        username: people[0].username,
        displayName: 'Person 0',
        avatarUrl: null,
        role: 'moderator',
        xp: 0,
        level: 1,
        joinedAt: '2030-01-02T00:00:00.000Z',
      });
    });

    it('answers a person in both tribes with the membership of the key tribe', async () => {
      const inB = await platformGet(t, `/v1/members/${people[3].username}`, keyB.key);
      expect(inB.body).toMatchObject({ userId: people[3].id, role: 'member' });
      expect(inB.body.joinedAt).toMatch(ISO);
      expect(inB.body.joinedAt).not.toBe('2030-01-05T00:00:00.000Z');
    });

    it.each([
      ['a member of another tribe', () => ownerB.username],
      ['an unknown username', () => 'nobody_by_that_name'],
      ['a username that cannot exist', () => 'Not A User!'],
    ])('answers 404 not_found for %s', async (_case, username) => {
      const res = await platformGet(t, `/v1/members/${encodeURIComponent(username())}`, keyA.key);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: { type: 'not_found', message: 'Member not found.' } });
    });

    it('answers 404 not_found, not a 500, for a username that is not valid percent-encoding', async () => {
      const res = await platformGet(t, '/v1/members/%E0%A4%A', keyA.key);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: { type: 'not_found', message: 'Not found.' } });
    });

    it('answers 403 forbidden to a key without members:read, even for an unknown username', async () => {
      const key = await createKey(t, ownerA, tribeA.handle, ['posts:read']);
      for (const username of [people[0].username, 'nobody_by_that_name']) {
        const res = await platformGet(t, `/v1/members/${username}`, key.key);
        expect(res.status).toBe(403);
        expect(res.body).toEqual(forbiddenBody('members:read'));
      }
    });
  });

  describe('GET /v1/posts', () => {
    let published: { id: string }[];
    beforeAll(async () => {
      const [a, b, c] = [await createPost(t, people[1], tribeA.id, { content: '<p>first</p>' }), await createPost(t, people[2], tribeA.id), await createPost(t, ownerA, tribeA.id, { isPinned: true })];
      published = [a, b, c];
      await setPostTimes(t, a.id, { createdAt: '2030-02-01T00:00:00.000Z', publishedAt: '2030-02-10T00:00:00.000Z' });
      await setPostTimes(t, b.id, { createdAt: '2030-02-05T00:00:00.000Z', publishedAt: null });
      await setPostTimes(t, c.id, { createdAt: '2030-02-03T00:00:00.000Z', publishedAt: '2030-02-04T00:00:00.000Z' });
      const hidden = [
        await createPost(t, people[1], tribeA.id, { content: '<p>members only secret</p>', visibility: 'members' }),
        await createPost(t, people[1], tribeA.id, { content: '<p>paid secret</p>', visibility: 'paid' }),
        await createPost(t, people[1], tribeA.id, { content: '<p>draft secret</p>', status: 'draft' }),
        await createPost(t, people[1], tribeA.id, { content: '<p>members draft secret</p>', visibility: 'members', status: 'draft' }),
      ];
      for (const h of hidden) await setPostTimes(t, h.id, { createdAt: '2031-01-01T00:00:00.000Z', publishedAt: '2031-01-01T00:00:00.000Z' });
      await createPost(t, ownerB, tribeB.id, { content: '<p>tribe B post</p>' });
    });

    it('lists only published public posts, by publication date descending (createdAt when none)', async () => {
      const res = await platformGet(t, '/v1/posts', keyA.key);
      expect(res.status).toBe(200);
      const [a, b, c] = published;
      expect(res.body).toEqual({
        object: 'list',
        data: [
          {
            object: 'post',
            id: a.id,
            author: { userId: people[1].id, username: people[1].username, displayName: 'Person 1' },
            body: '<p>first</p>',
            mediaUrls: [],
            isPinned: false,
            publishedAt: '2030-02-10T00:00:00.000Z',
            createdAt: '2030-02-01T00:00:00.000Z',
            updatedAt: expect.stringMatching(ISO),
          },
          expect.objectContaining({ object: 'post', id: b.id, publishedAt: '2030-02-05T00:00:00.000Z', createdAt: '2030-02-05T00:00:00.000Z' }),
          expect.objectContaining({ object: 'post', id: c.id, isPinned: true, publishedAt: '2030-02-04T00:00:00.000Z', author: expect.objectContaining({ userId: ownerA.id }) }),
        ],
        page: 1,
        pageSize: 25,
        hasMore: false,
      });
    });

    it('never exposes members-only, paid or draft posts, nor another tribe', async () => {
      const res = await platformGet(t, '/v1/posts?pageSize=100', keyA.key);
      const text = JSON.stringify(res.body);
      for (const secret of ['members only secret', 'paid secret', 'draft secret', 'tribe B post']) expect(text).not.toContain(secret);
      expect(res.body.data).toHaveLength(3);
      const b = await platformGet(t, '/v1/posts', keyB.key);
      expect(b.body.data.map((p: { body: string }) => p.body)).toEqual(['<p>tribe B post</p>']);
    });

    it('pages posts with the same envelope', async () => {
      const res = await platformGet(t, '/v1/posts?page=2&pageSize=2', keyA.key);
      expect(res.body).toEqual({ object: 'list', data: [expect.objectContaining({ id: published[2].id })], page: 2, pageSize: 2, hasMore: false });
    });

    it('answers 403 forbidden to a key without posts:read', async () => {
      const key = await createKey(t, ownerA, tribeA.handle, ['members:read']);
      const res = await platformGet(t, '/v1/posts', key.key);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(forbiddenBody('posts:read'));
    });
  });

  describe('GET /v1/events', () => {
    let events: { id: string }[];
    beforeAll(async () => {
      events = [
        await seedEvent(t, tribeA.id, { title: 'Kickoff', startsAt: '2030-03-01T18:00:00.000Z', endsAt: '2030-03-01T19:30:00.000Z' }),
        await seedEvent(t, tribeA.id, {
          title: 'Meetup',
          eventType: 'in_person',
          location: 'São Paulo',
          startsAt: '2030-04-01T18:00:00.000Z',
          endsAt: '2030-04-01T21:00:00.000Z',
          maxAttendees: 40,
          priceCents: 2500,
          currency: 'BRL',
        }),
        await seedEvent(t, tribeA.id, { title: 'Past', startsAt: '2029-12-01T18:00:00.000Z', endsAt: '2029-12-01T19:00:00.000Z' }),
      ];
      await seedEvent(t, tribeB.id, { title: 'Tribe B event' });
    });

    it('lists the events of the key tribe, sorted by startsAt descending, money in integer cents', async () => {
      const res = await platformGet(t, '/v1/events', keyA.key);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        object: 'list',
        data: [
          {
            object: 'event',
            id: events[1].id,
            title: 'Meetup',
            description: 'A session',
            eventType: 'in_person',
            location: 'São Paulo',
            startsAt: '2030-04-01T18:00:00.000Z',
            endsAt: '2030-04-01T21:00:00.000Z',
            maxAttendees: 40,
            priceCents: 2500,
            currency: 'BRL',
            createdAt: expect.stringMatching(ISO),
            updatedAt: expect.stringMatching(ISO),
          },
          expect.objectContaining({ object: 'event', id: events[0].id, title: 'Kickoff', eventType: 'online', location: null, maxAttendees: null, priceCents: 0 }),
          expect.objectContaining({ object: 'event', id: events[2].id, title: 'Past' }),
        ],
        page: 1,
        pageSize: 25,
        hasMore: false,
      });
    });

    it('shows another tribe only its own events', async () => {
      const res = await platformGet(t, '/v1/events', keyB.key);
      expect(res.body.data.map((e: { title: string }) => e.title)).toEqual(['Tribe B event']);
    });

    it('answers an empty list, not an error, to a tribe without events', async () => {
      const lonely = await createTribe(t, ownerB);
      const key = await createKey(t, ownerB, lonely.handle, ['events:read']);
      const res = await platformGet(t, '/v1/events', key.key);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ object: 'list', data: [], page: 1, pageSize: 25, hasMore: false });
    });

    it('answers 403 forbidden to a key without events:read', async () => {
      const key = await createKey(t, ownerA, tribeA.handle, ['members:read', 'posts:read', 'orders:read']);
      const res = await platformGet(t, '/v1/events', key.key);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(forbiddenBody('events:read'));
    });
  });

  describe('GET /v1/orders', () => {
    let orders: { id: string }[];
    beforeAll(async () => {
      orders = [
        await seedOrder(t, tribeA.id, people[1].id, { createdAt: '2030-06-01T10:00:00.000Z', paidAt: '2030-06-01T10:00:05.000Z' }),
        await seedOrder(t, tribeA.id, people[2].id, {
          productType: 'event',
          amountCents: 2500,
          currency: 'USD',
          status: 'pending',
          paidAt: null,
          createdAt: '2030-06-03T10:00:00.000Z',
        }),
        await seedOrder(t, tribeA.id, null, { status: 'refunded', createdAt: '2030-06-02T10:00:00.000Z' }),
      ];
      await seedOrder(t, tribeB.id, ownerB.id, { amountCents: 999999 });
    });

    it('lists the orders of the key tribe, newest first, with buyer, amount in cents and status', async () => {
      const res = await platformGet(t, '/v1/orders', keyA.key);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        object: 'list',
        data: [
          {
            object: 'order',
            id: orders[1].id,
            buyer: { userId: people[2].id, username: people[2].username, displayName: 'Person 2' },
            productType: 'event',
            productId: null,
            amountCents: 2500,
            currency: 'USD',
            status: 'pending',
            paidAt: null,
            createdAt: '2030-06-03T10:00:00.000Z',
            updatedAt: '2030-06-03T10:00:00.000Z',
          },
          expect.objectContaining({ object: 'order', id: orders[2].id, buyer: null, status: 'refunded' }),
          expect.objectContaining({
            object: 'order',
            id: orders[0].id,
            buyer: { userId: people[1].id, username: people[1].username, displayName: 'Person 1' },
            amountCents: 4990,
            currency: 'BRL',
            status: 'paid',
            paidAt: '2030-06-01T10:00:05.000Z',
          }),
        ],
        page: 1,
        pageSize: 25,
        hasMore: false,
      });
    });

    it("never lists another tribe's orders", async () => {
      const a = await platformGet(t, '/v1/orders?pageSize=100', keyA.key);
      expect(a.body.data.map((o: { amountCents: number }) => o.amountCents)).not.toContain(999999);
      const b = await platformGet(t, '/v1/orders', keyB.key);
      expect(b.body.data).toEqual([expect.objectContaining({ amountCents: 999999, buyer: expect.objectContaining({ userId: ownerB.id }) })]);
    });

    it('answers 403 forbidden to a key without orders:read', async () => {
      const key = await createKey(t, ownerA, tribeA.handle, ['members:read', 'posts:read', 'events:read', 'community:read']);
      const res = await platformGet(t, '/v1/orders', key.key);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(forbiddenBody('orders:read'));
    });
  });

  describe('scopes', () => {
    it('are fixed at creation: promoting a human does not widen a key', async () => {
      const key = await createKey(t, ownerA, tribeA.handle, ['posts:read']);
      const [row] = await sqlRows(t, sql`select scopes from api_keys where id = ${key.id}`);
      expect(row.scopes).toEqual(['posts:read']);
      const res = await platformGet(t, '/v1/orders', key.key);
      expect(res.status).toBe(403);
    });

    it('reads only the tribe of the key, whatever the request says', async () => {
      const res = await platformGet(t, `/v1/members?communityId=${tribeB.id}&handle=${tribeB.handle}`, keyA.key);
      expect(res.body.data.map((m: { userId: string }) => m.userId)).not.toContain(ownerB.id);
      expect(res.body.data.map((m: { userId: string }) => m.userId)).toContain(ownerA.id);
    });
  });
});
