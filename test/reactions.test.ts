import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { fanOut } from '../subgraphs/webhooks/index.js';
import { createPost, createTribe, join, setRole, signupUser, UNKNOWN_ID, type TestUser } from './factory.js';
import { countOf, eventsOf, gql, sqlRows, startService, type TestService, ok, failure } from './support.js';


const REACTIONS = 'total counts { kind count } viewerReaction';
const Q = {
  react: `mutation($t: ReactionTarget!, $k: ReactionKind!){ react(target: $t, kind: $k){ ${REACTIONS} } }`,
  unreact: `mutation($t: ReactionTarget!){ unreact(target: $t){ ${REACTIONS} } }`,
  post: `query($id: ID!){ post(id: $id){ id commentCount reactions { ${REACTIONS} } } }`,
  comments: `query($p: ID!){ comments(postId: $p){ items { id reactions { ${REACTIONS} } } } }`,
  comment: 'mutation($p: ID!, $i: CreateCommentInput!){ createComment(postId: $p, input: $i){ id } }',
  deleteComment: 'mutation($id: ID!){ deleteComment(id: $id) }',
  invite: 'mutation($c: ID!){ createInvite(communityId: $c) }',
  feed: `query($f: Int){ homeFeed(first: $f){ edges { cursor node { id commentCount author { id username } community { id name }
    reactions { ${REACTIONS} } } } pageInfo { hasNextPage endCursor } } }`,
};

describe('reactions', () => {
  let t: TestService;
  const react = (as: TestUser | null, target: Record<string, unknown>, kind: string) => gql(t, as, Q.react, { t: target, k: kind });
  const reactionsOn = async (as: TestUser | null, postId: string) => ok(await gql(t, as, Q.post, { id: postId })).post.reactions;
  const reactionRows = (communityId: string) => countOf(t, sql`select count(*)::int as n from reactions where community_id = ${communityId}`);
  const counters = async (postId: string) =>
    (await sqlRows<{ reaction_count: number; comment_count: number; hot_score: number }>(
      t,
      sql`select reaction_count, comment_count, hot_score from posts where id = ${postId}`,
    ))[0];

  /** A public tribe with an owner, two members, an outsider, and a post by the owner. */
  const world = async (overrides: Record<string, unknown> = {}) => {
    const [owner, member, member2, outsider] = await Promise.all([1, 2, 3, 4].map(() => signupUser(t)));
    const tribe = await createTribe(t, owner, overrides);
    const code = tribe.isPublic ? undefined : (ok(await gql(t, owner, Q.invite, { c: tribe.id })).createInvite as string);
    for (const u of [member, member2]) await join(t, u, tribe.handle, code);
    const post = await createPost(t, owner, tribe.id);
    return { owner, member, member2, outsider, tribe, post: post.id };
  };

  beforeAll(async () => {
    t = await startService();
  });
  afterAll(async () => {
    await t.stop();
  });

  describe('react', () => {
    it('adds one reaction per user, replaces it with another kind (the total stays), and counts kinds in enum order', async () => {
      const w = await world();
      const before = await counters(w.post);
      expect(ok(await react(w.member, { postId: w.post }, 'LOVE')).react).toEqual({ total: 1, counts: [{ kind: 'LOVE', count: 1 }], viewerReaction: 'LOVE' });
      expect(ok(await react(w.member2, { postId: w.post }, 'LIKE')).react).toEqual({
        total: 2,
        counts: [{ kind: 'LIKE', count: 1 }, { kind: 'LOVE', count: 1 }],
        viewerReaction: 'LIKE',
      });
      expect(ok(await react(w.member, { postId: w.post }, 'CURIOUS')).react).toEqual({
        total: 2,
        counts: [{ kind: 'LIKE', count: 1 }, { kind: 'CURIOUS', count: 1 }],
        viewerReaction: 'CURIOUS',
      });
      expect(ok(await react(w.member, { postId: w.post }, 'CURIOUS')).react.total).toBe(2);
      const after = await counters(w.post);
      expect(after.reaction_count).toBe(2);
      expect(after.hot_score).toBeCloseTo(before.hot_score + Math.log10(3), 9);
      expect(await reactionRows(w.tribe.id)).toBe(2);
    });

    it("shows each viewer their own reaction, and none to anonymous viewers or who has not reacted", async () => {
      const w = await world();
      ok(await react(w.member, { postId: w.post }, 'LAUGH'));
      ok(await react(w.member2, { postId: w.post }, 'INSIGHTFUL'));
      expect((await reactionsOn(w.member, w.post)).viewerReaction).toBe('LAUGH');
      expect((await reactionsOn(w.member2, w.post)).viewerReaction).toBe('INSIGHTFUL');
      expect(await reactionsOn(w.owner, w.post)).toEqual({
        total: 2,
        counts: [{ kind: 'LAUGH', count: 1 }, { kind: 'INSIGHTFUL', count: 1 }],
        viewerReaction: null,
      });
      expect((await reactionsOn(null, w.post)).viewerReaction).toBeNull();
    });

    it('counts two concurrent reactions of the same user once', async () => {
      const w = await world();
      const results = await Promise.all(['LIKE', 'LOVE', 'LIKE', 'CELEBRATE'].map((k) => react(w.member, { postId: w.post }, k)));
      for (const r of results) expect(r.errors).toBeUndefined();
      expect(await reactionRows(w.tribe.id)).toBe(1);
      expect((await counters(w.post)).reaction_count).toBe(1);
      expect((await reactionsOn(w.member, w.post)).total).toBe(1);
      expect(await eventsOf(t, w.tribe.id, 'post.reacted')).toHaveLength(1);
    });

    it('reacts to comments: counts on the comment, not the post, and never on a tombstone', async () => {
      const w = await world();
      const parent = ok(await gql(t, w.member, Q.comment, { p: w.post, i: { content: 'parent' } })).createComment.id;
      const reply = ok(await gql(t, w.member2, Q.comment, { p: w.post, i: { content: 'reply', parentId: parent } })).createComment.id;
      expect(ok(await react(w.owner, { commentId: parent }, 'CELEBRATE')).react).toEqual({
        total: 1,
        counts: [{ kind: 'CELEBRATE', count: 1 }],
        viewerReaction: 'CELEBRATE',
      });
      ok(await react(w.member2, { commentId: parent }, 'CELEBRATE'));
      const listed = ok(await gql(t, w.owner, Q.comments, { p: w.post })).comments.items;
      expect(listed.map((c: any) => [c.id, c.reactions.total, c.reactions.viewerReaction])).toEqual([
        [parent, 2, 'CELEBRATE'],
        [reply, 0, null],
      ]);
      expect((await sqlRows(t, sql`select reaction_count from comments where id = ${parent}`))[0].reaction_count).toBe(2);
      expect((await counters(w.post)).reaction_count).toBe(0);
      const [event] = await eventsOf(t, w.tribe.id, 'post.reacted');
      expect(event.data).toEqual({ postId: w.post, commentId: parent, userId: w.owner.id, kind: 'CELEBRATE', authorId: w.member.id });

      ok(await gql(t, w.member, Q.deleteComment, { id: parent }));
      const rows = await reactionRows(w.tribe.id);
      expect(failure(await react(w.owner, { commentId: parent }, 'LIKE'))).toEqual({ code: 'NOT_FOUND', reason: 'not_found' });
      expect(await reactionRows(w.tribe.id)).toBe(rows);
    });

    it('records post.reacted in the outbox for a new reaction (not a replacement), which fan-out never delivers as a webhook', async () => {
      const w = await world();
      ok(await react(w.member, { postId: w.post }, 'LIKE'));
      ok(await react(w.member, { postId: w.post }, 'LOVE'));
      const events = await eventsOf(t, w.tribe.id, 'post.reacted');
      expect(events.map((e) => e.data)).toEqual([{ postId: w.post, userId: w.member.id, kind: 'LIKE', authorId: w.owner.id }]);
      await fanOut(t.deps);
      expect(await countOf(t, sql`select count(*)::int as n from webhook_deliveries where event = 'post.reacted'`)).toBe(0);
      expect(await countOf(t, sql`select count(*)::int as n from outbox_events where type = 'post.reacted' and processed_at is null`)).toBe(0);
    });

    it('records the reacting member as active in the tribe', async () => {
      const w = await world();
      await sqlRows(t, sql`update members set last_active_at = '2020-01-01' where community_id = ${w.tribe.id} and user_id = ${w.member.id}`);
      ok(await react(w.member, { postId: w.post }, 'LIKE'));
      const [row] = await sqlRows(t, sql`select last_active_at from members where community_id = ${w.tribe.id} and user_id = ${w.member.id}`);
      expect(new Date(row.last_active_at).getFullYear()).toBeGreaterThan(2020);
    });
  });

  describe('refusals write nothing', () => {
    it('refuses anonymous callers (UNAUTHENTICATED) and outsiders of a public tribe (FORBIDDEN)', async () => {
      const w = await world();
      expect(failure(await react(null, { postId: w.post }, 'LIKE'))).toEqual({ code: 'UNAUTHENTICATED', reason: 'unauthorized' });
      expect(failure(await react(w.outsider, { postId: w.post }, 'LIKE'))).toEqual({ code: 'FORBIDDEN', reason: 'forbidden' });
      expect(failure(await gql(t, w.outsider, Q.unreact, { t: { postId: w.post } }))).toEqual({ code: 'FORBIDDEN', reason: 'forbidden' });
      expect(await reactionRows(w.tribe.id)).toBe(0);
      expect((await counters(w.post)).reaction_count).toBe(0);
      expect(await eventsOf(t, w.tribe.id, 'post.reacted')).toEqual([]);
    });

    it("hides a private tribe's posts and comments from outsiders (NOT_FOUND)", async () => {
      const w = await world({ isPublic: false });
      const comment = ok(await gql(t, w.member, Q.comment, { p: w.post, i: { content: 'secret' } })).createComment.id;
      expect(failure(await react(w.outsider, { postId: w.post }, 'LIKE'))).toEqual({ code: 'NOT_FOUND', reason: 'not_found' });
      expect(failure(await react(w.outsider, { commentId: comment }, 'LIKE'))).toEqual({ code: 'NOT_FOUND', reason: 'not_found' });
      expect(failure(await react(null, { postId: w.post }, 'LIKE'))).toEqual({ code: 'UNAUTHENTICATED', reason: 'unauthorized' });
      expect(await reactionRows(w.tribe.id)).toBe(0);
      ok(await react(w.member2, { postId: w.post }, 'LIKE'));
      expect(await reactionRows(w.tribe.id)).toBe(1);
    });

    it('refuses posts a member may not see, drafts, and unknown targets (NOT_FOUND)', async () => {
      const w = await world();
      const paid = (await createPost(t, w.owner, w.tribe.id, { visibility: 'paid' })).id;
      const draft = (await createPost(t, w.member, w.tribe.id, { status: 'draft' })).id;
      const notFound = { code: 'NOT_FOUND', reason: 'not_found' };
      expect(failure(await react(w.member, { postId: paid }, 'LIKE'))).toEqual(notFound);
      expect(failure(await react(w.member, { postId: draft }, 'LIKE'))).toEqual(notFound);
      expect(failure(await react(w.member, { postId: UNKNOWN_ID }, 'LIKE'))).toEqual(notFound);
      expect(failure(await react(w.member, { commentId: UNKNOWN_ID }, 'LIKE'))).toEqual(notFound);
      expect(failure(await react(w.member, { commentId: 'nope' }, 'LIKE'))).toEqual(notFound);
      expect(await reactionRows(w.tribe.id)).toBe(0);
    });

    it('needs exactly one of postId and commentId (invalid_target)', async () => {
      const w = await world();
      const comment = ok(await gql(t, w.member, Q.comment, { p: w.post, i: { content: 'c' } })).createComment.id;
      const invalid = { code: 'BAD_USER_INPUT', reason: 'invalid_target' };
      expect(failure(await react(w.member, {}, 'LIKE'))).toEqual(invalid);
      expect(failure(await react(w.member, { postId: w.post, commentId: comment }, 'LIKE'))).toEqual(invalid);
      expect(failure(await gql(t, w.member, Q.unreact, { t: { postId: null, commentId: null } }))).toEqual(invalid);
      expect(failure(await react(w.member, { postId: w.post }, 'ANGRY')).code).toBe('BAD_USER_INPUT');
      expect(await reactionRows(w.tribe.id)).toBe(0);
    });
  });

  describe('unreact', () => {
    it('removes the reaction and its count, and is idempotent', async () => {
      const w = await world();
      const before = await counters(w.post);
      ok(await react(w.member, { postId: w.post }, 'LIKE'));
      ok(await react(w.member2, { postId: w.post }, 'LIKE'));
      expect(ok(await gql(t, w.member, Q.unreact, { t: { postId: w.post } })).unreact).toEqual({
        total: 1,
        counts: [{ kind: 'LIKE', count: 1 }],
        viewerReaction: null,
      });
      expect(ok(await gql(t, w.member, Q.unreact, { t: { postId: w.post } })).unreact.total).toBe(1);
      const after = await counters(w.post);
      expect(after.reaction_count).toBe(1);
      expect(after.hot_score).toBeCloseTo(before.hot_score + Math.log10(2), 9);
      expect(await reactionRows(w.tribe.id)).toBe(1);
      // A member who never reacted unreacts: nothing changes.
      expect(ok(await gql(t, w.owner, Q.unreact, { t: { postId: w.post } })).unreact.total).toBe(1);
    });
  });

  describe('Post.commentCount', () => {
    it('counts the comments of a post', async () => {
      const w = await world();
      for (const content of ['a', 'b', 'c']) ok(await gql(t, w.member, Q.comment, { p: w.post, i: { content } }));
      expect(ok(await gql(t, w.owner, Q.post, { id: w.post })).post.commentCount).toBe(3);
    });
  });

  describe('a feed page with reactions', () => {
    it('costs the same number of SQL statements at first: 10 and first: 50', async () => {
      const [owner, owner2, viewer] = await Promise.all([signupUser(t), signupUser(t), signupUser(t)]);
      const [a, b] = await Promise.all([createTribe(t, owner), createTribe(t, owner2)]);
      await join(t, viewer, a.handle);
      await join(t, viewer, b.handle);
      await setRole(t, owner, a.id, viewer.id, 'moderator');
      const posts: string[] = [];
      for (let i = 0; i < 52; i++) posts.push((await createPost(t, i % 3 ? owner : owner2, i % 3 ? a.id : b.id, { visibility: i % 5 ? 'public' : 'members' })).id);
      for (const [i, p] of posts.entries()) {
        if (i % 2) ok(await react(viewer, { postId: p }, 'LIKE'));
        if (i % 3 === 1) ok(await react(owner, { postId: p }, 'LOVE'));
      }
      const statements = async (first: number) => {
        const before = t.deps.database.stats.statements;
        const page = ok(await gql(t, viewer, Q.feed, { f: first })).homeFeed;
        expect(page.edges).toHaveLength(first);
        for (const e of page.edges) {
          expect(e.node.author.username).toBeTruthy();
          expect(e.node.community.name).toBeTruthy();
          expect(e.node.commentCount).toBe(0);
        }
        expect(page.edges.some((e: any) => e.node.reactions.viewerReaction === 'LIKE')).toBe(true);
        expect(page.edges.some((e: any) => e.node.reactions.total === 2)).toBe(true);
        return t.deps.database.stats.statements - before;
      };
      await statements(10); // warm-up: nothing cached between requests, but the first request may prepare things
      const s10 = await statements(10);
      const s50 = await statements(50);
      expect(s50).toBe(s10);
      expect(s10).toBeLessThanOrEqual(10);
    });
  });
});
