import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { accessToken, createTribe, join, signupUser, unique, type TestUser } from './factory.js';
import { ManualClock, gql, sqlRows, startService, type TestService, ok, failure } from './support.js';


const DISCOVER = `query($q: String, $cat: String, $sort: DiscoverSort, $first: Int, $after: String) {
  discoverCommunities(query: $q, category: $cat, sort: $sort, first: $first, after: $after) {
    edges { cursor node { id handle name isPublic category } }
    pageInfo { hasNextPage endCursor }
  }
}`;
const CATEGORIES_QUERY = '{ communityCategories { category count } }';
const LIST = ['business', 'tech', 'education', 'health', 'fitness', 'finance', 'art', 'music', 'books', 'gaming', 'sports', 'lifestyle', 'spirituality', 'other'];
const DAY = 24 * 60 * 60 * 1000;

describe('discover', () => {
  let t: TestService;
  const clock = new ManualClock(new Date());
  beforeAll(async () => {
    t = await startService({}, clock.clock);
  });
  afterAll(async () => {
    await t.stop();
  });

  type Vars = { q?: string; cat?: string; sort?: string; first?: number; after?: string };
  const discover = (as: TestUser | null, vars: Vars) => gql(t, as, DISCOVER, vars);
  const ids = async (as: TestUser | null, vars: Vars): Promise<string[]> =>
    ok(await discover(as, vars)).discoverCommunities.edges.map((e: { node: { id: string } }) => e.node.id);
  /** A token that names this test's tribes only, so the query filter keeps other tests' tribes out. */
  const token = () => `dq${unique()}`;
  const tribe = async (owner: TestUser, tok: string, overrides: Record<string, unknown> = {}) => createTribe(t, owner, { name: `Tribe ${tok} ${unique()}`, ...overrides });
  const setCreated = (id: string, at: string) => sqlRows(t, sql`update communities set created_at = ${at}::timestamptz where id = ${id}`);
  /** Adds `n` members to a tribe, all joined at `joinedAt`. */
  const addMembers = async (handle: string, id: string, n: number, joinedAt: Date) => {
    for (let i = 0; i < n; i += 1) {
      const u = await signupUser(t);
      await join(t, u, handle);
      await sqlRows(t, sql`update members set joined_at = ${joinedAt.toISOString()}::timestamptz where community_id = ${id} and user_id = ${u.id}`);
    }
  };
  const desc = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0);

  describe('discoverCommunities', () => {
    it('lists public tribes only, to anyone, in every sort', async () => {
      const owner = await signupUser(t);
      const tok = token();
      const open = await tribe(owner, tok);
      await tribe(owner, tok, { isPublic: false });
      for (const sort of ['TRENDING', 'NEWEST', 'LARGEST']) {
        expect(await ids(null, { q: tok, sort })).toEqual([open.id]);
        expect(await ids(owner, { q: tok, sort })).toEqual([open.id]);
      }
      expect(await ids(null, { q: tok })).toEqual([open.id]);
    });

    it('orders NEWEST by creation time, ties by id', async () => {
      const owner = await signupUser(t);
      const tok = token();
      const [a, b, c, d] = [await tribe(owner, tok), await tribe(owner, tok), await tribe(owner, tok), await tribe(owner, tok)];
      await setCreated(a.id, '2026-01-01T00:00:00.000001Z');
      await setCreated(b.id, '2026-01-01T00:00:00.000003Z');
      await setCreated(c.id, '2026-01-01T00:00:00.000002Z');
      await setCreated(d.id, '2026-01-01T00:00:00.000002Z');
      const tied = [c.id, d.id].sort(desc);
      expect(await ids(null, { q: tok, sort: 'NEWEST' })).toEqual([b.id, ...tied, a.id]);
      // Page by page, microseconds apart: every tribe once, in the same order.
      const paged: string[] = [];
      let after: string | undefined;
      do {
        const page = ok(await discover(null, { q: tok, sort: 'NEWEST', first: 1, after })).discoverCommunities;
        paged.push(...page.edges.map((e: { node: { id: string } }) => e.node.id));
        after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : undefined;
      } while (after);
      expect(paged).toEqual([b.id, ...tied, a.id]);
    });

    it('orders LARGEST by member count, ties by id, across pages without repeats', async () => {
      const owner = await signupUser(t);
      const tok = token();
      const [one, three, two, twoToo] = [await tribe(owner, tok), await tribe(owner, tok), await tribe(owner, tok), await tribe(owner, tok)];
      await addMembers(three.handle, three.id, 2, clock.current);
      await addMembers(two.handle, two.id, 1, clock.current);
      await addMembers(twoToo.handle, twoToo.id, 1, clock.current);
      const expected = [three.id, ...[two.id, twoToo.id].sort(desc), one.id];
      expect(await ids(null, { q: tok, sort: 'LARGEST' })).toEqual(expected);
      const first = ok(await discover(null, { q: tok, sort: 'LARGEST', first: 3 })).discoverCommunities;
      expect(first.pageInfo.hasNextPage).toBe(true);
      const rest = ok(await discover(null, { q: tok, sort: 'LARGEST', first: 3, after: first.pageInfo.endCursor })).discoverCommunities;
      expect(rest.pageInfo).toEqual({ hasNextPage: false, endCursor: expect.any(String) });
      expect([...first.edges, ...rest.edges].map((e: { node: { id: string } }) => e.node.id)).toEqual(expected);
    });

    it('orders TRENDING (the default) by joins in the last 7 days of the service clock', async () => {
      const owner = await signupUser(t);
      const tok = token();
      const old = await tribe(owner, tok);
      const fresh = await tribe(owner, tok);
      const now = clock.current;
      // The owners joined when their tribes were made; move those joins out of every window first.
      await sqlRows(t, sql`update members set joined_at = ${new Date(now.getTime() - 30 * DAY).toISOString()}::timestamptz where community_id in (${old.id}, ${fresh.id})`);
      await addMembers(old.handle, old.id, 4, new Date(now.getTime() - 8 * DAY));
      await addMembers(old.handle, old.id, 1, new Date(now.getTime() - 6 * DAY));
      await addMembers(fresh.handle, fresh.id, 2, new Date(now.getTime() - 1 * DAY));
      expect(await ids(null, { q: tok })).toEqual([fresh.id, old.id]);
      expect(await ids(null, { q: tok, sort: 'TRENDING' })).toEqual([fresh.id, old.id]);
      expect(await ids(null, { q: tok, sort: 'LARGEST' })).toEqual([old.id, fresh.id]);
      clock.advance(2 * DAY); // old's one recent join leaves the window; fresh keeps its two
      try {
        expect(await ids(null, { q: tok })).toEqual([fresh.id, old.id]);
        clock.advance(7 * DAY); // nobody joined in the last 7 days: a tie, by id
        expect(await ids(null, { q: tok })).toEqual([fresh.id, old.id].sort(desc));
        clock.advance(-20 * DAY); // 11 days back: the window reaches back 18 days, over all five joins of old
        expect(await ids(null, { q: tok })).toEqual([old.id, fresh.id]);
      } finally {
        clock.current = now;
      }
    });

    it('filters by category', async () => {
      const owner = await signupUser(t);
      const tok = token();
      const music = await tribe(owner, tok, { category: 'music' });
      await tribe(owner, tok, { category: 'art' });
      await tribe(owner, tok);
      await tribe(owner, tok, { category: 'music', isPublic: false });
      expect(await ids(null, { q: tok, cat: 'music' })).toEqual([music.id]);
      expect(await ids(null, { q: tok, cat: 'gaming' })).toEqual([]);
      expect(failure(await discover(null, { q: tok, cat: 'nope' }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input' });
    });

    it('matches name, handle or description case-insensitively, with % and _ taken literally', async () => {
      const owner = await signupUser(t);
      const tok = token();
      const pct = await tribe(owner, tok, { name: `Fit ${tok} 100% club` });
      const noPct = await tribe(owner, tok, { name: `Fit ${tok} 1000 club` });
      const under = await tribe(owner, tok, { name: 'Plain', description: `About ${tok}_x things` });
      const noUnder = await tribe(owner, tok, { name: 'Plain', description: `About ${tok}yx things` });
      const byHandle = await tribe(owner, tok, { name: 'Plain', handle: `h-${tok}-z` });
      expect(await ids(null, { q: `${tok} 100%`.toUpperCase() })).toEqual([pct.id]);
      expect(await ids(null, { q: `${tok}_` })).toEqual([under.id]);
      expect((await ids(null, { q: tok, sort: 'NEWEST' })).sort()).toEqual([pct.id, noPct.id, under.id, noUnder.id, byHandle.id].sort());
      expect(await ids(null, { q: `h-${tok}-Z` })).toEqual([byHandle.id]);
      expect(await ids(null, { q: `${tok}\\` })).toEqual([]);
    });

    it('refuses invalid and foreign cursors with invalid_cursor, and first outside 1..50 with invalid_first', async () => {
      const owner = await signupUser(t);
      const tok = token();
      await tribe(owner, tok);
      await tribe(owner, tok);
      const cursor = ok(await discover(null, { q: tok, sort: 'NEWEST', first: 1 })).discoverCommunities.pageInfo.endCursor as string;
      const refused = async (vars: Vars) => expect(failure(await discover(null, { first: 1, ...vars }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_cursor' });
      await refused({ q: tok, sort: 'NEWEST', after: 'nope' });
      await refused({ q: tok, sort: 'NEWEST', after: `${cursor.slice(0, -3)}abc` });
      await refused({ q: tok, sort: 'LARGEST', after: cursor });
      await refused({ q: `${tok}x`, sort: 'NEWEST', after: cursor });
      await refused({ q: tok, sort: 'NEWEST', cat: 'art', after: cursor });
      for (const first of [0, 51]) {
        expect(failure(await discover(null, { q: tok, first }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_first' });
      }
    });
  });

  describe('communityCategories', () => {
    it('lists every category in order with its public tribe count, 0 included', async () => {
      const before = ok(await gql(t, null, CATEGORIES_QUERY)).communityCategories as Array<{ category: string; count: number }>;
      expect(before.map((c) => c.category)).toEqual(LIST);
      const owner = await signupUser(t);
      await createTribe(t, owner, { category: 'gaming' });
      await createTribe(t, owner, { category: 'gaming' });
      await createTribe(t, owner, { category: 'books' });
      await createTribe(t, owner, { category: 'books', isPublic: false });
      await createTribe(t, owner);
      const after = ok(await gql(t, null, CATEGORIES_QUERY)).communityCategories as Array<{ category: string; count: number }>;
      const delta = Object.fromEntries(after.map((c, i) => [c.category, c.count - before[i].count]));
      expect(delta).toEqual(Object.fromEntries(LIST.map((c) => [c, c === 'gaming' ? 2 : c === 'books' ? 1 : 0])));
      expect(after.every((c) => Number.isInteger(c.count) && c.count >= 0)).toBe(true);
    });
  });

  describe('Community.category', () => {
    it('accepts a category of the list (trimmed, lowercased) on create and update, and null to clear it', async () => {
      const owner = await signupUser(t);
      const created = ok(await gql(t, owner, 'mutation($i: CreateCommunityInput!){ createCommunity(input: $i){ id category } }', { i: { name: 'C', handle: `c-${unique()}`, category: ' Music ' } })).createCommunity;
      expect(created.category).toBe('music');
      const update = (category: string | null) => gql(t, owner, 'mutation($id: ID!, $i: UpdateCommunityInput!){ updateCommunity(id: $id, input: $i){ category } }', { id: created.id, i: { category } });
      expect(ok(await update('tech')).updateCommunity.category).toBe('tech');
      expect(ok(await update(null)).updateCommunity.category).toBe(null);
      const refused = await update('cooking');
      expect(failure(refused)).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input' });
      expect(refused.errors![0].extensions!.details).toEqual([{ field: 'category', message: expect.stringContaining('must be one of business, tech') }]);
      expect((await sqlRows(t, sql`select category from communities where id = ${created.id}`))[0].category).toBe(null);
    });

    it('refuses a category outside the list on POST /v1/communities with 400 invalid_input naming category, writing nothing', async () => {
      const owner = await signupUser(t);
      const handle = `c-${unique()}`;
      const res = await t.api
        .post('/v1/communities')
        .set('authorization', `Bearer ${await accessToken(t, owner)}`)
        .send({ name: 'Bad category', handle, category: 'cooking' });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_input');
      expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'category' })]);
      expect(await sqlRows(t, sql`select id from communities where handle = ${handle}`)).toHaveLength(0);
      const good = await t.api
        .post('/v1/communities')
        .set('authorization', `Bearer ${await accessToken(t, owner)}`)
        .send({ name: 'Good category', handle: `c-${unique()}`, category: 'fitness' });
      expect(good.status).toBe(201);
      expect(good.body.data.category).toBe('fitness');
    });
  });
});
