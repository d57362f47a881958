// In-app notifications (issue 12) over HTTP GraphQL with session cookies, on the real database: every kind from the
// flow that causes it (the outbox events consumed by the `notifications.consume` job function, reminders by the
// `notifications.event_reminders` job function at the injectable clock), the rules (never one's own actions, nothing
// from a tribe left or about a deleted post, preferences, mutes), reaction aggregation, read marks, cursor pages, and
// the constant number of SQL statements per fan-out chunk.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { consumeNotifications, consumeOutbox, runFanouts, setEmailPreference, unreadForEmailDigest } from '../subgraphs/engagement/index.js';
import { createPost, createTribe, crew, join, refreshToken, setRole, signupUser, staffedTribe, unique, UNKNOWN_ID, type TestUser } from './factory.js';
import { JOB_EVENT_REMINDERS, JOB_NOTIFICATIONS_CONSUME } from '../jobs/src/worker.js';
import { bearer, countOf, failure, gql, isolatedDatabase, movableClock, ok, sqlRows, startService, waitFor, type TestService, tamperedCursor } from './support.js';

const NODE = 'id kind read createdAt updatedAt community { id } actors { id } actorCount text postId post { id } commentId eventId winId courseId conversationId reaction role';
const Q = {
  list: `query($f: Int, $a: String, $u: Boolean){ notifications(first: $f, after: $a, unreadOnly: $u){ edges { cursor node { ${NODE} } } pageInfo { hasNextPage endCursor } } }`,
  count: 'query { unreadNotificationCount }',
  one: `query($id: ID!){ notification(id: $id){ ${NODE} } }`,
  mark: 'mutation($ids: [ID!], $all: Boolean){ markNotificationsRead(ids: $ids, all: $all) }',
  prefs: 'query { notificationPreferences { kind channel enabled isDefault } }',
  setPrefs: 'mutation($p: [NotificationPreferenceInput!]!){ updateNotificationPreferences(preferences: $p){ kind channel enabled isDefault } }',
  mute: 'mutation($c: ID!, $m: Boolean!){ muteCommunity(communityId: $c, muted: $m) }',
  comment: 'mutation($p: ID!, $i: CreateCommentInput!){ createComment(postId: $p, input: $i){ id } }',
  react: 'mutation($t: ReactionTarget!, $k: ReactionKind!){ react(target: $t, kind: $k){ total } }',
  deletePost: 'mutation($id: ID!){ deletePost(id: $id) }',
  leave: 'mutation($h: String!){ leaveCommunity(handle: $h) }',
  createEvent: 'mutation($c: ID!, $i: CreateEventInput!){ createEvent(communityId: $c, input: $i){ id } }',
  register: 'mutation($e: ID!){ registerForEvent(eventId: $e){ status } }',
  postWin: 'mutation($c: ID!, $i: PostWinInput!){ postWin(communityId: $c, input: $i){ id } }',
  approveWin: 'mutation($id: ID!){ approveWin(id: $id){ id } }',
  invite: 'mutation($c: ID!){ createInvite(communityId: $c) }',
  report: 'mutation($c: ID!, $t: ReportTarget!, $r: ReportReason!){ report(communityId: $c, target: $t, reason: $r){ id } }',
  resolve: 'mutation($c: ID!, $t: ID!, $a: ModerationAction!, $r: String){ resolveReports(communityId: $c, targetId: $t, action: $a, reason: $r){ status } }',
};

const HOUR = 60 * 60 * 1000;

describe('notifications', () => {
  let t: TestService;
  const clock = movableClock();

  const list = async (who: TestUser, args: { f?: number; a?: string; u?: boolean } = {}) => ok(await gql(t, who, Q.list, args)).notifications;
  const nodes = async (who: TestUser, args: { f?: number; a?: string; u?: boolean } = {}) => (await list(who, { f: 50, ...args })).edges.map((e: any) => e.node);
  const unread = async (who: TestUser) => ok(await gql(t, who, Q.count)).unreadNotificationCount as number;
  const rowsOf = (user: { id: string }) => countOf(t, sql`select count(*)::int as n from notifications where user_id = ${user.id}`);
  /** Runs the consumer job's function: every outbox event not taken yet becomes notifications. */
  const consume = () => consumeNotifications(t.deps);

  /** A public tribe: owner, two members, and a post by the owner. */
  const world = async () => {
    const [owner, member, member2, member3] = await Promise.all([1, 2, 3, 4].map(() => signupUser(t)));
    const tribe = await createTribe(t, owner);
    for (const u of [member, member2, member3]) await join(t, u, tribe.handle);
    const post = await createPost(t, owner, tribe.id);
    await consume(); // nothing so far is anyone's notification; start from a clean outbox
    return { owner, member, member2, member3, tribe, post: post.id };
  };

  // A database of the file's own: the consumer, the fan-outs and the reminder job take every pending row of the database,
  // so a backlog left by the files that ran before (and the order Jest picks) must not decide how long they take.
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  let own: Record<string, string> = {};

  beforeAll(async () => {
    db = await isolatedDatabase();
    own = db.url ? { DATABASE_URL: db.url } : {};
    t = await startService(own, clock.now);
  }, 120_000); // on PGlite the migrations alone take seconds, more on a busy machine
  afterAll(async () => {
    await t?.stop();
    await db?.drop();
  });

  describe('sign-in', () => {
    it('answers UNAUTHENTICATED to anonymous callers on every field', async () => {
      for (const q of [Q.list, Q.count, Q.prefs]) expect(failure(await gql(t, null, q)).code).toBe('UNAUTHENTICATED');
      expect(failure(await gql(t, null, Q.one, { id: UNKNOWN_ID })).code).toBe('UNAUTHENTICATED');
      expect(failure(await gql(t, null, Q.mark, { all: true })).code).toBe('UNAUTHENTICATED');
      expect(failure(await gql(t, null, Q.mute, { c: UNKNOWN_ID, m: true })).code).toBe('UNAUTHENTICATED');
    });
  });

  describe('kinds', () => {
    it('reply: a comment on my post and a reply to my comment, never my own comment', async () => {
      const w = await world();
      const top = ok(await gql(t, w.member, Q.comment, { p: w.post, i: { content: 'nice' } })).createComment.id;
      const reply = ok(await gql(t, w.owner, Q.comment, { p: w.post, i: { content: 'thanks', parentId: top } })).createComment.id;
      ok(await gql(t, w.owner, Q.comment, { p: w.post, i: { content: 'my own comment on my own post' } }));
      await consume();
      const [toOwner] = await nodes(w.owner);
      expect(await nodes(w.owner)).toHaveLength(1);
      expect(toOwner).toMatchObject({
        kind: 'reply',
        read: false,
        community: { id: w.tribe.id },
        actors: [{ id: w.member.id }],
        actorCount: 1,
        postId: w.post,
        post: { id: w.post },
        commentId: top,
      });
      expect(toOwner.text).toMatch(/replied to your post$/);
      const [toMember] = await nodes(w.member);
      expect(toMember).toMatchObject({ kind: 'reply', actors: [{ id: w.owner.id }], commentId: reply });
      expect(toMember.text).toMatch(/replied to your comment$/);
    });

    it('mention: an @mention in a post, not of myself', async () => {
      const w = await world();
      const post = await createPost(t, w.member, w.tribe.id, { content: `<p>hey @${w.member2.username} and @${w.member.username}</p>` });
      await consume();
      expect(await nodes(w.member2)).toEqual([expect.objectContaining({ kind: 'mention', postId: post.id, commentId: null, actors: [{ id: w.member.id }] })]);
      expect(await nodes(w.member)).toEqual([]);
    });

    it("mention: the notification's post follows post(id)'s read rules: a draft or a removed post (and its removal reason) is null", async () => {
      const w = await world();
      const post = await createPost(t, w.member, w.tribe.id, { content: `<p>hey @${w.member2.username}</p>` });
      await consume();
      const seen = async () =>
        ok(await gql(t, w.member2, `query { notifications(first: 5) { edges { node { postId post { id body status moderation { reason } } } } } }`)).notifications.edges.map(
          (e: any) => e.node,
        );
      const root = () => gql(t, w.member2, 'query($id: ID!){ post(id: $id){ id } }', { id: post.id });
      expect(await seen()).toEqual([{ postId: post.id, post: { id: post.id, body: `<p>hey @${w.member2.username}</p>`, status: 'published', moderation: null } }]);
      // A moderator removes it: the author still sees it, the mentioned member neither by id nor through the notification.
      ok(await gql(t, w.member3, Q.report, { c: w.tribe.id, t: { postId: post.id }, r: 'SPAM' }));
      ok(await gql(t, w.owner, Q.resolve, { c: w.tribe.id, t: post.id, a: 'REMOVE_CONTENT', r: 'secret moderation note' }));
      expect(failure(await root()).code).toBe('NOT_FOUND');
      expect(await seen()).toEqual([{ postId: post.id, post: null }]);
      // Restored, then turned back into a draft by its author: hidden again.
      ok(await gql(t, w.owner, 'mutation($c: ID!, $p: ID){ restoreContent(communityId: $c, postId: $p) }', { c: w.tribe.id, p: post.id }));
      expect(await seen()).toEqual([expect.objectContaining({ post: expect.objectContaining({ id: post.id }) })]);
      ok(await gql(t, w.member, 'mutation($id: ID!, $i: UpdatePostInput!){ updatePost(id: $id, input: $i){ id } }', { id: post.id, i: { status: 'draft' } }));
      expect(failure(await root()).code).toBe('NOT_FOUND');
      expect(await seen()).toEqual([{ postId: post.id, post: null }]);
    });

    it('reaction: on my post, never my own reaction', async () => {
      const w = await world();
      ok(await gql(t, w.owner, Q.react, { t: { postId: w.post }, k: 'LIKE' }));
      await consume();
      expect(await nodes(w.owner)).toEqual([]);
      ok(await gql(t, w.member, Q.react, { t: { postId: w.post }, k: 'LOVE' }));
      await consume();
      const [n] = await nodes(w.owner);
      expect(n).toMatchObject({ kind: 'reaction', reaction: 'LOVE', postId: w.post, actorCount: 1, actors: [{ id: w.member.id }] });
      expect(n.text).toMatch(/reacted to your post$/);
    });

    it('reaction: on my comment', async () => {
      const w = await world();
      const c = ok(await gql(t, w.member, Q.comment, { p: w.post, i: { content: 'a comment' } })).createComment.id;
      await consume();
      ok(await gql(t, w.member2, Q.react, { t: { commentId: c }, k: 'CELEBRATE' }));
      await consume();
      expect(await nodes(w.member)).toEqual([expect.objectContaining({ kind: 'reaction', commentId: c, reaction: 'CELEBRATE', text: expect.stringMatching(/reacted to your comment$/) })]);
    });

    it('event_created: every member of the tribe but its creator, through one fan-out; not other tribes', async () => {
      const w = await world();
      const other = await world();
      await setRole(t, w.owner, w.tribe.id, w.member.id, 'moderator');
      await consume();
      const before = await rowsOf(w.member);
      const e = ok(await gql(t, w.member, Q.createEvent, {
        c: w.tribe.id,
        i: { title: 'Meetup', eventType: 'online', startsAt: '2031-01-01T18:00:00Z', endsAt: '2031-01-01T19:00:00Z' },
      })).createEvent.id;
      await consume();
      for (const u of [w.owner, w.member2, w.member3]) {
        const [n] = await nodes(u);
        expect(n).toMatchObject({ kind: 'event_created', eventId: e, actors: [{ id: w.member.id }], community: { id: w.tribe.id }, text: 'New event: Meetup' });
      }
      expect(await rowsOf(w.member)).toBe(before);
      for (const u of [other.owner, other.member]) expect((await nodes(u)).filter((n: any) => n.kind === 'event_created')).toEqual([]);
      await consume(); // a second run writes nothing twice
      expect((await nodes(w.owner)).filter((n: any) => n.kind === 'event_created')).toHaveLength(1);
    });

    it('event_reminder: 24 hours before an event I registered for, once, by the scheduled job at the service clock', async () => {
      const w = await world();
      const startsAt = new Date(clock.now().getTime() + 30 * HOUR);
      const e = ok(await gql(t, w.owner, Q.createEvent, {
        c: w.tribe.id,
        i: { title: `Talk ${unique()}`, eventType: 'online', startsAt: startsAt.toISOString(), endsAt: new Date(startsAt.getTime() + HOUR).toISOString() },
      })).createEvent.id;
      ok(await gql(t, w.member, Q.register, { e }));
      ok(await gql(t, w.member2, Q.register, { e }));
      await consume();
      const { sendEventReminders } = await import('../subgraphs/engagement/index.js');
      await sendEventReminders(t.deps);
      const reminders = async (u: TestUser) => (await nodes(u)).filter((n: any) => n.kind === 'event_reminder');
      expect(await reminders(w.member)).toEqual([]); // 30 hours ahead: not yet
      clock.advance(7 * HOUR); // 23 hours ahead
      ok(await gql(t, w.member2, Q.leave, { h: w.tribe.handle })); // left the tribe: no reminder
      await sendEventReminders(t.deps);
      await sendEventReminders(t.deps);
      expect(await reminders(w.member)).toEqual([expect.objectContaining({ eventId: e, actors: [], actorCount: 0, text: expect.stringMatching(/starts within 24 hours$/) })]);
      expect(await reminders(w.member3)).toEqual([]); // not registered
      expect(await countOf(t, sql`select count(*)::int as n from notifications where kind = 'event_reminder' and event_id = ${e}`)).toBe(1);
    });

    it('role_changed: my role changed, by whom', async () => {
      const w = await world();
      await setRole(t, w.owner, w.tribe.id, w.member.id, 'moderator');
      await consume();
      expect(await nodes(w.member)).toEqual([
        expect.objectContaining({ kind: 'role_changed', role: 'moderator', actors: [{ id: w.owner.id }], text: 'Your role is now moderator' }),
      ]);
    });

    it('win_approved: my win approved by a moderator', async () => {
      const w = await world();
      await setRole(t, w.owner, w.tribe.id, w.member.id, 'moderator');
      const win = ok(await gql(t, w.member2, Q.postWin, { c: w.tribe.id, i: { title: 'Shipped it' } })).postWin.id;
      ok(await gql(t, w.member, Q.approveWin, { id: win }));
      await consume();
      expect(await nodes(w.member2)).toEqual([
        expect.objectContaining({ kind: 'win_approved', winId: win, actors: [{ id: w.member.id }], text: 'Your win "Shipped it" was approved' }),
      ]);
    });

    it('course_completed: completing the last lesson of a course', async () => {
      const cast = await crew(t);
      const s = await staffedTribe(t, cast);
      await refreshToken(t, s.moderator);
      const base = `/v1/communities/${s.tribe.id}/courses`;
      const course = (await t.api.post(base).set(bearer(s.moderator)).send({ title: 'Intro', access_type: 'free' })).body.data;
      const mod = (await t.api.post(`${base}/${course.id}/modules`).set(bearer(s.moderator)).send({ title: 'M' })).body.data;
      const lesson = (await t.api.post(`${base}/${course.id}/modules/${mod.id}/lessons`).set(bearer(s.moderator)).send({ title: 'L', content: '<p>x</p>' })).body.data;
      ok(await gql(t, s.member, 'mutation($c: ID!){ enrollCourse(courseId: $c){ status } }', { c: course.id }));
      ok(await gql(t, s.member, 'mutation($c: ID!, $l: ID!){ completeLesson(courseId: $c, lessonId: $l){ completedLessons } }', { c: course.id, l: lesson.id }));
      await consume();
      expect((await nodes(s.member)).filter((n: any) => n.kind === 'course_completed')).toEqual([
        expect.objectContaining({ courseId: course.id, actors: [], text: 'You completed the course "Intro"' }),
      ]);
    });
    it('message: a direct message, unread messages of one conversation folded into one notification', async () => {
      const w = await world();
      const conversation = ok(await gql(t, w.member, 'mutation($u: [ID!]!){ startConversation(userIds: $u){ id } }', { u: [w.member2.id] })).startConversation.id;
      const send = (who: TestUser, body: string) => gql(t, who, 'mutation($c: ID!, $b: String!){ sendMessage(conversationId: $c, body: $b){ id } }', { c: conversation, b: body });
      ok(await send(w.member, 'hello'));
      ok(await send(w.member, 'are you there?'));
      await consume();
      const [n] = await nodes(w.member2);
      expect(await nodes(w.member2)).toHaveLength(1);
      expect(n).toMatchObject({ kind: 'message', conversationId: conversation, community: null, actors: [{ id: w.member.id }], actorCount: 1, read: false });
      expect(n.text).toMatch(/sent you a message$/);
      expect((await nodes(w.member)).filter((x: any) => x.kind === 'message')).toEqual([]);
      ok(await gql(t, w.member2, Q.mark, { ids: [n.id] }));
      ok(await send(w.member, 'ping'));
      const again = (await nodes(w.member2)).filter((x: any) => x.kind === 'message');
      expect(again).toHaveLength(2); // the read one stays read; a new one for the new unread message
      expect(again[0]).toMatchObject({ read: false, conversationId: conversation });
    });
  });

  describe('what may no longer be seen', () => {
    it('hides notifications of a tribe I left (list, count, by id) and creates none after', async () => {
      const w = await world();
      await createPost(t, w.owner, w.tribe.id, { content: `<p>@${w.member.username}</p>` });
      await consume();
      const [n] = await nodes(w.member);
      expect(await unread(w.member)).toBe(1);
      ok(await gql(t, w.member, Q.leave, { h: w.tribe.handle }));
      expect(await nodes(w.member)).toEqual([]);
      expect(await unread(w.member)).toBe(0);
      expect(ok(await gql(t, w.member, Q.one, { id: n.id })).notification).toBeNull();
      // mentioned while a member, consumed after leaving: nothing
      await createPost(t, w.owner, w.tribe.id, { content: `<p>@${w.member2.username}</p>` });
      ok(await gql(t, w.member2, Q.leave, { h: w.tribe.handle }));
      await consume();
      expect(await rowsOf(w.member2)).toBe(0);
    });

    it('drops the notifications about a deleted post, and creates none when it was deleted before the job ran', async () => {
      const w = await world();
      const post = await createPost(t, w.member, w.tribe.id);
      ok(await gql(t, w.owner, Q.react, { t: { postId: post.id }, k: 'LIKE' }));
      await consume();
      expect(await nodes(w.member)).toHaveLength(1);
      ok(await gql(t, w.member, Q.deletePost, { id: post.id }));
      expect(await nodes(w.member)).toEqual([]);
      const post2 = await createPost(t, w.member, w.tribe.id);
      ok(await gql(t, w.owner, Q.comment, { p: post2.id, i: { content: 'x' } }));
      ok(await gql(t, w.member, Q.deletePost, { id: post2.id }));
      await consume();
      expect(await rowsOf(w.member)).toBe(0);
    });
  });

  describe('reaction aggregation', () => {
    it('folds reactions on one target within an hour into one notification that is updated, unread again and on top; a new one after the hour', async () => {
      const w = await world();
      for (const u of [w.member, w.member2]) ok(await gql(t, u, Q.react, { t: { postId: w.post }, k: 'LIKE' }));
      await consume();
      const [first] = await nodes(w.owner);
      expect(first).toMatchObject({ kind: 'reaction', actorCount: 2, actors: [{ id: w.member2.id }, { id: w.member.id }] });
      expect(first.text).toMatch(/ and 1 other reacted to your post$/);
      expect(ok(await gql(t, w.owner, Q.mark, { ids: [first.id] })).markNotificationsRead).toBe(1);
      // something newer on top
      const c = ok(await gql(t, w.member, Q.comment, { p: w.post, i: { content: 'x' } })).createComment.id;
      await consume();
      expect((await nodes(w.owner)).map((n: any) => n.kind)).toEqual(['reply', 'reaction']);
      clock.advance(10 * 60 * 1000);
      ok(await gql(t, w.member3, Q.react, { t: { postId: w.post }, k: 'LAUGH' }));
      await consume();
      const after = await nodes(w.owner);
      expect(after.map((n: any) => n.kind)).toEqual(['reaction', 'reply']);
      expect(after[0]).toMatchObject({ id: first.id, read: false, actorCount: 3, reaction: 'LAUGH', actors: [{ id: w.member3.id }, { id: w.member2.id }, { id: w.member.id }] });
      expect(after[0].text).toMatch(/ and 2 others reacted to your post$/);
      expect(Date.parse(after[0].updatedAt)).toBeGreaterThan(Date.parse(after[0].createdAt));
      expect(c).toBeTruthy();
      // more than an hour after the first: a new notification
      clock.advance(HOUR);
      const late = await signupUser(t);
      await join(t, late, w.tribe.handle);
      ok(await gql(t, late, Q.react, { t: { postId: w.post }, k: 'LIKE' }));
      await consume();
      const reactions = (await nodes(w.owner)).filter((n: any) => n.kind === 'reaction');
      expect(reactions).toHaveLength(2);
      expect(reactions[0]).toMatchObject({ actorCount: 1, actors: [{ id: late.id }] });
      expect(reactions[0].id).not.toBe(first.id);
    });
  });

  describe('read marks', () => {
    it('lists unreadOnly, marks by ids (others\' ids not marked) and all, and counts what it marked', async () => {
      const w = await world();
      for (const u of [w.member, w.member2, w.member3]) ok(await gql(t, u, Q.comment, { p: w.post, i: { content: 'hi' } }));
      await createPost(t, w.owner, w.tribe.id, { content: `<p>@${w.member.username}</p>` });
      await consume();
      const all = await nodes(w.owner);
      expect(all).toHaveLength(3);
      expect(await unread(w.owner)).toBe(3);
      const theirs = (await nodes(w.member))[0].id;
      expect(ok(await gql(t, w.owner, Q.mark, { ids: [all[0].id, theirs, UNKNOWN_ID] })).markNotificationsRead).toBe(1);
      expect(ok(await gql(t, w.owner, Q.mark, { ids: [all[0].id] })).markNotificationsRead).toBe(0);
      expect(await unread(w.member)).toBe(1);
      expect((await nodes(w.owner, { u: true })).map((n: any) => n.id)).toEqual([all[1].id, all[2].id]);
      expect(await unread(w.owner)).toBe(2);
      expect(ok(await gql(t, w.owner, Q.mark, { all: true })).markNotificationsRead).toBe(2);
      expect(await nodes(w.owner, { u: true })).toEqual([]);
      expect((await nodes(w.owner)).every((n: any) => n.read)).toBe(true);
      expect(await unread(w.owner)).toBe(0);
      expect(failure(await gql(t, w.owner, Q.mark, {}))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input' });
      expect(failure(await gql(t, w.owner, Q.mark, { ids: [all[0].id], all: true }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input' });
      expect(failure(await gql(t, w.owner, Q.mark, { ids: ['nope'] }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input' });
    });

    it("answers null for another user's notification by id", async () => {
      const w = await world();
      ok(await gql(t, w.member, Q.comment, { p: w.post, i: { content: 'hi' } }));
      await consume();
      const [n] = await nodes(w.owner);
      expect(ok(await gql(t, w.owner, Q.one, { id: n.id })).notification).toMatchObject({ id: n.id, kind: 'reply' });
      expect(ok(await gql(t, w.member, Q.one, { id: n.id })).notification).toBeNull();
      expect(ok(await gql(t, w.member, Q.one, { id: 'not-a-uuid' })).notification).toBeNull();
    });
  });

  describe('preferences and mutes', () => {
    it('lists the documented defaults, changes some, and creates nothing in the app for a kind turned off', async () => {
      const w = await world();
      const defaults = ok(await gql(t, w.owner, Q.prefs)).notificationPreferences;
      expect(defaults).toHaveLength(22);
      const on = (channel: string) => defaults.filter((p: any) => p.channel === channel && p.enabled).map((p: any) => p.kind);
      expect(on('IN_APP')).toEqual(['reply', 'mention', 'reaction', 'event_created', 'event_reminder', 'role_changed', 'win_approved', 'course_completed', 'message', 'moderation_warning', 'refund_required']);
      expect(on('EMAIL')).toEqual(['reply', 'mention', 'event_reminder', 'message', 'moderation_warning', 'refund_required']);
      expect(defaults.every((p: any) => p.isDefault)).toBe(true);
      const updated = ok(await gql(t, w.owner, Q.setPrefs, { p: [{ kind: 'reaction', channel: 'IN_APP', enabled: false }, { kind: 'reaction', channel: 'EMAIL', enabled: true }] }))
        .updateNotificationPreferences;
      expect(updated.filter((p: any) => p.kind === 'reaction')).toEqual([
        { kind: 'reaction', channel: 'IN_APP', enabled: false, isDefault: false },
        { kind: 'reaction', channel: 'EMAIL', enabled: true, isDefault: false },
      ]);
      expect(ok(await gql(t, w.owner, Q.prefs)).notificationPreferences).toEqual(updated);
      ok(await gql(t, w.member, Q.react, { t: { postId: w.post }, k: 'LIKE' }));
      ok(await gql(t, w.member, Q.comment, { p: w.post, i: { content: 'still a reply' } }));
      await consume();
      expect((await nodes(w.owner)).map((n: any) => n.kind)).toEqual(['reply']);
      expect(failure(await gql(t, w.owner, Q.setPrefs, { p: [] }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input' });
    });

    it('mutes a tribe: nothing from it while muted, again once unmuted', async () => {
      const w = await world();
      expect(ok(await gql(t, w.owner, Q.mute, { c: w.tribe.id, m: true })).muteCommunity).toBe(true);
      ok(await gql(t, w.member, Q.comment, { p: w.post, i: { content: 'muted' } }));
      await consume();
      expect(await rowsOf(w.owner)).toBe(0);
      expect(ok(await gql(t, w.owner, Q.mute, { c: w.tribe.id, m: false })).muteCommunity).toBe(false);
      ok(await gql(t, w.member, Q.comment, { p: w.post, i: { content: 'heard' } }));
      await consume();
      expect(await rowsOf(w.owner)).toBe(1);
      expect(failure(await gql(t, w.owner, Q.mute, { c: UNKNOWN_ID, m: true })).code).toBe('NOT_FOUND');
    });

    it('gives the digest the unread notifications of kinds whose EMAIL is on, and setEmailPreference turns a kind off', async () => {
      const w = await world();
      const since = new Date(clock.now().getTime() - 1000);
      ok(await gql(t, w.member, Q.comment, { p: w.post, i: { content: 'a reply' } }));
      ok(await gql(t, w.member, Q.react, { t: { postId: w.post }, k: 'LIKE' }));
      await consume();
      const digestOf = async () => {
        const out = [];
        for (let after: string | null = null; ; ) {
          const page = await unreadForEmailDigest(t.deps.database.db, { since, afterUserId: after, userLimit: 50 });
          out.push(...page);
          if (page.length < 50) return out.find((d) => d.userId === w.owner.id)?.notifications.map((n) => n.kind) ?? [];
          after = page.at(-1)!.userId;
        }
      };
      expect(await digestOf()).toEqual(['reply']); // reaction: EMAIL off by default
      await setEmailPreference(t.deps.database.db, w.owner.id, 'reply', false);
      expect(await digestOf()).toEqual([]);
      expect(ok(await gql(t, w.owner, Q.prefs)).notificationPreferences.find((p: any) => p.kind === 'reply' && p.channel === 'EMAIL')).toEqual({
        kind: 'reply',
        channel: 'EMAIL',
        enabled: false,
        isDefault: false,
      });
    });
  });

  describe('cursor pages', () => {
    it('pages newest first with cursors and refuses a changed cursor or one of the other list', async () => {
      const w = await world();
      const post = await createPost(t, w.owner, w.tribe.id);
      for (let i = 0; i < 5; i += 1) {
        ok(await gql(t, w.member, Q.comment, { p: post.id, i: { content: `c${i}` } }));
        await consume();
        clock.advance(1000);
      }
      const all = await nodes(w.owner);
      expect(all).toHaveLength(5);
      const times = all.map((n: any) => Date.parse(n.updatedAt));
      expect([...times].sort((a, b) => b - a)).toEqual(times);
      const p1 = await list(w.owner, { f: 2 });
      expect(p1.pageInfo.hasNextPage).toBe(true);
      const p2 = await list(w.owner, { f: 2, a: p1.pageInfo.endCursor });
      const p3 = await list(w.owner, { f: 2, a: p2.pageInfo.endCursor });
      expect(p3.pageInfo.hasNextPage).toBe(false);
      expect([...p1.edges, ...p2.edges, ...p3.edges].map((e: any) => e.node.id)).toEqual(all.map((n: any) => n.id));
      const bad = tamperedCursor(p1.pageInfo.endCursor);
      expect(failure(await gql(t, w.owner, Q.list, { f: 2, a: bad }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_cursor' });
      expect(failure(await gql(t, w.owner, Q.list, { f: 2, a: p1.pageInfo.endCursor, u: true }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_cursor' });
      expect(failure(await gql(t, w.member, Q.list, { f: 2, a: p1.pageInfo.endCursor }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_cursor' });
      expect(failure(await gql(t, w.owner, Q.list, { f: 51 }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_first' });
    });
  });

  describe('tribe-wide fan-out', () => {
    it('writes a new event to 2,500 members in chunks of 1,000 with the same number of SQL statements per chunk', async () => {
      const owner = await signupUser(t);
      const tribe = await createTribe(t, owner, { isPublic: false });
      const code = ok(await gql(t, owner, Q.invite, { c: tribe.id })).createInvite;
      const regular = await signupUser(t);
      await join(t, regular, tribe.handle, code);
      // 2,500 more members, seeded in one statement each (signing 2,500 users up through the API would take minutes)
      const tag = unique();
      await sqlRows(t, sql`insert into users (email, username, display_name)
        select 'fan_' || ${tag} || '_' || i || '@example.com', 'fan_' || ${tag} || '_' || i, 'Fan ' || i from generate_series(1, 2500) i`);
      await sqlRows(t, sql`insert into members (community_id, user_id, role)
        select ${tribe.id}::uuid, id, 'member' from users where username like ${`fan_${tag}_%`}`);
      // one of them muted the tribe, one turned event_created off in the app: set-based rules in the same statement
      const [muted, off] = await sqlRows<{ id: string }>(t, sql`select id from users where username like ${`fan_${tag}_%`} order by id limit 2`);
      await sqlRows(t, sql`insert into notification_mutes (user_id, community_id) values (${muted.id}, ${tribe.id})`);
      await sqlRows(t, sql`insert into notification_preferences (user_id, kind, channel, enabled) values (${off.id}, 'event_created', 'in_app', false)`);
      ok(await gql(t, owner, Q.createEvent, {
        c: tribe.id,
        i: { title: 'Big one', eventType: 'online', startsAt: '2031-02-01T18:00:00Z', endsAt: '2031-02-01T19:00:00Z' },
      }));
      await consumeOutbox(t.deps); // records the fan-out only
      const perChunk: number[] = [];
      const written: number[] = [];
      for (let i = 0; i < 3; i += 1) {
        const before = t.deps.database.stats.statements;
        written.push(await runFanouts(t.deps, { chunk: 1000, maxChunks: 1 }));
        perChunk.push(t.deps.database.stats.statements - before);
      }
      expect(await runFanouts(t.deps, { chunk: 1000 })).toBe(0);
      // 2,502 members: the owner (the actor), the muted one and the one who turned it off get nothing
      expect(written.reduce((a, b) => a + b, 0)).toBe(2499);
      // begin, lock the fan-out, a page of members, the insert, the announcements, record the position, commit
      expect(perChunk[0]).toBeLessThanOrEqual(7);
      expect(new Set(perChunk).size).toBe(1);
      const notified = await countOf(t, sql`select count(*)::int as n from notifications n join members m on m.user_id = n.user_id
        where m.community_id = ${tribe.id} and n.kind = 'event_created' and n.community_id = ${tribe.id}`);
      expect(notified).toBe(2499);
      expect(await rowsOf(muted)).toBe(0);
      expect(await rowsOf(off)).toBe(0);
      expect(await unread(regular)).toBe(1);
    }, 120_000);
  });

  describe('the Agenda worker', () => {
    it('runs notifications.consume and notifications.event_reminders as repeating jobs: a new event and its reminder arrive by themselves', async () => {
      const worker = await startService(
        {
          ...own,
          WORKER_ENABLED: 'true',
          WORKER_POLL_INTERVAL_MS: '100',
          // A run may take seconds on a loaded CI machine: a short lock would expire under it.
          WORKER_LOCK_LIFETIME_MS: '10000',
          WEBHOOK_TIMEOUT_MS: '1000',
          NOTIFICATIONS_INTERVAL_MS: '200',
          EVENT_REMINDER_INTERVAL_MS: '200',
          // The jobs this test is not about stay out of the way (each still runs once at start).
          WEBHOOK_DRAIN_INTERVAL_MS: '3600000',
          WEBHOOK_FANOUT_INTERVAL_MS: '3600000',
          MAIL_SEND_INTERVAL_MS: '3600000',
          VIDEO_TRANSCODE_INTERVAL_MS: '3600000',
        },
        clock.now,
      );
      try {
        const jobs = await sqlRows(worker, sql`select name, repeat_interval from agenda_jobs where name like 'notifications.%' order by name`);
        expect(jobs).toEqual([
          { name: JOB_NOTIFICATIONS_CONSUME, repeat_interval: '200' },
          { name: JOB_EVENT_REMINDERS, repeat_interval: '200' },
        ]);
        const w = await world();
        // 25 hours ahead: out of the reminder's window while the member registers. Created inside it, the job could
        // remind (nobody yet) between createEvent and register under load, and never again (once per event).
        const startsAt = new Date(clock.now().getTime() + 25 * HOUR);
        const e = ok(await gql(worker, w.owner, Q.createEvent, {
          c: w.tribe.id,
          i: { title: `Soon ${unique()}`, eventType: 'online', startsAt: startsAt.toISOString(), endsAt: new Date(startsAt.getTime() + HOUR).toISOString() },
        })).createEvent.id;
        ok(await gql(worker, w.member, Q.register, { e }));
        clock.advance(2 * HOUR); // 23 hours ahead: the next run reminds
        const kindsOf = async (u: TestUser) => (await nodes(u)).filter((n: any) => n.eventId === e).map((n: any) => n.kind).sort();
        try {
          // Two seconds on an idle machine; under a full CI run's load it has taken more than 30.
          await waitFor(async () => (await kindsOf(w.member)).length === 2, 75_000, 'event_created and event_reminder from the worker');
        } catch (error) {
          // What the worker did, so a timeout says which job did not run (or failed) and what it left.
          const state = await sqlRows(worker, sql`select name, next_run_at, locked_at, last_run_at, last_finished_at, fail_reason
            from agenda_jobs where name like 'notifications.%' order by name`);
          const kinds = await kindsOf(w.member);
          throw new Error(`${(error as Error).message}; member has ${JSON.stringify(kinds)}; db now ${JSON.stringify((await sqlRows(worker, sql`select now() as now`))[0])}; clock ${clock.now().toISOString()}; jobs ${JSON.stringify(state)}`);
        }
        expect(await kindsOf(w.member)).toEqual(['event_created', 'event_reminder']);
        expect(await kindsOf(w.member2)).toEqual(['event_created']);
        expect(await kindsOf(w.owner)).toEqual([]);
      } finally {
        await worker.stop();
      }
    }, 120_000);

    it('wakes on an outbox event: a comment reaches the post\'s author with the polled job an hour away (issue 32)', async () => {
      const hour = '3600000';
      const worker = await startService(
        {
          ...own,
          WORKER_ENABLED: 'true',
          WORKER_LOCK_LIFETIME_MS: '10000',
          WEBHOOK_TIMEOUT_MS: '1000',
          NOTIFICATIONS_INTERVAL_MS: hour,
          EVENT_REMINDER_INTERVAL_MS: hour,
          WEBHOOK_DRAIN_INTERVAL_MS: hour,
          WEBHOOK_FANOUT_INTERVAL_MS: hour,
          MAIL_SEND_INTERVAL_MS: hour,
          VIDEO_TRANSCODE_INTERVAL_MS: hour,
        },
        clock.now,
      );
      try {
        const w = await world();
        // The polled job's run at start is over and its next run an hour away: from here on, only the outbox signal
        // can run the consumer.
        const nextPoll = async () => new Date((await sqlRows(worker, sql`select next_run_at from agenda_jobs where name = ${JOB_NOTIFICATIONS_CONSUME}`))[0].next_run_at).getTime();
        await waitFor(async () => (await nextPoll()) > Date.now() + 50 * 60 * 1000, 30_000, 'the consumer job\'s run at start');
        const comment = ok(await gql(worker, w.member, Q.comment, { p: w.post, i: { content: 'live' } })).createComment.id;
        const answeredAt = Date.now();
        // Milliseconds on an idle machine; the bound is for a loaded CI run, far below the job's hour.
        await waitFor(async () => (await nodes(w.owner)).some((n: any) => n.commentId === comment), 30_000, 'the reply notification');
        console.log(`outbox signal: the notification was there ${Date.now() - answeredAt} ms after createComment answered`);
        expect((await nodes(w.owner)).filter((n: any) => n.commentId === comment)).toEqual([
          expect.objectContaining({ kind: 'reply', actors: [{ id: w.member.id }], postId: w.post }),
        ]);
        expect(await nextPoll()).toBeGreaterThan(Date.now() + 50 * 60 * 1000); // the poll did not run it
      } finally {
        await worker.stop();
      }
    }, 120_000);
  });
});
