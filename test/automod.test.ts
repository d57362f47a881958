import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { loadConfig } from '../subgraphs/kernel/index.js';
import { bearer, countOf, eventsOf, failure, gql, ok, sqlRows, startService, type TestService } from './support.js';
import { crew, setJoinedAt, staffedTribe, UNKNOWN_ID, type Actor, type Cast } from './factory.js';

const SETTINGS = 'blockedWords blockedDomains newMemberPostLimit requireApproval updatedAt community { id }';
const Q = {
  settings: `query($c: ID!){ moderationSettings(communityId: $c){ ${SETTINGS} } }`,
  update: `mutation($c: ID!, $i: ModerationSettingsInput!){ updateModerationSettings(communityId: $c, input: $i){ ${SETTINGS} } }`,
  post: 'mutation($c: ID!, $i: CreatePostInput!){ createPost(communityId: $c, input: $i){ id status heldReason publishedAt } }',
  updatePost: 'mutation($id: ID!, $i: UpdatePostInput!){ updatePost(id: $id, input: $i){ id status heldReason publishedAt } }',
  comment: 'mutation($p: ID!, $i: CreateCommentInput!){ createComment(postId: $p, input: $i){ id status heldReason } }',
  readPost: 'query($id: ID!){ post(id: $id){ id status heldReason commentCount } }',
  comments: 'query($p: ID!){ comments(postId: $p){ items { id status } } }',
  feed: 'query($c: ID!){ communityFeed(communityId: $c){ edges { node { id } } } }',
  held: 'query($c: ID!, $f: Int, $a: String){ heldContent(communityId: $c, first: $f, after: $a){ edges { cursor node { reason createdAt post { id } comment { id } } } pageInfo { hasNextPage endCursor } } }',
  review: 'mutation($c: ID!, $t: HeldContentTarget!, $ok: Boolean!){ reviewHeldContent(communityId: $c, target: $t, approve: $ok) }',
};

describe('automod', () => {
  let t: TestService;
  let cast: Cast;
  let other: Cast;

  beforeAll(async () => {
    // The tests' default raises the tribe default of newMemberPostLimit; these tests run with the product's, 3.
    t = await startService({ NEW_MEMBER_POST_LIMIT: '3' });
    [cast, other] = await Promise.all([crew(t), crew(t)]);
  });
  afterAll(async () => {
    await t.stop();
  });

  const DAY = 24 * 3_600_000;
  /** A staffed tribe whose people all joined two days ago (no longer new members), with these settings. */
  async function tribeWith(input: Record<string, unknown> = {}, people = cast) {
    const s = await staffedTribe(t, people);
    const past = new Date(Date.now() - 2 * DAY).toISOString();
    for (const who of [s.admin, s.moderator, s.member, s.member2]) await setJoinedAt(t, s.tribe.id, who.id, past);
    if (Object.keys(input).length) ok(await gql(t, s.owner, Q.update, { c: s.tribe.id, i: input }));
    return s;
  }
  const post = (as: Actor, communityId: string, content: string, extra: Record<string, unknown> = {}) =>
    gql(t, as, Q.post, { c: communityId, i: { content, ...extra } });
  const posted = async (as: Actor, communityId: string, content: string, extra: Record<string, unknown> = {}) =>
    ok(await post(as, communityId, content, extra)).createPost;
  const commented = async (as: Actor, postId: string, content: string) => ok(await gql(t, as, Q.comment, { p: postId, i: { content } })).createComment;
  const read = (as: Actor | null, id: string) => gql(t, as, Q.readPost, { id });
  const commentIds = async (as: Actor, postId: string) => ok(await gql(t, as, Q.comments, { p: postId })).comments.items.map((c: any) => c.id);
  const feedIds = async (as: Actor, communityId: string) => ok(await gql(t, as, Q.feed, { c: communityId })).communityFeed.edges.map((e: any) => e.node.id);
  const heldOf = async (as: Actor, communityId: string) => ok(await gql(t, as, Q.held, { c: communityId })).heldContent;
  const review = (as: Actor, communityId: string, target: Record<string, string>, approve: boolean) => gql(t, as, Q.review, { c: communityId, t: target, ok: approve });

  describe('moderationSettings', () => {
    it('has the defaults for a tribe that never changed them, readable by moderators and above only', async () => {
      const s = await tribeWith();
      for (const who of [s.owner, s.admin, s.moderator]) {
        expect(ok(await gql(t, who, Q.settings, { c: s.tribe.id })).moderationSettings).toEqual({
          blockedWords: [],
          blockedDomains: [],
          newMemberPostLimit: 3,
          requireApproval: false,
          updatedAt: null,
          community: { id: s.tribe.id },
        });
      }
      expect(failure(await gql(t, s.member, Q.settings, { c: s.tribe.id })).code).toBe('FORBIDDEN');
      expect(failure(await gql(t, s.outsider, Q.settings, { c: s.tribe.id })).code).toBe('FORBIDDEN');
      expect(failure(await gql(t, null, Q.settings, { c: s.tribe.id })).code).toBe('UNAUTHENTICATED');
      expect(failure(await gql(t, s.owner, Q.settings, { c: UNKNOWN_ID })).code).toBe('NOT_FOUND');
    });

    it('is changed by the owner and admins only (not moderators, members or admins of another tribe), field by field', async () => {
      const s = await tribeWith();
      const mine = ok(await gql(t, s.owner, Q.update, { c: s.tribe.id, i: { blockedWords: [' Spam ', 'spam', 'Free  Money'], blockedDomains: ['https://www.Bad.example/x'] } }))
        .updateModerationSettings;
      expect(mine).toMatchObject({ blockedWords: ['spam', 'free money'], blockedDomains: ['bad.example'], newMemberPostLimit: 3, requireApproval: false });
      expect(mine.updatedAt).toEqual(expect.any(String));
      const byAdmin = ok(await gql(t, s.admin, Q.update, { c: s.tribe.id, i: { requireApproval: true, newMemberPostLimit: 5 } })).updateModerationSettings;
      expect(byAdmin).toMatchObject({ blockedWords: ['spam', 'free money'], blockedDomains: ['bad.example'], newMemberPostLimit: 5, requireApproval: true });
      for (const who of [s.moderator, s.member, s.outsider]) {
        expect(failure(await gql(t, who, Q.update, { c: s.tribe.id, i: { requireApproval: false } })).code).toBe('FORBIDDEN');
      }
      const foreign = await tribeWith({}, other);
      expect(failure(await gql(t, s.admin, Q.update, { c: foreign.tribe.id, i: { requireApproval: true } })).code).toBe('FORBIDDEN');
      expect(ok(await gql(t, s.owner, Q.settings, { c: s.tribe.id })).moderationSettings.requireApproval).toBe(true);
    });

    it('refuses a bad domain, a negative limit and too many words', async () => {
      const s = await tribeWith();
      expect(failure(await gql(t, s.owner, Q.update, { c: s.tribe.id, i: { blockedDomains: ['not a domain'] } })).reason).toBe('invalid_input');
      expect(failure(await gql(t, s.owner, Q.update, { c: s.tribe.id, i: { newMemberPostLimit: -1 } })).reason).toBe('invalid_input');
      expect(failure(await gql(t, s.owner, Q.update, { c: s.tribe.id, i: { blockedWords: Array.from({ length: 201 }, (_, i) => `w${i}`) } })).reason).toBe(
        'invalid_input',
      );
      expect(ok(await gql(t, s.owner, Q.settings, { c: s.tribe.id })).moderationSettings.updatedAt).toBeNull();
    });
  });

  describe('holding posts', () => {
    it('holds a plain member\'s post with a blocked word: its author and moderators see it, nobody else; no event', async () => {
      const s = await tribeWith({ blockedWords: ['cheap'] });
      const held = await posted(s.member, s.tribe.id, '<p>Buy CHEAP pills</p>');
      expect(held).toMatchObject({ status: 'pending_review', heldReason: 'blocked_word', publishedAt: null });
      for (const who of [s.member, s.moderator, s.admin, s.owner]) expect(ok(await read(who, held.id)).post.id).toBe(held.id);
      for (const who of [s.member2, s.outsider, null]) expect(failure(await read(who, held.id)).code).toBe('NOT_FOUND');
      expect(await feedIds(s.member2, s.tribe.id)).not.toContain(held.id);
      expect(await eventsOf(t, s.tribe.id, 'post.created')).toEqual([]);
      // A word inside another word is fine.
      expect((await posted(s.member, s.tribe.id, '<p>cheapest ever</p>')).status).toBe('published');
    });

    it('holds a link to a blocked domain or its subdomains, not look-alikes', async () => {
      const s = await tribeWith({ blockedDomains: ['spam.example'] });
      expect((await posted(s.member, s.tribe.id, '<p><a href="https://go.spam.example/x">deal</a></p>')).heldReason).toBe('blocked_domain');
      expect((await posted(s.member, s.tribe.id, '<p>visit spam.example now</p>')).status).toBe('pending_review');
      expect((await posted(s.member, s.tribe.id, '<p><a href="https://notspam.example">ok</a></p>')).status).toBe('published');
    });

    it('exempts moderators, admins and the owner', async () => {
      const s = await tribeWith({ blockedWords: ['cheap'], requireApproval: true });
      for (const who of [s.moderator, s.admin, s.owner]) expect((await posted(who, s.tribe.id, '<p>cheap</p>')).status).toBe('published');
    });

    it('holds every post of a plain member while requireApproval is on, but not comments or drafts', async () => {
      const s = await tribeWith({ requireApproval: true });
      const held = await posted(s.member, s.tribe.id, '<p>hello</p>');
      expect(held).toMatchObject({ status: 'pending_review', heldReason: 'approval_required' });
      const draft = await posted(s.member, s.tribe.id, '<p>later</p>', { status: 'draft' });
      expect(draft.status).toBe('draft');
      // Publishing the draft is screened like a new post.
      expect(ok(await gql(t, s.member, Q.updatePost, { id: draft.id, i: { status: 'published' } })).updatePost).toMatchObject({
        status: 'pending_review',
        heldReason: 'approval_required',
        publishedAt: null,
      });
      // The author cannot publish a held post.
      expect(failure(await gql(t, s.member, Q.updatePost, { id: held.id, i: { status: 'published' } })).reason).toBe('held_for_review');
      const open = await posted(s.moderator, s.tribe.id, '<p>rules</p>');
      expect((await commented(s.member, open.id, 'a comment')).status).toBe('published');
    });

    it('holds over the resource API too', async () => {
      const s = await tribeWith({ blockedWords: ['cheap'] });
      const res = await t.api.post(`/v1/communities/${s.tribe.id}/posts`).set(bearer(s.member)).send({ content: 'cheap stuff' });
      expect(res.status).toBe(201);
      const [row] = await sqlRows(t, sql`select status, held_reason from posts where id = ${res.body.data.id}`);
      expect(row).toEqual({ status: 'pending_review', held_reason: 'blocked_word' });
      expect((await t.api.get(`/v1/communities/${s.tribe.id}/posts/${res.body.data.id}`).set(bearer(s.member2))).status).toBe(404);
    });
  });

  describe('holding comments', () => {
    it('holds a comment with a blocked word: listed for its author and moderators only, not counted, nobody notified, no replies', async () => {
      const s = await tribeWith({ blockedWords: ['scam'] });
      const p = await posted(s.owner, s.tribe.id, '<p>welcome</p>');
      const held = await commented(s.member, p.id, 'total scam');
      expect(held).toMatchObject({ status: 'pending_review', heldReason: 'blocked_word' });
      expect(await commentIds(s.member, p.id)).toEqual([held.id]);
      expect(await commentIds(s.moderator, p.id)).toEqual([held.id]);
      expect(await commentIds(s.member2, p.id)).toEqual([]);
      expect(ok(await read(s.owner, p.id)).post.commentCount).toBe(0);
      expect(await eventsOf(t, s.tribe.id, 'comment.replied')).toEqual([]);
      const reply = await gql(t, s.member, Q.comment, { p: p.id, i: { content: 'me again', parentId: held.id } });
      expect(failure(reply).reason).toBe('invalid_parent');
    });
  });

  describe('heldContent and reviewHeldContent', () => {
    it('lists held posts and comments oldest first for moderators; approving publishes, rejecting deletes', async () => {
      const s = await tribeWith({ blockedWords: ['cheap'] });
      const open = await posted(s.owner, s.tribe.id, '<p>welcome</p>');
      const a = await posted(s.member, s.tribe.id, '<p>cheap one</p>');
      const c = await commented(s.member2, open.id, 'cheap two');
      const b = await posted(s.member, s.tribe.id, '<p>cheap three</p>');
      const page = await heldOf(s.moderator, s.tribe.id);
      expect(page.edges.map((e: any) => e.node.post?.id ?? e.node.comment?.id)).toEqual([a.id, c.id, b.id]);
      expect(page.edges[0].node.reason).toBe('blocked_word');
      const first = ok(await gql(t, s.moderator, Q.held, { c: s.tribe.id, f: 1 })).heldContent;
      const next = ok(await gql(t, s.moderator, Q.held, { c: s.tribe.id, f: 2, a: first.pageInfo.endCursor })).heldContent;
      expect(next.edges.map((e: any) => e.node.post?.id ?? e.node.comment?.id)).toEqual([c.id, b.id]);
      expect(failure(await gql(t, s.member, Q.held, { c: s.tribe.id })).code).toBe('FORBIDDEN');

      // Members cannot review; a moderator of another tribe cannot either.
      expect(failure(await review(s.member2, s.tribe.id, { postId: a.id }, true)).code).toBe('FORBIDDEN');
      const foreign = await tribeWith({}, other);
      expect(failure(await review(other.moderator, foreign.tribe.id, { postId: a.id }, true)).code).toBe('NOT_FOUND');
      expect(failure(await review(other.moderator, s.tribe.id, { postId: a.id }, true)).code).toBe('FORBIDDEN');

      expect(ok(await review(s.moderator, s.tribe.id, { postId: a.id }, true)).reviewHeldContent).toBe(true);
      expect(ok(await read(s.member2, a.id)).post).toMatchObject({ status: 'published', heldReason: null });
      expect(await feedIds(s.member2, s.tribe.id)).toContain(a.id);
      expect((await eventsOf(t, s.tribe.id, 'post.created')).map((e) => e.data.postId)).toContain(a.id);
      // Approved once: it is no longer held.
      expect(failure(await review(s.moderator, s.tribe.id, { postId: a.id }, true)).code).toBe('NOT_FOUND');

      ok(await review(s.moderator, s.tribe.id, { commentId: c.id }, true));
      expect(await commentIds(s.member, open.id)).toEqual([c.id]);
      expect(ok(await read(s.member, open.id)).post.commentCount).toBe(1);
      expect((await eventsOf(t, s.tribe.id, 'comment.replied')).map((e) => e.data.commentId)).toEqual([c.id]);

      ok(await review(s.admin, s.tribe.id, { postId: b.id }, false));
      expect(await countOf(t, sql`select count(*)::int as n from posts where id = ${b.id}`)).toBe(0);
      expect((await heldOf(s.moderator, s.tribe.id)).edges).toEqual([]);
    });
  });

  describe('the moderation queue', () => {
    const QUEUE = `query($c: ID!, $s: ModerationStatus){ moderationQueue(communityId: $c, status: $s){ edges { node { targetType targetId reportCount content action actionReason post { id status heldReason } } } } }`;
    const AUDIT = 'query($c: ID!){ auditLog(communityId: $c){ edges { node { action targetType targetId reason actor { id } } } } }';
    const queue = async (as: Actor, communityId: string, status: string) =>
      ok(await gql(t, as, QUEUE, { c: communityId, s: status })).moderationQueue.edges.map((e: any) => e.node);

    it('takes in held posts and comments (no report) and resolves them when a moderator approves or rejects them', async () => {
      const s = await tribeWith({ blockedWords: ['cheap'] });
      const open = await posted(s.owner, s.tribe.id, '<p>welcome</p>');
      const p = await posted(s.member, s.tribe.id, '<p>cheap post</p>');
      const c = await commented(s.member2, open.id, 'cheap comment');
      const items = await queue(s.moderator, s.tribe.id, 'OPEN');
      expect(items).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ targetType: 'POST', targetId: p.id, reportCount: 0, content: '<p>cheap post</p>', post: { id: p.id, status: 'pending_review', heldReason: 'blocked_word' } }),
          expect.objectContaining({ targetType: 'COMMENT', targetId: c.id, reportCount: 0, content: 'cheap comment', post: expect.objectContaining({ id: open.id }) }),
        ]),
      );
      expect(items).toHaveLength(2);

      ok(await review(s.moderator, s.tribe.id, { postId: p.id }, true));
      ok(await review(s.moderator, s.tribe.id, { commentId: c.id }, false));
      expect(await queue(s.moderator, s.tribe.id, 'OPEN')).toEqual([]);
      const resolved = await queue(s.moderator, s.tribe.id, 'RESOLVED');
      expect(resolved.map((i: any) => [i.targetId, i.action, i.actionReason])).toEqual(
        expect.arrayContaining([
          [p.id, 'DISMISS', 'automod: approved'],
          [c.id, 'REMOVE_CONTENT', 'automod: rejected'],
        ]),
      );
      const audit = ok(await gql(t, s.owner, AUDIT, { c: s.tribe.id })).auditLog.edges.map((e: any) => e.node);
      expect(audit).toEqual(
        expect.arrayContaining([
          { action: 'DISMISS', targetType: 'POST', targetId: p.id, reason: 'automod: approved', actor: { id: s.moderator.id } },
          { action: 'REMOVE_CONTENT', targetType: 'COMMENT', targetId: c.id, reason: 'automod: rejected', actor: { id: s.moderator.id } },
        ]),
      );
    });
  });

  describe('newMemberPostLimit', () => {
    it('refuses a plain member\'s posts past the limit in their first 24 hours, with new_member_post_limit, and writes nothing', async () => {
      const s = await tribeWith();
      const now = Date.now();
      await setJoinedAt(t, s.tribe.id, s.member.id, new Date(now - 3_600_000).toISOString());
      for (let i = 0; i < 3; i += 1) await posted(s.member, s.tribe.id, `<p>hello ${i}</p>`);
      const refused = await post(s.member, s.tribe.id, '<p>one more</p>');
      expect(failure(refused)).toEqual({ code: 'RATE_LIMITED', reason: 'new_member_post_limit' });
      const wait = refused.errors![0].extensions!.details.retryAfterSeconds;
      expect(wait).toBeGreaterThan(22 * 3600);
      expect(wait).toBeLessThanOrEqual(23 * 3600);
      expect(await countOf(t, sql`select count(*)::int as n from posts where author_id = ${s.member.id} and community_id = ${s.tribe.id}`)).toBe(3);
      // Comments are not limited; after 24 hours the member posts again.
      const p = await posted(s.owner, s.tribe.id, '<p>x</p>');
      await commented(s.member, p.id, 'fine');
      await setJoinedAt(t, s.tribe.id, s.member.id, new Date(now - 25 * 3_600_000).toISOString());
      expect((await posted(s.member, s.tribe.id, '<p>back</p>')).status).toBe('published');
    });

    it('holds under concurrency: 20 posts sent at once by a new member of a tribe with the limit 3 write exactly 3', async () => {
      const s = await tribeWith();
      await setJoinedAt(t, s.tribe.id, s.member.id, new Date(Date.now() - 3_600_000).toISOString());
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => post(s.member, s.tribe.id, `<p>at once ${i}</p>`)));
      const refused = answers.filter((a) => a.errors);
      expect(answers.length - refused.length).toBe(3);
      expect(refused.map((a) => failure(a))).toEqual(Array(17).fill({ code: 'RATE_LIMITED', reason: 'new_member_post_limit' }));
      expect(await countOf(t, sql`select count(*)::int as n from posts where author_id = ${s.member.id} and community_id = ${s.tribe.id}`)).toBe(3);
    });

    it('is 3 for a tribe that never set it unless NEW_MEMBER_POST_LIMIT says otherwise', () => {
      expect(loadConfig({}).automod.newMemberPostLimit).toBe(3);
      expect(loadConfig({ NEW_MEMBER_POST_LIMIT: '0' }).automod.newMemberPostLimit).toBe(0);
      expect(() => loadConfig({ NEW_MEMBER_POST_LIMIT: '-1' })).toThrow(/NEW_MEMBER_POST_LIMIT/);
    });

    it('does not limit moderators, admins or the owner, and follows the tribe\'s setting', async () => {
      const s = await tribeWith({ newMemberPostLimit: 1 });
      const justNow = new Date().toISOString();
      for (const who of [s.moderator, s.admin, s.member]) await setJoinedAt(t, s.tribe.id, who.id, justNow);
      for (const who of [s.moderator, s.admin]) for (let i = 0; i < 4; i += 1) await posted(who, s.tribe.id, `<p>${i}</p>`);
      await posted(s.member, s.tribe.id, '<p>first</p>');
      expect(failure(await post(s.member, s.tribe.id, '<p>second</p>')).reason).toBe('new_member_post_limit');
      ok(await gql(t, s.owner, Q.update, { c: s.tribe.id, i: { newMemberPostLimit: 2 } }));
      await posted(s.member, s.tribe.id, '<p>second</p>');
    });
  });
});
