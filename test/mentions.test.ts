import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { createTribe, join, registerEndpoint, signupUser, unique, type TestUser } from './factory.js';
import { countOf, gql, isolatedDatabase, Receiver, sqlRows, startWebhookService, type TestService, ok, failure } from './support.js';
import { INTERNAL_EVENTS, SUBSCRIBABLE_EVENTS } from '../subgraphs/outbox/index.js';
import { drain, fanOut } from '../subgraphs/webhooks/index.js';


const Q = {
  post: 'mutation($c: ID!, $i: CreatePostInput!){ createPost(communityId: $c, input: $i){ id mentions { id } } }',
  updatePost: 'mutation($id: ID!, $i: UpdatePostInput!){ updatePost(id: $id, input: $i){ id mentions { id } } }',
  onePost: 'query($id: ID!){ post(id: $id){ id mentions { id username } } }',
  posts: 'query($c: ID!, $pp: Int){ posts(communityId: $c, perPage: $pp){ items { id mentions { id } } } }',
  comment: 'mutation($post: ID!, $i: CreateCommentInput!){ createComment(postId: $post, input: $i){ id mentions { id } } }',
  updateComment: 'mutation($id: ID!, $i: UpdateCommentInput!){ updateComment(id: $id, input: $i){ id mentions { id } } }',
  comments: 'query($post: ID!){ comments(postId: $post){ items { id mentions { id } } } }',
};

describe('mentions and internal events', () => {
  let t: TestService;
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  const receiver = new Receiver();

  /** A public tribe with its owner and three members. */
  const world = async (overrides: Record<string, unknown> = {}) => {
    const [owner, alice, bob, carol] = await Promise.all([1, 2, 3, 4].map(() => signupUser(t)));
    const tribe = await createTribe(t, owner, overrides);
    const code = tribe.isPublic ? undefined : (ok(await gql(t, owner, 'mutation($c: ID!){ createInvite(communityId: $c) }', { c: tribe.id })).createInvite as string);
    for (const u of [alice, bob, carol]) await join(t, u, tribe.handle, code);
    return { owner, alice, bob, carol, tribe };
  };
  const ids = (users: TestUser[]) => users.map((u) => ({ id: u.id }));
  const mentionsOfPost = (postId: string) => sqlRows(t, sql`select user_id, community_id from mentions where post_id = ${postId} order by user_id`);
  const mentionsOfComment = (commentId: string) => sqlRows(t, sql`select user_id from mentions where comment_id = ${commentId} order by user_id`);
  const events = (communityId: string, type: string) =>
    sqlRows(t, sql`select data from outbox_events where community_id = ${communityId} and type = ${type} order by created_at, id`).then((rows) =>
      rows.map((r) => r.data),
    );
  const outboxCount = (communityId: string) => countOf(t, sql`select count(*)::int as n from outbox_events where community_id = ${communityId}`);
  const mentionCount = (communityId: string) => countOf(t, sql`select count(*)::int as n from mentions where community_id = ${communityId}`);
  const byUser = (a: { mentionedUserId: string }, b: { mentionedUserId: string }) => a.mentionedUserId.localeCompare(b.mentionedUserId);

  beforeAll(async () => {
    db = await isolatedDatabase();
    t = await startWebhookService({ databaseUrl: db.url });
    await receiver.start();
  });
  afterAll(async () => {
    await receiver.stop();
    await t?.stop();
    await db?.drop();
  });

  describe('in posts', () => {
    it('stores each mentioned member once; non-members, unknown names, e-mail addresses, URLs and the author are plain text', async () => {
      const w = await world();
      const stranger = await signupUser(t);
      const content =
        `<p>Hi @${w.alice.username} and @${w.alice.username.toUpperCase()}, <b>@${w.bob.username}</b>! ` +
        `@${stranger.username} @nobody_${unique()} mail ${w.carol.username}@example.com ` +
        `https://x.example/@${w.carol.username} <a href="https://x.example/@${w.carol.username}">link</a> me: @${w.owner.username}</p>`;
      const created = ok(await gql(t, w.owner, Q.post, { c: w.tribe.id, i: { content } })).createPost;
      const expected = [w.alice, w.bob].sort((a, b) => a.id.localeCompare(b.id));
      expect([...created.mentions].sort((a: any, b: any) => a.id.localeCompare(b.id))).toEqual(ids(expected));
      expect(await mentionsOfPost(created.id)).toEqual(expected.map((u) => ({ user_id: u.id, community_id: w.tribe.id })));
      const read = ok(await gql(t, w.carol, Q.onePost, { id: created.id })).post;
      expect(read.mentions.map((u: any) => u.username).sort()).toEqual(expected.map((u) => u.username).sort());
      expect((await events(w.tribe.id, 'post.mentioned')).sort(byUser)).toEqual(
        expected.map((u) => ({ postId: created.id, commentId: null, mentionedUserId: u.id, authorId: w.owner.id })),
      );
    });

    it('re-resolves on a content edit: new mentions are stored and announced once, dropped ones removed', async () => {
      const w = await world();
      const created = ok(await gql(t, w.owner, Q.post, { c: w.tribe.id, i: { content: `@${w.alice.username} @${w.bob.username}` } })).createPost;
      expect(await events(w.tribe.id, 'post.mentioned')).toHaveLength(2);
      const edited = ok(await gql(t, w.owner, Q.updatePost, { id: created.id, i: { content: `@${w.bob.username} @${w.carol.username}` } })).updatePost;
      expect(edited.mentions).toEqual(expect.arrayContaining(ids([w.bob, w.carol])));
      expect(edited.mentions).toHaveLength(2);
      expect((await mentionsOfPost(created.id)).map((r) => r.user_id).sort()).toEqual([w.bob.id, w.carol.id].sort());
      const announced = await events(w.tribe.id, 'post.mentioned');
      expect(announced.map((e) => e.mentionedUserId).sort()).toEqual([w.alice.id, w.bob.id, w.carol.id].sort());
      expect(announced.filter((e) => e.mentionedUserId === w.carol.id)).toEqual([{ postId: created.id, commentId: null, mentionedUserId: w.carol.id, authorId: w.owner.id }]);

      // An edit of other fields leaves mentions alone; the same text again announces nothing.
      ok(await gql(t, w.owner, Q.updatePost, { id: created.id, i: { visibility: 'members' } }));
      ok(await gql(t, w.owner, Q.updatePost, { id: created.id, i: { content: `@${w.carol.username} @${w.bob.username} again` } }));
      expect(await events(w.tribe.id, 'post.mentioned')).toHaveLength(3);
      expect(await mentionsOfPost(created.id)).toHaveLength(2);
    });

    it('resolves a mention in a private tribe only for that tribe members', async () => {
      const open = await world();
      const secret = await world({ isPublic: false });
      const created = ok(
        await gql(t, secret.owner, Q.post, { c: secret.tribe.id, i: { content: `@${secret.alice.username} and @${open.alice.username}` } }),
      ).createPost;
      expect(created.mentions).toEqual(ids([secret.alice]));
      expect(await mentionsOfPost(created.id)).toEqual([{ user_id: secret.alice.id, community_id: secret.tribe.id }]);
      expect(await events(secret.tribe.id, 'post.mentioned')).toEqual([
        { postId: created.id, commentId: null, mentionedUserId: secret.alice.id, authorId: secret.owner.id },
      ]);
      expect(await mentionCount(open.tribe.id)).toBe(0);
    });

    it('keeps at most 20 distinct names of one text', async () => {
      const w = await world();
      const many = await Promise.all(Array.from({ length: 21 }, () => signupUser(t)));
      for (const u of many) await join(t, u, w.tribe.handle);
      const created = ok(await gql(t, w.owner, Q.post, { c: w.tribe.id, i: { content: many.map((u) => `@${u.username}`).join(' ') } })).createPost;
      expect(created.mentions).toHaveLength(20);
      expect(created.mentions.map((u: any) => u.id)).not.toContain(many[20].id);
    });

    it('loads the mentions of a whole page of posts in one statement', async () => {
      const w = await world();
      for (let i = 0; i < 6; i += 1) ok(await gql(t, w.owner, Q.post, { c: w.tribe.id, i: { content: `post ${i} @${w.alice.username} @${w.bob.username}` } }));
      const statementsFor = async (perPage: number) => {
        const before = t.deps.database.stats.statements;
        const page = ok(await gql(t, w.carol, Q.posts, { c: w.tribe.id, pp: perPage })).posts.items;
        expect(page).toHaveLength(perPage);
        for (const p of page) expect(p.mentions).toHaveLength(2);
        return t.deps.database.stats.statements - before;
      };
      await statementsFor(2); // the first request also reads carol's role, remembered from then on
      const small = await statementsFor(2);
      expect(await statementsFor(6)).toBe(small);
    });
  });

  describe('in comments', () => {
    it('stores mentions of members, emits post.mentioned with the comment id, and comment.replied to the post author', async () => {
      const w = await world();
      const post = ok(await gql(t, w.owner, Q.post, { c: w.tribe.id, i: { content: 'a post' } })).createPost;
      const stranger = await signupUser(t);
      const c = ok(await gql(t, w.alice, Q.comment, { post: post.id, i: { content: `@${w.bob.username} @${stranger.username} x@${w.carol.username}.com` } })).createComment;
      expect(c.mentions).toEqual(ids([w.bob]));
      expect(await mentionsOfComment(c.id)).toEqual([{ user_id: w.bob.id }]);
      expect(ok(await gql(t, null, Q.comments, { post: post.id })).comments.items).toEqual([{ id: c.id, mentions: ids([w.bob]) }]);
      expect(await events(w.tribe.id, 'post.mentioned')).toEqual([{ postId: post.id, commentId: c.id, mentionedUserId: w.bob.id, authorId: w.alice.id }]);
      expect(await events(w.tribe.id, 'comment.replied')).toEqual([
        { commentId: c.id, postId: post.id, parentId: null, authorId: w.alice.id, recipientUserId: w.owner.id },
      ]);
    });

    it('sends comment.replied to the parent comment author for a reply, and nothing when the recipient is the commenter', async () => {
      const w = await world();
      const post = ok(await gql(t, w.owner, Q.post, { c: w.tribe.id, i: { content: 'a post' } })).createPost;
      ok(await gql(t, w.owner, Q.comment, { post: post.id, i: { content: 'my own post' } }));
      const top = ok(await gql(t, w.alice, Q.comment, { post: post.id, i: { content: 'top' } })).createComment;
      ok(await gql(t, w.alice, Q.comment, { post: post.id, i: { content: 'talking to myself', parentId: top.id } }));
      const reply = ok(await gql(t, w.bob, Q.comment, { post: post.id, i: { content: 'reply', parentId: top.id } })).createComment;
      expect(await events(w.tribe.id, 'comment.replied')).toEqual([
        { commentId: top.id, postId: post.id, parentId: null, authorId: w.alice.id, recipientUserId: w.owner.id },
        { commentId: reply.id, postId: post.id, parentId: top.id, authorId: w.bob.id, recipientUserId: w.alice.id },
      ]);
    });

    it('re-resolves on updateComment: adds and removes mentions, announcing only the new ones', async () => {
      const w = await world();
      const post = ok(await gql(t, w.owner, Q.post, { c: w.tribe.id, i: { content: 'a post' } })).createPost;
      const c = ok(await gql(t, w.alice, Q.comment, { post: post.id, i: { content: `@${w.bob.username}` } })).createComment;
      const edited = ok(await gql(t, w.alice, Q.updateComment, { id: c.id, i: { content: `@${w.carol.username} and @${w.alice.username}` } })).updateComment;
      expect(edited.mentions).toEqual(ids([w.carol]));
      expect(await mentionsOfComment(c.id)).toEqual([{ user_id: w.carol.id }]);
      expect(await events(w.tribe.id, 'post.mentioned')).toEqual([
        { postId: post.id, commentId: c.id, mentionedUserId: w.bob.id, authorId: w.alice.id },
        { postId: post.id, commentId: c.id, mentionedUserId: w.carol.id, authorId: w.alice.id },
      ]);
      // A moderator's edit keeps the comment's author as the author of its mentions.
      await gql(t, w.owner, 'mutation($c: ID!, $u: ID!){ updateMemberRole(communityId: $c, userId: $u, role: "moderator"){ role } }', { c: w.tribe.id, u: w.bob.id });
      ok(await gql(t, w.bob, Q.updateComment, { id: c.id, i: { content: `@${w.carol.username} @${w.bob.username}` } }));
      expect((await events(w.tribe.id, 'post.mentioned')).slice(2)).toEqual([{ postId: post.id, commentId: c.id, mentionedUserId: w.bob.id, authorId: w.alice.id }]);
    });
  });

  describe('a failed mutation', () => {
    it('writes no mention and no outbox row', async () => {
      const w = await world();
      const post = ok(await gql(t, w.owner, Q.post, { c: w.tribe.id, i: { content: 'a post' } })).createPost;
      const c = ok(await gql(t, w.alice, Q.comment, { post: post.id, i: { content: 'plain' } })).createComment;
      const outbox = await outboxCount(w.tribe.id);
      const mentions = await mentionCount(w.tribe.id);
      const text = `@${w.bob.username} @${w.carol.username}`;
      // Pinning needs a moderator; an outsider may not post; a comment on a missing parent; someone else's comment.
      expect(failure(await gql(t, w.alice, Q.post, { c: w.tribe.id, i: { content: text, isPinned: true } }))).toEqual({ code: 'FORBIDDEN', reason: 'forbidden' });
      expect(failure(await gql(t, await signupUser(t), Q.post, { c: w.tribe.id, i: { content: text } }))).toEqual({ code: 'FORBIDDEN', reason: 'forbidden' });
      expect(failure(await gql(t, w.alice, Q.comment, { post: post.id, i: { content: text, parentId: '00000000-0000-4000-8000-000000000000' } }))).toEqual({
        code: 'BAD_USER_INPUT',
        reason: 'invalid_parent',
      });
      expect(failure(await gql(t, w.bob, Q.updateComment, { id: c.id, i: { content: text } }))).toEqual({ code: 'FORBIDDEN', reason: 'forbidden' });
      expect(failure(await gql(t, w.owner, Q.updatePost, { id: post.id, i: { content: text, visibility: 'everyone' } }))).toEqual({
        code: 'BAD_USER_INPUT',
        reason: 'invalid_input',
      });
      expect(await outboxCount(w.tribe.id)).toBe(outbox);
      expect(await mentionCount(w.tribe.id)).toBe(mentions);
    });
  });

  describe('internal events are not webhook events', () => {
    it('are in outbox_events, and an endpoint subscribed to every subscribable event gets no delivery for them', async () => {
      const w = await world();
      await fanOut(t.deps); // the joins of the set-up, before the endpoint exists
      const endpoint = await registerEndpoint(t, w.owner, w.tribe.handle, { url: receiver.url(), events: [...SUBSCRIBABLE_EVENTS] }, receiver);
      ok(await gql(t, w.owner, Q.post, { c: w.tribe.id, i: { content: `@${w.alice.username}`, status: 'draft' } }));
      const published = ok(await gql(t, w.owner, Q.post, { c: w.tribe.id, i: { content: 'published' } })).createPost;
      ok(await gql(t, w.alice, Q.comment, { post: published.id, i: { content: `@${w.bob.username}` } }));
      const internal = await sqlRows(t, sql`select type, processed_at from outbox_events where community_id = ${w.tribe.id} and type = any(${sql.param([...INTERNAL_EVENTS])}::text[]) order by type`);
      expect(internal.map((e) => e.type)).toEqual(['comment.replied', 'post.mentioned', 'post.mentioned']);

      await fanOut(t.deps);
      await drain(t.deps);
      const deliveries = await sqlRows(t, sql`select event from webhook_deliveries where endpoint_id = ${endpoint.id}`);
      // The published post is a webhook event; the mentions and the reply are not.
      expect(deliveries.map((d) => d.event)).toEqual(['post.created']);
      expect(receiver.received.map((r) => r.error)).toEqual([null]);
      expect(receiver.events.map((e) => e.type)).toEqual(['post.created']);
      const after = await sqlRows(t, sql`select processed_at from outbox_events where community_id = ${w.tribe.id} and type = any(${sql.param([...INTERNAL_EVENTS])}::text[])`);
      expect(after.every((e) => e.processed_at !== null)).toBe(true);
    });

    it('cannot be subscribed to: an endpoint for post.mentioned alone is refused, and a mixed list drops it', async () => {
      const w = await world();
      const refused = await t.api
        .post(`/communities/${w.tribe.handle}/webhooks`)
        .set('cookie', w.owner.cookie)
        .send({ url: receiver.url(), events: ['post.mentioned'] });
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ error: 'no_events', message: expect.any(String), requestId: expect.any(String) });
      expect(await countOf(t, sql`select count(*)::int as n from webhook_endpoints where community_id = ${w.tribe.id}`)).toBe(0);
      const mixed = await registerEndpoint(t, w.owner, w.tribe.handle, { url: receiver.url(), events: ['post.created', ...INTERNAL_EVENTS] });
      expect(mixed.events).toEqual(['post.created']);
    });
  });
});
