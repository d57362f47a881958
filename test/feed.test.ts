import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { createPost, createTribe, join, setRole, signupUser, type TestUser } from './factory.js';
import { gql, movableClock, sqlRows, startService, type TestService, ok, failure } from './support.js';


const PAGE = 'edges { cursor node { id isPinned } } pageInfo { hasNextPage endCursor }';
const Q = {
  home: `query($f: Int, $a: String){ homeFeed(first: $f, after: $a){ ${PAGE} } }`,
  community: `query($c: ID!, $s: FeedSort, $f: Int, $a: String){ communityFeed(communityId: $c, sort: $s, first: $f, after: $a){ ${PAGE} } }`,
  react: 'mutation($t: ReactionTarget!, $k: ReactionKind!){ react(target: $t, kind: $k){ total } }',
  comment: 'mutation($p: ID!, $i: CreateCommentInput!){ createComment(postId: $p, input: $i){ id } }',
  remove: 'mutation($c: ID!, $u: ID!){ removeMember(communityId: $c, userId: $u) }',
  invite: 'mutation($c: ID!){ createInvite(communityId: $c) }',
};

interface Page {
  edges: Array<{ cursor: string; node: { id: string; isPinned: boolean } }>;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}
const ids = (page: Page) => page.edges.map((e) => e.node.id);

describe('feeds', () => {
  let t: TestService;
  const clock = movableClock();
  /** A post by `as`, published one minute after the previous one (the clock decides the order, not insert speed). */
  const post = async (as: TestUser, communityId: string, input: Record<string, unknown> = {}) => {
    clock.advance(60_000);
    return (await createPost(t, as, communityId, input)).id;
  };
  const home = async (as: TestUser, vars: Record<string, unknown> = {}): Promise<Page> => ok(await gql(t, as, Q.home, vars)).homeFeed;
  const community = async (as: TestUser | null, vars: Record<string, unknown>): Promise<Page> => ok(await gql(t, as, Q.community, vars)).communityFeed;
  /** Every id of a feed, page by page with `first`, calling `between` after each page. */
  const walk = async (fetch: (after: string | null) => Promise<Page>, between: () => Promise<void> = async () => undefined) => {
    const seen: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 50; i++) {
      const page = await fetch(after);
      seen.push(...ids(page));
      if (!page.pageInfo.hasNextPage) return seen;
      expect(page.pageInfo.endCursor).toBe(page.edges.at(-1)!.cursor);
      after = page.pageInfo.endCursor;
      await between();
    }
    throw new Error('the feed never ended');
  };
  const privateTribe = async (owner: TestUser) => {
    const tribe = await createTribe(t, owner, { isPublic: false });
    const code = ok(await gql(t, owner, Q.invite, { c: tribe.id })).createInvite as string;
    return { tribe, code };
  };

  beforeAll(async () => {
    t = await startService({}, clock.now);
  });
  afterAll(async () => {
    await t.stop();
  });

  describe('homeFeed', () => {
    it('lists the published posts of every tribe of the viewer, newest publication first, and none of other tribes', async () => {
      const [owner, viewer] = await Promise.all([signupUser(t), signupUser(t)]);
      const [a, b, other] = await Promise.all([createTribe(t, owner), createTribe(t, owner), createTribe(t, owner)]);
      await join(t, viewer, a.handle);
      await join(t, viewer, b.handle);
      const p1 = await post(owner, a.id);
      const p2 = await post(owner, b.id);
      await post(owner, other.id);
      const p3 = await post(viewer, a.id);
      await post(owner, b.id, { status: 'draft' });
      const p4 = await post(owner, b.id, { isPinned: true });
      expect(ids(await home(viewer))).toEqual([p4, p3, p2, p1]);
    });

    it('shows members-only posts to members, paid ones to moderators and their authors only', async () => {
      const [owner, member, moderator] = await Promise.all([signupUser(t), signupUser(t), signupUser(t)]);
      const tribe = await createTribe(t, owner);
      await join(t, member, tribe.handle);
      await join(t, moderator, tribe.handle);
      await setRole(t, owner, tribe.id, moderator.id, 'moderator');
      const open = await post(owner, tribe.id);
      const membersOnly = await post(owner, tribe.id, { visibility: 'members' });
      const paid = await post(owner, tribe.id, { visibility: 'paid' });
      const ownPaid = await post(member, tribe.id, { visibility: 'paid' });
      const ownDraft = await post(member, tribe.id, { status: 'draft' });
      expect(ids(await home(member))).toEqual([ownPaid, membersOnly, open]);
      expect(ids(await home(moderator))).toEqual([ownPaid, paid, membersOnly, open]);
      expect(ids(await home(member))).not.toContain(ownDraft);
    });

    it("shows a private tribe's posts to its members, and a removed member loses them at once", async () => {
      const [owner, member] = await Promise.all([signupUser(t), signupUser(t)]);
      const { tribe, code } = await privateTribe(owner);
      await join(t, member, tribe.handle, code);
      const p = await post(owner, tribe.id, { visibility: 'members' });
      expect(ids(await home(member))).toEqual([p]);
      ok(await gql(t, owner, Q.remove, { c: tribe.id, u: member.id }));
      expect(ids(await home(member))).toEqual([]);
      expect(failure(await gql(t, member, Q.community, { c: tribe.id }))).toEqual({ code: 'FORBIDDEN', reason: 'forbidden' });
    });

    it('is for signed-in users only', async () => {
      expect(failure(await gql(t, null, Q.home))).toEqual({ code: 'UNAUTHENTICATED', reason: 'unauthorized' });
    });

    it('pages with first: 2 without skipping or repeating a post while new posts arrive between pages', async () => {
      const [owner, viewer] = await Promise.all([signupUser(t), signupUser(t)]);
      const [a, b] = await Promise.all([createTribe(t, owner), createTribe(t, owner)]);
      await join(t, viewer, a.handle);
      await join(t, viewer, b.handle);
      const before: string[] = [];
      for (let i = 0; i < 7; i++) before.unshift(await post(owner, i % 2 ? a.id : b.id));
      const arrived: string[] = [];
      const seen = await walk(
        (after) => home(viewer, { f: 2, a: after }),
        async () => {
          arrived.push(await post(owner, a.id));
        },
      );
      expect(seen).toEqual(before);
      expect(arrived).toHaveLength(3);
      // A fresh walk sees the new posts first.
      expect(await walk((after) => home(viewer, { f: 3, a: after }))).toEqual([...arrived].reverse().concat(before));
    });

    it('pages through posts published in the same instant by id', async () => {
      const [owner, viewer] = await Promise.all([signupUser(t), signupUser(t)]);
      const tribe = await createTribe(t, owner);
      await join(t, viewer, tribe.handle);
      const made: string[] = [];
      for (let i = 0; i < 5; i++) made.push(await post(owner, tribe.id));
      await sqlRows(t, sql`update posts set published_at = '2026-01-01T00:00:00.123456Z' where community_id = ${tribe.id}`);
      const expected = [...made].sort().reverse();
      expect(await walk((after) => home(viewer, { f: 2, a: after }))).toEqual(expected);
    });

    it('refuses first 0 and 51 (invalid_first) and tampered or foreign cursors (invalid_cursor)', async () => {
      const [owner, viewer, other] = await Promise.all([signupUser(t), signupUser(t), signupUser(t)]);
      const tribe = await createTribe(t, owner);
      await join(t, viewer, tribe.handle);
      await join(t, other, tribe.handle);
      await post(owner, tribe.id);
      await post(owner, tribe.id);
      const cursor = (await home(viewer, { f: 1 })).pageInfo.endCursor!;
      const badFirst = { code: 'BAD_USER_INPUT', reason: 'invalid_first' };
      const badCursor = { code: 'BAD_USER_INPUT', reason: 'invalid_cursor' };
      expect(failure(await gql(t, viewer, Q.home, { f: 0 }))).toEqual(badFirst);
      expect(failure(await gql(t, viewer, Q.home, { f: 51 }))).toEqual(badFirst);
      const tampered = `${Buffer.from(JSON.stringify(['2030-01-01T00:00:00.000Z', tribe.id])).toString('base64url')}.${cursor.split('.')[1]}`;
      expect(failure(await gql(t, viewer, Q.home, { a: tampered }))).toEqual(badCursor);
      expect(failure(await gql(t, viewer, Q.home, { a: 'not-a-cursor' }))).toEqual(badCursor);
      // Another user's home feed cursor, and a home feed cursor given to a tribe's feed.
      expect(failure(await gql(t, other, Q.home, { a: cursor }))).toEqual(badCursor);
      expect(failure(await gql(t, viewer, Q.community, { c: tribe.id, a: cursor }))).toEqual(badCursor);
      // A NEW cursor given to TOP, and one of another tribe.
      const newCursor = (await community(viewer, { c: tribe.id, s: 'NEW', f: 1 })).pageInfo.endCursor!;
      expect(failure(await gql(t, viewer, Q.community, { c: tribe.id, s: 'TOP', a: newCursor }))).toEqual(badCursor);
      const otherTribe = await createTribe(t, owner);
      expect(failure(await gql(t, viewer, Q.community, { c: otherTribe.id, s: 'NEW', a: newCursor }))).toEqual(badCursor);
      expect(ids(await home(viewer, { a: cursor }))).toHaveLength(1);
    });
  });

  describe('communityFeed', () => {
    it('puts every pinned post first on the first page only, not counted in first', async () => {
      const owner = await signupUser(t);
      const tribe = await createTribe(t, owner);
      const old = await post(owner, tribe.id);
      const pinnedFirst = await post(owner, tribe.id, { isPinned: true });
      const mid = await post(owner, tribe.id);
      const pinnedLater = await post(owner, tribe.id, { isPinned: true });
      const recent = await post(owner, tribe.id);
      const page1 = await community(null, { c: tribe.id, f: 1 });
      expect(ids(page1)).toEqual([pinnedLater, pinnedFirst, recent]);
      expect(page1.edges.map((e) => e.node.isPinned)).toEqual([true, true, false]);
      expect(page1.pageInfo.hasNextPage).toBe(true);
      const page2 = await community(null, { c: tribe.id, f: 1, a: page1.pageInfo.endCursor });
      expect(ids(page2)).toEqual([mid]);
      const page3 = await community(null, { c: tribe.id, f: 1, a: page2.pageInfo.endCursor });
      expect(ids(page3)).toEqual([old]);
      expect(page3.pageInfo).toEqual({ hasNextPage: false, endCursor: page3.edges[0].cursor });
      // A pinned post's cursor continues with the sorted posts from the top.
      expect(ids(await community(null, { c: tribe.id, a: page1.edges[0].cursor }))).toEqual([recent, mid, old]);
    });

    it('orders TOP by log10(1 + reactions + 2 × comments) + epoch(published_at) / 45000', async () => {
      const [owner, ...fans] = await Promise.all([1, 2, 3, 4].map(() => signupUser(t)));
      const tribe = await createTribe(t, owner);
      for (const fan of fans) await join(t, fan, tribe.handle);
      const popular = await post(owner, tribe.id);
      const slightlyNewer = await post(owner, tribe.id); // one minute later, no reactions
      for (const fan of fans) ok(await gql(t, fan, Q.react, { t: { postId: popular }, k: 'LIKE' }));
      clock.advance(10 * 3600_000);
      const muchNewer = await post(owner, tribe.id); // ten hours later, no reactions
      const rows = await sqlRows<{ id: string; hot_score: number; reaction_count: number; published_at: Date }>(
        t,
        sql`select id, hot_score, reaction_count, published_at from posts where community_id = ${tribe.id}`,
      );
      const formula = (r: (typeof rows)[number]) => Math.log10(1 + r.reaction_count) + new Date(r.published_at).getTime() / 1000 / 45000;
      for (const r of rows) expect(r.hot_score).toBeCloseTo(formula(r), 6);
      const byFormula = [...rows].sort((x, y) => formula(y) - formula(x)).map((r) => r.id);
      expect(byFormula).toEqual([muchNewer, popular, slightlyNewer]);
      expect(ids(await community(null, { c: tribe.id, s: 'TOP' }))).toEqual([muchNewer, popular, slightlyNewer]);
      expect(await walk((after) => community(null, { c: tribe.id, s: 'TOP', f: 1, a: after }))).toEqual([muchNewer, popular, slightlyNewer]);
      expect(ids(await community(null, { c: tribe.id, s: 'NEW' }))).toEqual([muchNewer, slightlyNewer, popular]);
    });

    it('orders ACTIVE by the latest comment, else the publication, and reorders after a comment', async () => {
      const owner = await signupUser(t);
      const tribe = await createTribe(t, owner);
      const first = await post(owner, tribe.id);
      const second = await post(owner, tribe.id);
      const third = await post(owner, tribe.id);
      expect(ids(await community(null, { c: tribe.id, s: 'ACTIVE' }))).toEqual([third, second, first]);
      clock.advance(60_000);
      ok(await gql(t, owner, Q.comment, { p: first, i: { content: 'bump' } }));
      expect(ids(await community(null, { c: tribe.id, s: 'ACTIVE' }))).toEqual([first, third, second]);
      expect(await walk((after) => community(null, { c: tribe.id, s: 'ACTIVE', f: 2, a: after }))).toEqual([first, third, second]);
      expect(ids(await community(null, { c: tribe.id, s: 'NEW' }))).toEqual([third, second, first]);
    });

    it('pages NEW with first: 2 while posts arrive, without skipping or repeating', async () => {
      const owner = await signupUser(t);
      const tribe = await createTribe(t, owner);
      const before: string[] = [];
      for (let i = 0; i < 6; i++) before.unshift(await post(owner, tribe.id));
      const seen = await walk(
        (after) => community(null, { c: tribe.id, f: 2, a: after }),
        async () => {
          await post(owner, tribe.id);
        },
      );
      expect(seen).toEqual(before);
    });

    it('shows public, members-only and paid posts by role, and refuses private tribes to outsiders', async () => {
      const [owner, member, outsider] = await Promise.all([signupUser(t), signupUser(t), signupUser(t)]);
      const open = await createTribe(t, owner);
      await join(t, member, open.handle);
      const pub = await post(owner, open.id);
      const membersOnly = await post(owner, open.id, { visibility: 'members' });
      const paid = await post(owner, open.id, { visibility: 'paid' });
      await post(owner, open.id, { status: 'draft' });
      expect(ids(await community(null, { c: open.id }))).toEqual([pub]);
      expect(ids(await community(outsider, { c: open.id }))).toEqual([pub]);
      expect(ids(await community(member, { c: open.id }))).toEqual([membersOnly, pub]);
      expect(ids(await community(owner, { c: open.id }))).toEqual([paid, membersOnly, pub]);

      const { tribe: closed, code } = await privateTribe(owner);
      await join(t, member, closed.handle, code);
      const secret = await post(owner, closed.id);
      expect(ids(await community(member, { c: closed.id }))).toEqual([secret]);
      expect(failure(await gql(t, null, Q.community, { c: closed.id }))).toEqual({ code: 'UNAUTHENTICATED', reason: 'unauthorized' });
      expect(failure(await gql(t, outsider, Q.community, { c: closed.id }))).toEqual({ code: 'FORBIDDEN', reason: 'forbidden' });
      expect(failure(await gql(t, outsider, Q.community, { c: '00000000-0000-4000-8000-000000000000' })).code).toBe('NOT_FOUND');
    });
  });
});
