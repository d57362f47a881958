import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { expectError } from './expected.js';
import { actor, crew, join, setJoinedAt, staffedTribe as staffed, unique, UNKNOWN_ID, type Actor, type Cast } from './factory.js';
import { bearer, countOf, failure, gql, movableClock, type GqlResult, ok, sqlRows, startService, type TestService } from './support.js';

const FORBIDDEN = { code: 'FORBIDDEN', reason: 'forbidden' };
const UNAUTHENTICATED = { code: 'UNAUTHENTICATED', reason: 'unauthorized' };
const NOT_FOUND = { code: 'NOT_FOUND', reason: 'not_found' };
const MUTED = { code: 'FORBIDDEN', reason: 'member_muted' };
const BANNED = { code: 'FORBIDDEN', reason: 'member_banned' };

const ITEM = 'id targetType targetId subject { id } status reportCount reasons content post { id } removedAt resolvedAt resolvedBy { id } action actionReason';
const Q = {
  report: 'mutation($c: ID!, $t: ReportTarget!, $r: ReportReason!, $n: String){ report(communityId: $c, target: $t, reason: $r, note: $n){ id targetType targetId reason note resolvedAt } }',
  queue: `query($c: ID!, $s: ModerationStatus, $f: Int, $a: String){ moderationQueue(communityId: $c, status: $s, first: $f, after: $a){ edges { cursor node { ${ITEM} } } pageInfo { hasNextPage endCursor } } }`,
  resolve: `mutation($c: ID!, $t: ID!, $a: ModerationAction!, $r: String, $d: Int){ resolveReports(communityId: $c, targetId: $t, action: $a, reason: $r, durationHours: $d){ ${ITEM} } }`,
  restore: 'mutation($c: ID!, $p: ID, $cm: ID){ restoreContent(communityId: $c, postId: $p, commentId: $cm) }',
  unban: 'mutation($c: ID!, $u: ID!){ unbanMember(communityId: $c, userId: $u) }',
  unmute: 'mutation($c: ID!, $u: ID!){ unmuteMember(communityId: $c, userId: $u) }',
  audit: 'query($c: ID!, $f: Int, $a: String){ auditLog(communityId: $c, first: $f, after: $a){ edges { node { actor { id } action targetType targetId reason durationHours createdAt } } pageInfo { hasNextPage endCursor } } }',
  status: 'query($c: ID!){ myModerationStatus(communityId: $c){ warnings { reason } mutedUntil banned } }',
  post: 'mutation($c: ID!, $i: CreatePostInput!){ createPost(communityId: $c, input: $i){ id } }',
  comment: 'mutation($p: ID!, $i: CreateCommentInput!){ createComment(postId: $p, input: $i){ id } }',
  readPost: 'query($id: ID!){ post(id: $id){ id moderation { removedAt reason } } }',
  search: 'query($q: String!, $c: ID){ search(query: $q, communityId: $c, first: 50){ edges { node { post { id } } } } }',
  homeFeed: 'query{ homeFeed(first: 50){ edges { node { id } } } }',
  feed: 'query($c: ID!){ communityFeed(communityId: $c, first: 50){ edges { node { id moderation { reason } } } } }',
  comments: 'query($p: ID!){ comments(postId: $p, perPage: 50){ items { id moderation { reason } } } }',
  win: 'mutation($c: ID!, $i: PostWinInput!){ postWin(communityId: $c, input: $i){ id } }',
  joinByHandle: 'mutation($h: String!, $c: String){ joinCommunity(handle: $h, inviteCode: $c){ id } }',
  invite: 'mutation($c: ID!){ createInvite(communityId: $c) }',
  startConversation: 'mutation($u: [ID!]!){ startConversation(userIds: $u){ id } }',
  notifications: 'query{ notifications(first: 50){ edges { node { kind text community { id } actors { id } } } } }',
  muteTribe: 'mutation($c: ID!){ muteCommunity(communityId: $c, muted: true) }',
  preferences: 'mutation($p: [NotificationPreferenceInput!]!){ updateNotificationPreferences(preferences: $p){ kind } }',
  settings: 'mutation($c: ID!, $i: ModerationSettingsInput!){ updateModerationSettings(communityId: $c, input: $i){ requireApproval } }',
  heldPost: 'query($id: ID!){ post(id: $id){ id status } }',
  send: 'mutation($c: ID!, $b: String!){ sendMessage(conversationId: $c, body: $b){ id } }',
};

type Staffed = Awaited<ReturnType<typeof staffed>>;
const ROLES = ['owner', 'admin', 'moderator', 'member'] as const;

describe('moderation', () => {
  let t: TestService;
  let cast: Cast;
  const clock = movableClock();

  beforeAll(async () => {
    t = await startService({}, clock.now);
    cast = await crew(t);
  });
  afterAll(async () => {
    await t.stop();
  });

  /** A staffed tribe whose members joined two days ago (past the new-member post limit of automod). */
  const staffedTribe = async (c: Cast, options: { isPublic?: boolean } = {}) => {
    const s = await staffed(t, c, options);
    for (const m of [s.member, s.member2]) await setJoinedAt(t, s.tribe.id, m.id, new Date(Date.now() - 2 * 86_400_000).toISOString());
    return s;
  };
  const newPost = async (who: Actor, communityId: string, content = `post ${unique()}`) => ok(await gql(t, who, Q.post, { c: communityId, i: { content } })).createPost.id as string;
  const newComment = async (who: Actor, postId: string) => ok(await gql(t, who, Q.comment, { p: postId, i: { content: `comment ${unique()}` } })).createComment.id as string;
  const report = (who: Actor | null, communityId: string, target: Record<string, string>, reason = 'SPAM', note?: string) =>
    gql(t, who, Q.report, { c: communityId, t: target, r: reason, n: note });
  const resolve = (who: Actor | null, communityId: string, targetId: string, action: string, extra: { r?: string; d?: number } = {}) =>
    gql(t, who, Q.resolve, { c: communityId, t: targetId, a: action, ...extra });
  const queue = async (who: Actor, communityId: string, status = 'OPEN') => ok(await gql(t, who, Q.queue, { c: communityId, s: status, f: 50 })).moderationQueue.edges.map((e: any) => e.node);
  const auditRows = async (who: Actor, communityId: string) => ok(await gql(t, who, Q.audit, { c: communityId, f: 50 })).auditLog.edges.map((e: any) => e.node);

  describe('role matrix (each action on a plain member or their post)', () => {
    type Caller = (typeof ROLES)[number] | 'outsider' | 'anonymous';
    const CALLERS: Caller[] = ['owner', 'admin', 'moderator', 'member', 'outsider', 'anonymous'];
    const STAFF = ['✓', '✓', '✓', 'forbidden', 'forbidden', 'unauthorized'];
    // Cells in the order of CALLERS: ✓ allowed, else the expected extensions.reason.
    const MATRIX: Record<string, string[]> = {
      report: ['✓', '✓', '✓', '✓', 'forbidden', 'unauthorized'],
      moderationQueue: STAFF,
      DISMISS: STAFF,
      REMOVE_CONTENT: STAFF,
      WARN: STAFF,
      MUTE: STAFF,
      BAN: STAFF,
      restoreContent: STAFF,
      unmuteMember: STAFF,
      unbanMember: STAFF,
      auditLog: ['✓', '✓', 'forbidden', 'forbidden', 'forbidden', 'unauthorized'],
      myModerationStatus: ['✓', '✓', '✓', '✓', '✓', 'unauthorized'],
    };
    let s: Staffed;
    beforeAll(async () => {
      s = await staffedTribe(await crew(t));
    });
    /** A new plain member of the tribe (joined two days ago), the target of one cell. */
    const freshMember = async () => {
      const u = await actor(t);
      await join(t, u, s.tribe.handle);
      await setJoinedAt(t, s.tribe.id, u.id, new Date(Date.now() - 2 * 86_400_000).toISOString());
      return u;
    };
    const reportedPost = async () => {
      const postId = await newPost(await freshMember(), s.tribe.id);
      ok(await report(s.member2, s.tribe.id, { postId }));
      return postId;
    };
    const ACTIONS: Record<string, (as: Actor | null) => Promise<GqlResult>> = {
      report: async (as) => report(as, s.tribe.id, { postId: await newPost(await freshMember(), s.tribe.id) }),
      moderationQueue: (as) => gql(t, as, Q.queue, { c: s.tribe.id }),
      DISMISS: async (as) => resolve(as, s.tribe.id, await reportedPost(), 'DISMISS'),
      REMOVE_CONTENT: async (as) => resolve(as, s.tribe.id, await reportedPost(), 'REMOVE_CONTENT'),
      WARN: async (as) => resolve(as, s.tribe.id, (await freshMember()).id, 'WARN'),
      MUTE: async (as) => resolve(as, s.tribe.id, (await freshMember()).id, 'MUTE', { d: 1 }),
      BAN: async (as) => resolve(as, s.tribe.id, (await freshMember()).id, 'BAN'),
      restoreContent: async (as) => {
        const postId = await reportedPost();
        ok(await resolve(s.owner, s.tribe.id, postId, 'REMOVE_CONTENT'));
        return gql(t, as, Q.restore, { c: s.tribe.id, p: postId });
      },
      unmuteMember: async (as) => {
        const u = await freshMember();
        ok(await resolve(s.owner, s.tribe.id, u.id, 'MUTE', { d: 1 }));
        return gql(t, as, Q.unmute, { c: s.tribe.id, u: u.id });
      },
      unbanMember: async (as) => {
        const u = await freshMember();
        ok(await resolve(s.owner, s.tribe.id, u.id, 'BAN'));
        return gql(t, as, Q.unban, { c: s.tribe.id, u: u.id });
      },
      auditLog: (as) => gql(t, as, Q.audit, { c: s.tribe.id }),
      myModerationStatus: (as) => gql(t, as, Q.status, { c: s.tribe.id }),
    };
    const cells = Object.entries(MATRIX).flatMap(([action, row]) => CALLERS.map((caller, i) => [action, caller, row[i]] as const));
    it.each(cells)('%s by the %s: %s', async (action, caller, cell) => {
      const out = await ACTIONS[action](caller === 'anonymous' ? null : s[caller]);
      if (cell === '✓') ok(out);
      else expect(failure(out).reason).toBe(cell);
    });
  });

  describe('report', () => {
    let s: Staffed;
    beforeAll(async () => {
      s = await staffedTribe(cast);
    });

    it.each(ROLES)('lets the %s report a post they can see', async (role) => {
      const postId = await newPost(s.member2, s.tribe.id);
      const r = ok(await report(s[role], s.tribe.id, { postId }, 'HARASSMENT', 'rude')).report;
      expect(r).toEqual({ id: expect.any(String), targetType: 'POST', targetId: postId, reason: 'HARASSMENT', note: 'rude', resolvedAt: null });
    });

    it('refuses outsiders (forbidden) and anonymous callers (unauthorized)', async () => {
      const postId = await newPost(s.member2, s.tribe.id);
      expect(failure(await report(s.outsider, s.tribe.id, { postId }))).toEqual(FORBIDDEN);
      expect(failure(await report(null, s.tribe.id, { postId }))).toEqual(UNAUTHENTICATED);
      expect(await countOf(t, sql`select count(*)::int as n from moderation_reports where target_id = ${postId}`)).toBe(0);
    });

    it('accepts a second report of the same target by the same reporter and changes nothing', async () => {
      const postId = await newPost(s.member2, s.tribe.id);
      const first = ok(await report(s.member, s.tribe.id, { postId }, 'SPAM')).report;
      const second = ok(await report(s.member, s.tribe.id, { postId }, 'HATE', 'again')).report;
      expect(second).toEqual(first);
      expect(await countOf(t, sql`select count(*)::int as n from moderation_reports where target_id = ${postId}`)).toBe(1);
    });

    it('refuses a target that is not exactly one id, one in another tribe, or oneself', async () => {
      const postId = await newPost(s.member2, s.tribe.id);
      expect(failure(await report(s.member, s.tribe.id, { postId, userId: s.member2.id })).code).toBe('BAD_USER_INPUT');
      const other = await staffedTribe(await crew(t));
      expect(failure(await report(s.member, other.tribe.id, { postId }))).toEqual(FORBIDDEN);
      expect(failure(await report(other.member, other.tribe.id, { postId }))).toEqual(NOT_FOUND);
      expect(failure(await report(s.member, s.tribe.id, { userId: s.member.id }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'cannot_report_self' });
    });

    it('lets only a participant report a message, whose author is a member of the tribe', async () => {
      const conv = ok(await gql(t, s.member2, Q.startConversation, { u: [s.member.id] })).startConversation.id;
      const messageId = ok(await gql(t, s.member2, Q.send, { c: conv, b: 'buy my stuff' })).sendMessage.id;
      expect(failure(await report(s.moderator, s.tribe.id, { messageId }))).toEqual(NOT_FOUND);
      ok(await report(s.member, s.tribe.id, { messageId }));
      const item = (await queue(s.moderator, s.tribe.id)).find((i: any) => i.targetId === messageId);
      expect(item).toMatchObject({ targetType: 'MESSAGE', subject: { id: s.member2.id }, content: 'buy my stuff', reportCount: 1 });
    });
  });

  describe('moderationQueue', () => {
    let s: Staffed;
    let postId: string;
    beforeAll(async () => {
      s = await staffedTribe(await crew(t));
      postId = await newPost(s.member2, s.tribe.id, 'spammy post');
      ok(await report(s.member, s.tribe.id, { postId }, 'SPAM'));
      ok(await report(s.admin, s.tribe.id, { postId }, 'NSFW'));
    });

    it.each(['owner', 'admin', 'moderator'] as const)('shows the %s one item per target with its count, reasons and content', async (role) => {
      const items = await queue(s[role], s.tribe.id);
      expect(items).toEqual([
        {
          id: expect.any(String),
          targetType: 'POST',
          targetId: postId,
          subject: { id: s.member2.id },
          status: 'OPEN',
          reportCount: 2,
          reasons: ['NSFW', 'SPAM'],
          content: 'spammy post',
          post: { id: postId },
          removedAt: null,
          resolvedAt: null,
          resolvedBy: null,
          action: null,
          actionReason: null,
        },
      ]);
    });

    it('refuses members (forbidden), outsiders (forbidden) and anonymous callers (unauthorized)', async () => {
      expect(failure(await gql(t, s.member, Q.queue, { c: s.tribe.id }))).toEqual(FORBIDDEN);
      expect(failure(await gql(t, s.outsider, Q.queue, { c: s.tribe.id }))).toEqual(FORBIDDEN);
      expect(failure(await gql(t, null, Q.queue, { c: s.tribe.id }))).toEqual(UNAUTHENTICATED);
    });

    it('pages with Relay cursors, newest report first', async () => {
      const more = [await newPost(s.member2, s.tribe.id), await newPost(s.member2, s.tribe.id)];
      for (const id of more) ok(await report(s.member, s.tribe.id, { postId: id }));
      const page1 = ok(await gql(t, s.moderator, Q.queue, { c: s.tribe.id, f: 2 })).moderationQueue;
      expect(page1.edges.map((e: any) => e.node.targetId)).toEqual([more[1], more[0]]);
      expect(page1.pageInfo.hasNextPage).toBe(true);
      const page2 = ok(await gql(t, s.moderator, Q.queue, { c: s.tribe.id, f: 2, a: page1.pageInfo.endCursor })).moderationQueue;
      expect(page2.edges.map((e: any) => e.node.targetId)).toEqual([postId]);
      expect(page2.pageInfo.hasNextPage).toBe(false);
    });
  });

  describe('resolveReports', () => {
    let s: Staffed;
    beforeAll(async () => {
      s = await staffedTribe(await crew(t));
    });

    it('DISMISS resolves every open report of the target and moves it to RESOLVED', async () => {
      const postId = await newPost(s.member2, s.tribe.id);
      ok(await report(s.member, s.tribe.id, { postId }));
      const item = ok(await resolve(s.moderator, s.tribe.id, postId, 'DISMISS', { r: 'fine' })).resolveReports;
      expect(item).toMatchObject({ status: 'RESOLVED', action: 'DISMISS', actionReason: 'fine', reportCount: 1, resolvedBy: { id: s.moderator.id } });
      expect((await queue(s.moderator, s.tribe.id)).map((i: any) => i.targetId)).not.toContain(postId);
      expect((await queue(s.moderator, s.tribe.id, 'RESOLVED')).map((i: any) => i.targetId)).toContain(postId);
      expect(await countOf(t, sql`select count(*)::int as n from moderation_reports where target_id = ${postId} and resolved_at is null`)).toBe(0);
    });

    it('REMOVE_CONTENT hides a post from members and outsiders on every surface (search: from everyone), not from moderators or its author; restoreContent undoes it', async () => {
      const word = `zq${unique().replace(/[0-9]/g, (d) => 'abcdefghij'[Number(d)])}`;
      const postId = await newPost(s.member2, s.tribe.id, `a post about ${word}`);
      const found = async (who: Actor) => ok(await gql(t, who, Q.search, { q: word, c: s.tribe.id })).search.edges.map((e: any) => e.node.post.id);
      expect(await found(s.member)).toEqual([postId]);
      ok(await report(s.member, s.tribe.id, { postId }, 'HATE'));
      const item = ok(await resolve(s.moderator, s.tribe.id, postId, 'REMOVE_CONTENT', { r: 'hate speech' })).resolveReports;
      expect(item).toMatchObject({ action: 'REMOVE_CONTENT', removedAt: expect.any(String) });
      // Members and outsiders: gone from reads and lists, GraphQL and the resource API.
      expect(failure(await gql(t, s.member, Q.readPost, { id: postId }))).toEqual(NOT_FOUND);
      expect(failure(await gql(t, null, Q.readPost, { id: postId }))).toEqual(NOT_FOUND);
      const feedIds = async (who: Actor | null) => ok(await gql(t, who, Q.feed, { c: s.tribe.id })).communityFeed.edges.map((e: any) => e.node.id);
      expect(await feedIds(s.member)).not.toContain(postId);
      expect(await feedIds(null)).not.toContain(postId);
      expect(await found(s.member)).toEqual([]);
      expect(await found(s.moderator)).toEqual([]);
      const homeIds = async (who: Actor) => ok(await gql(t, who, Q.homeFeed)).homeFeed.edges.map((e: any) => e.node.id);
      expect(await homeIds(s.member)).not.toContain(postId);
      expect(await homeIds(s.member2)).toContain(postId);
      expect(await homeIds(s.moderator)).toContain(postId);
      expectError(await t.api.get(`/v1/communities/${s.tribe.id}/posts/${postId}`).set(bearer(s.member)), 404, 'not_found');
      const listed = await t.api.get(`/v1/communities/${s.tribe.id}/posts`).set(bearer(s.member));
      expect(listed.body.data.map((p: any) => p.id)).not.toContain(postId);
      // Moderators and the author: still there, with the removal shown.
      for (const who of [s.moderator, s.owner, s.member2]) {
        expect(ok(await gql(t, who, Q.readPost, { id: postId })).post.moderation).toEqual({ removedAt: expect.any(String), reason: 'hate speech' });
        expect(await feedIds(who)).toContain(postId);
      }
      const asAuthor = await t.api.get(`/v1/communities/${s.tribe.id}/posts`).set(bearer(s.member2));
      expect(asAuthor.body.data.map((p: any) => p.id)).toContain(postId);
      // Restored: everyone sees it again, unflagged; a second restore changes nothing.
      expect(failure(await gql(t, s.member, Q.restore, { c: s.tribe.id, p: postId }))).toEqual(FORBIDDEN);
      expect(ok(await gql(t, s.moderator, Q.restore, { c: s.tribe.id, p: postId })).restoreContent).toBe(true);
      expect(ok(await gql(t, s.moderator, Q.restore, { c: s.tribe.id, p: postId })).restoreContent).toBe(false);
      expect(ok(await gql(t, s.member, Q.readPost, { id: postId })).post.moderation).toBeNull();
    });

    it('REMOVE_CONTENT hides a comment from other members, not from moderators or its author', async () => {
      const postId = await newPost(s.member, s.tribe.id);
      const commentId = await newComment(s.member2, postId);
      ok(await report(s.member, s.tribe.id, { commentId }));
      ok(await resolve(s.admin, s.tribe.id, commentId, 'REMOVE_CONTENT', { r: 'off topic' }));
      const ids = async (who: Actor) => ok(await gql(t, who, Q.comments, { p: postId })).comments.items.map((c: any) => c.id);
      expect(await ids(s.member)).not.toContain(commentId);
      expect(await ids(s.moderator)).toContain(commentId);
      expect(ok(await gql(t, s.member2, Q.comments, { p: postId })).comments.items).toEqual([{ id: commentId, moderation: { reason: 'off topic' } }]);
      const rest = await t.api.get(`/v1/communities/${s.tribe.id}/posts/${postId}/comments`).set(bearer(s.member));
      expect(rest.body.data.map((c: any) => c.id)).not.toContain(commentId);
    });

    it('WARN stores a warning the user reads in myModerationStatus', async () => {
      ok(await resolve(s.moderator, s.tribe.id, s.member2.id, 'WARN', { r: 'be kind' }));
      expect(ok(await gql(t, s.member2, Q.status, { c: s.tribe.id })).myModerationStatus).toEqual({ warnings: [{ reason: 'be kind' }], mutedUntil: null, banned: false });
    });

    it('WARN notifies the warned user once (moderation_warning, even with the tribe muted and the kind turned off in the app), nobody else', async () => {
      const c = await crew(t);
      const w = await staffedTribe(c);
      const warnings = async (who: Actor) =>
        ok(await gql(t, who, Q.notifications)).notifications.edges.map((e: any) => e.node).filter((n: any) => n.kind === 'moderation_warning');
      ok(await resolve(w.moderator, w.tribe.id, w.member2.id, 'WARN', { r: 'be kind' }));
      expect(await warnings(w.member2)).toEqual([{ kind: 'moderation_warning', text: 'A moderator warned you: be kind', community: { id: w.tribe.id }, actors: [{ id: w.moderator.id }] }]);
      for (const who of [w.member, w.moderator, w.admin, w.owner]) expect(await warnings(who)).toEqual([]);
      // A second warning reaches them although they muted the tribe and turned the kind's IN_APP preference off.
      ok(await gql(t, w.member2, Q.muteTribe, { c: w.tribe.id }));
      ok(await gql(t, w.member2, Q.preferences, { p: [{ kind: 'moderation_warning', channel: 'IN_APP', enabled: false }] }));
      ok(await resolve(w.admin, w.tribe.id, w.member2.id, 'WARN'));
      expect((await warnings(w.member2)).map((n: any) => n.text)).toEqual(['A moderator warned you', 'A moderator warned you: be kind']);
      expect(await warnings(w.member)).toEqual([]);
    });

    it('DISMISS of a post automod held publishes it for other members; REMOVE_CONTENT of a held post keeps it hidden', async () => {
      const h = await staffedTribe(await crew(t));
      ok(await gql(t, h.owner, Q.settings, { c: h.tribe.id, i: { requireApproval: true } }));
      const fine = await newPost(h.member2, h.tribe.id);
      const bad = await newPost(h.member2, h.tribe.id);
      for (const id of [fine, bad]) {
        expect(ok(await gql(t, h.member2, Q.heldPost, { id })).post.status).toBe('pending_review');
        expect(failure(await gql(t, h.member, Q.heldPost, { id }))).toEqual(NOT_FOUND);
      }
      expect(ok(await resolve(h.moderator, h.tribe.id, fine, 'DISMISS')).resolveReports).toMatchObject({ status: 'RESOLVED', action: 'DISMISS' });
      ok(await resolve(h.moderator, h.tribe.id, bad, 'REMOVE_CONTENT', { r: 'spam' }));
      expect(ok(await gql(t, h.member, Q.heldPost, { id: fine })).post).toEqual({ id: fine, status: 'published' });
      const feedIds = ok(await gql(t, h.member, Q.feed, { c: h.tribe.id })).communityFeed.edges.map((e: any) => e.node.id);
      expect(feedIds).toContain(fine);
      expect(feedIds).not.toContain(bad);
      expect(failure(await gql(t, h.member, Q.heldPost, { id: bad }))).toEqual(NOT_FOUND);
    });

    it('refuses REMOVE_CONTENT on a user, a mute outside 1 to 720 hours, and a target that is neither reported nor a member', async () => {
      expect(failure(await resolve(s.moderator, s.tribe.id, s.member2.id, 'REMOVE_CONTENT'))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_action' });
      expect(failure(await resolve(s.moderator, s.tribe.id, s.member2.id, 'MUTE', { d: 0 }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_duration' });
      expect(failure(await resolve(s.moderator, s.tribe.id, s.member2.id, 'MUTE', { d: 721 }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_duration' });
      expect(failure(await resolve(s.moderator, s.tribe.id, s.member2.id, 'MUTE'))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_duration' });
      expect(failure(await resolve(s.moderator, s.tribe.id, UNKNOWN_ID, 'BAN'))).toEqual(NOT_FOUND);
      expect(failure(await resolve(s.moderator, s.tribe.id, s.outsider.id, 'BAN'))).toEqual(NOT_FOUND);
    });
  });

  describe('role ordering and tribe isolation', () => {
    let s: Staffed;
    beforeAll(async () => {
      s = await staffedTribe(await crew(t));
    });

    // [actor, target, allowed]: a moderation action reaches only lower roles.
    const cases: Array<[(typeof ROLES)[number], 'owner' | 'admin' | 'moderator' | 'member2', boolean]> = [
      ['member', 'member2', false],
      ['moderator', 'member2', true],
      ['moderator', 'moderator', false],
      ['moderator', 'admin', false],
      ['moderator', 'owner', false],
      ['admin', 'moderator', true],
      ['admin', 'admin', false],
      ['admin', 'owner', false],
      ['owner', 'admin', true],
    ];
    it.each(cases)('the %s muting the %s: allowed %s', async (actorRole, targetRole, allowed) => {
      const out = await resolve(s[actorRole], s.tribe.id, s[targetRole].id, 'MUTE', { d: 1 });
      if (allowed) {
        expect(ok(out).resolveReports).toMatchObject({ action: 'MUTE', targetType: 'USER' });
        ok(await gql(t, s[actorRole], Q.unmute, { c: s.tribe.id, u: s[targetRole].id }));
      } else {
        expect(failure(out)).toEqual(FORBIDDEN);
      }
    });

    it('refuses an outsider and a moderator of another tribe, and a target of another tribe', async () => {
      const other = await staffedTribe(await crew(t));
      expect(failure(await resolve(s.outsider, s.tribe.id, s.member2.id, 'BAN'))).toEqual(FORBIDDEN);
      expect(failure(await resolve(other.moderator, s.tribe.id, s.member2.id, 'BAN'))).toEqual(FORBIDDEN);
      const postId = await newPost(s.member2, s.tribe.id);
      ok(await report(s.member, s.tribe.id, { postId }));
      expect(failure(await resolve(other.moderator, other.tribe.id, postId, 'REMOVE_CONTENT'))).toEqual(NOT_FOUND);
      expect(failure(await gql(t, other.moderator, Q.restore, { c: other.tribe.id, p: postId }))).toEqual(NOT_FOUND);
      expect(await countOf(t, sql`select count(*)::int as n from posts where id = ${postId} and removed_at is not null`)).toBe(0);
    });

    it('refuses removing the content of an equal or higher role', async () => {
      const postId = await newPost(s.admin, s.tribe.id);
      ok(await report(s.member, s.tribe.id, { postId }));
      expect(failure(await resolve(s.moderator, s.tribe.id, postId, 'REMOVE_CONTENT'))).toEqual(FORBIDDEN);
      ok(await resolve(s.owner, s.tribe.id, postId, 'REMOVE_CONTENT'));
    });
  });

  describe('mute', () => {
    let s: Staffed;
    let postId: string;
    let challengeId: string;
    beforeAll(async () => {
      s = await staffedTribe(await crew(t));
      postId = await newPost(s.owner, s.tribe.id);
      const created = await t.api
        .post(`/v1/communities/${s.tribe.id}/challenges`)
        .set(bearer(s.owner))
        .send({ title: `Challenge ${unique()}`, duration_days: 7, challenge_type: 'daily', access_type: 'free' });
      challengeId = created.body.data.id;
      expect((await t.api.post(`/v1/communities/${s.tribe.id}/challenges/${challengeId}/enroll`).set(bearer(s.member2))).status).toBe(201);
      ok(await resolve(s.moderator, s.tribe.id, s.member2.id, 'MUTE', { d: 24, r: 'cool down' }));
    });

    it('refuses posts, comments and wins over GraphQL with member_muted', async () => {
      expect(failure(await gql(t, s.member2, Q.post, { c: s.tribe.id, i: { content: 'x' } }))).toEqual(MUTED);
      expect(failure(await gql(t, s.member2, Q.comment, { p: postId, i: { content: 'x' } }))).toEqual(MUTED);
      expect(failure(await gql(t, s.member2, Q.win, { c: s.tribe.id, i: { title: 'a win' } }))).toEqual(MUTED);
      expect(await countOf(t, sql`select count(*)::int as n from posts where author_id = ${s.member2.id}`)).toBe(0);
    });

    it('refuses posts, comments and challenge check-ins over the resource API with 403 member_muted', async () => {
      expectError(await t.api.post(`/v1/communities/${s.tribe.id}/posts`).set(bearer(s.member2)).send({ content: 'x' }), 403, 'member_muted');
      expectError(await t.api.post(`/v1/communities/${s.tribe.id}/posts/${postId}/comments`).set(bearer(s.member2)).send({ content: 'x' }), 403, 'member_muted');
      expectError(
        await t.api.post(`/v1/communities/${s.tribe.id}/challenges/${challengeId}/checkins`).set(bearer(s.member2)).send({ content: 'done', day_number: 1 }),
        403,
        'member_muted',
      );
    });

    it('refuses the muted member starting a conversation through the tribe (member_muted); others still can', async () => {
      expect(failure(await gql(t, s.member2, Q.startConversation, { u: [s.member.id] }))).toEqual(MUTED);
      ok(await gql(t, s.member, Q.startConversation, { u: [s.admin.id] }));
    });

    it('shows the muted member until when, and lets them read', async () => {
      const status = ok(await gql(t, s.member2, Q.status, { c: s.tribe.id })).myModerationStatus;
      expect(new Date(status.mutedUntil).getTime()).toBeGreaterThan(Date.now() + 23 * 3_600_000);
      ok(await gql(t, s.member2, Q.readPost, { id: postId }));
    });

    it('does not reach other tribes or other members', async () => {
      const other = await staffedTribe({ ...(await crew(t)), member2: s.member2 });
      ok(await gql(t, s.member2, Q.post, { c: other.tribe.id, i: { content: 'elsewhere' } }));
      ok(await gql(t, s.member, Q.post, { c: s.tribe.id, i: { content: 'not muted' } }));
    });

    it('unmuteMember ends it at once (moderators and above); a second unmute answers false', async () => {
      expect(failure(await gql(t, s.member, Q.unmute, { c: s.tribe.id, u: s.member2.id }))).toEqual(FORBIDDEN);
      expect(ok(await gql(t, s.moderator, Q.unmute, { c: s.tribe.id, u: s.member2.id })).unmuteMember).toBe(true);
      expect(ok(await gql(t, s.moderator, Q.unmute, { c: s.tribe.id, u: s.member2.id })).unmuteMember).toBe(false);
      ok(await gql(t, s.member2, Q.post, { c: s.tribe.id, i: { content: 'back' } }));
      expect((await t.api.post(`/v1/communities/${s.tribe.id}/challenges/${challengeId}/checkins`).set(bearer(s.member2)).send({ content: 'done', day_number: 1 })).status).toBe(201);
    });

    it('ends by itself once its duration is over', async () => {
      ok(await resolve(s.moderator, s.tribe.id, s.member.id, 'MUTE', { d: 1 }));
      expect(failure(await gql(t, s.member, Q.post, { c: s.tribe.id, i: { content: 'x' } }))).toEqual(MUTED);
      clock.advance(59 * 60_000);
      expect(failure(await gql(t, s.member, Q.post, { c: s.tribe.id, i: { content: 'x' } }))).toEqual(MUTED);
      clock.advance(2 * 60_000);
      ok(await gql(t, s.member, Q.post, { c: s.tribe.id, i: { content: 'after the mute' } }));
      expect(ok(await gql(t, s.member, Q.status, { c: s.tribe.id })).myModerationStatus.mutedUntil).toBeNull();
    });
  });

  describe('ban', () => {
    it('removes the member; public joins and invite codes refuse them; unbanMember lets them join again', async () => {
      const s = await staffedTribe(await crew(t), { isPublic: false });
      const code = ok(await gql(t, s.owner, Q.invite, { c: s.tribe.id })).createInvite;
      const item = ok(await resolve(s.admin, s.tribe.id, s.member2.id, 'BAN', { r: 'spam bot' })).resolveReports;
      expect(item).toMatchObject({ targetType: 'USER', targetId: s.member2.id, action: 'BAN', status: 'RESOLVED', reportCount: 0 });
      expect(await countOf(t, sql`select count(*)::int as n from members where community_id = ${s.tribe.id} and user_id = ${s.member2.id}`)).toBe(0);
      expect(failure(await gql(t, s.member2, Q.post, { c: s.tribe.id, i: { content: 'x' } }))).toEqual(FORBIDDEN);
      expect(failure(await gql(t, s.member2, Q.joinByHandle, { h: s.tribe.handle, c: code }))).toEqual(BANNED);
      expect(ok(await gql(t, s.member2, Q.status, { c: s.tribe.id })).myModerationStatus.banned).toBe(true);
      expect(failure(await gql(t, s.member, Q.unban, { c: s.tribe.id, u: s.member2.id }))).toEqual(FORBIDDEN);
      expect(ok(await gql(t, s.moderator, Q.unban, { c: s.tribe.id, u: s.member2.id })).unbanMember).toBe(true);
      expect(ok(await gql(t, s.moderator, Q.unban, { c: s.tribe.id, u: s.member2.id })).unbanMember).toBe(false);
      ok(await gql(t, s.member2, Q.joinByHandle, { h: s.tribe.handle, c: code }));
    });

    it('refuses a banned user joining a public tribe, while others still join', async () => {
      const s = await staffedTribe(await crew(t));
      ok(await resolve(s.moderator, s.tribe.id, s.member2.id, 'BAN'));
      expect(failure(await gql(t, s.member2, Q.joinByHandle, { h: s.tribe.handle }))).toEqual(BANNED);
      const other = await join(t, s.outsider, s.tribe.handle);
      expect(other.role).toBe('member');
    });
  });

  describe('auditLog', () => {
    let s: Staffed;
    beforeAll(async () => {
      s = await staffedTribe(await crew(t));
      const postId = await newPost(s.member2, s.tribe.id);
      ok(await report(s.member, s.tribe.id, { postId }));
      ok(await resolve(s.moderator, s.tribe.id, postId, 'REMOVE_CONTENT', { r: 'r1' }));
      ok(await gql(t, s.moderator, Q.restore, { c: s.tribe.id, p: postId }));
      ok(await resolve(s.moderator, s.tribe.id, s.member2.id, 'MUTE', { d: 2, r: 'r2' }));
    });

    it.each(['owner', 'admin'] as const)('shows the %s every action, newest first, with actor, target, reason and time', async (role) => {
      const rows = await auditRows(s[role], s.tribe.id);
      expect(rows.map((r: any) => [r.action, r.actor.id, r.reason, r.durationHours])).toEqual([
        ['MUTE', s.moderator.id, 'r2', 2],
        ['RESTORE_CONTENT', s.moderator.id, null, null],
        ['REMOVE_CONTENT', s.moderator.id, 'r1', null],
      ]);
      expect(rows[0]).toMatchObject({ targetType: 'USER', targetId: s.member2.id, createdAt: expect.any(String) });
    });

    it('refuses moderators, members, outsiders (forbidden) and anonymous callers (unauthorized)', async () => {
      for (const who of [s.moderator, s.member, s.outsider]) expect(failure(await gql(t, who, Q.audit, { c: s.tribe.id }))).toEqual(FORBIDDEN);
      expect(failure(await gql(t, null, Q.audit, { c: s.tribe.id }))).toEqual(UNAUTHENTICATED);
    });

    it('pages with Relay cursors', async () => {
      const page1 = ok(await gql(t, s.owner, Q.audit, { c: s.tribe.id, f: 2 })).auditLog;
      expect(page1.edges).toHaveLength(2);
      const page2 = ok(await gql(t, s.owner, Q.audit, { c: s.tribe.id, f: 2, a: page1.pageInfo.endCursor })).auditLog;
      expect(page2.edges.map((e: any) => e.node.action)).toEqual(['REMOVE_CONTENT']);
      expect(page2.pageInfo.hasNextPage).toBe(false);
    });

    /** The database's message when it refuses the statement (drizzle wraps it as `cause`). */
    const refusal = async (query: ReturnType<typeof sql>) =>
      sqlRows(t, query).then(
        () => 'accepted',
        (e: { cause?: { message?: string }; message: string }) => e.cause?.message ?? e.message,
      );

    it('refuses UPDATE, DELETE and TRUNCATE of audit rows in the database', async () => {
      const before = await countOf(t, sql`select count(*)::int as n from moderation_audit_log where community_id = ${s.tribe.id}`);
      expect(await refusal(sql`update moderation_audit_log set reason = 'changed' where community_id = ${s.tribe.id}`)).toMatch(/append-only/);
      expect(await refusal(sql`delete from moderation_audit_log where community_id = ${s.tribe.id}`)).toMatch(/append-only/);
      expect(await refusal(sql`truncate moderation_audit_log`)).toMatch(/append-only/);
      expect(await countOf(t, sql`select count(*)::int as n from moderation_audit_log where community_id = ${s.tribe.id} and reason is distinct from 'changed'`)).toBe(before);
    });
  });
});
