import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type SQL, sql } from 'drizzle-orm';
import { createTribe, join, setRole, signupUser, type TestUser } from './factory.js';
import { gql, startService, type TestService } from './support.js';

type Result = Awaited<ReturnType<typeof gql>>;
type Rows = Array<Record<string, any>>;
/** The rows of a SQL query on the service's database. */
const query = async (t: TestService, q: SQL): Promise<Rows> => ((await t.deps.database.db.execute(q)) as { rows: Rows }).rows;

const ok = (out: Result) => {
  expect(out.errors).toBeUndefined();
  return out.data;
};
const failure = (out: Result) => {
  expect(out.errors).toHaveLength(1);
  const ext = out.errors![0].extensions ?? {};
  return { code: ext.code, reason: ext.reason, status: ext.status };
};

const POST = 'id body mediaUrls visibility status isPinned pinnedAt publishedAt createdAt updatedAt community { id } author { id username }';
const COMMENT = 'id body parentId createdAt author { id } post { id }';
const Q = {
  create: `mutation($c: ID!, $i: CreatePostInput!){ createPost(communityId: $c, input: $i){ ${POST} } }`,
  update: `mutation($id: ID!, $c: ID, $i: UpdatePostInput!){ updatePost(id: $id, communityId: $c, input: $i){ ${POST} } }`,
  remove: 'mutation($id: ID!, $c: ID){ deletePost(id: $id, communityId: $c) }',
  list: 'query($c: ID!, $pin: Boolean, $a: ID, $p: Int, $pp: Int){ posts(communityId: $c, pinned: $pin, authorId: $a, page: $p, perPage: $pp){ items { id } page perPage hasMore } }',
  one: `query($id: ID!, $c: ID){ post(id: $id, communityId: $c){ ${POST} } }`,
  comments: `query($post: ID!, $c: ID, $p: Int, $pp: Int){ comments(postId: $post, communityId: $c, page: $p, perPage: $pp){ items { ${COMMENT} } page perPage hasMore } }`,
  comment: `mutation($post: ID!, $c: ID, $i: CreateCommentInput!){ createComment(postId: $post, communityId: $c, input: $i){ ${COMMENT} } }`,
};
const MISSING = '00000000-0000-4000-8000-000000000000';

describe('GraphQL content', () => {
  let t: TestService;
  const rows = (q: SQL) => query(t, q);

  /** A tribe with an owner, a moderator, two members and an outsider. */
  const world = async (overrides: Record<string, unknown> = {}) => {
    const [owner, moderator, member, other, outsider] = await Promise.all([1, 2, 3, 4, 5].map(() => signupUser(t)));
    const tribe = await createTribe(t, owner, overrides);
    const code = tribe.isPublic ? undefined : (ok(await gql(t, owner, 'mutation($c: ID!){ createInvite(communityId: $c) }', { c: tribe.id })).createInvite as string);
    for (const u of [moderator, member, other]) await join(t, u, tribe.handle, code);
    await setRole(t, owner, tribe.id, moderator.id, 'moderator');
    return { owner, moderator, member, other, outsider, tribe };
  };
  const post = async (as: TestUser, communityId: string, input: Record<string, unknown> = {}) =>
    ok(await gql(t, as, Q.create, { c: communityId, i: { content: 'hello', ...input } })).createPost;
  const listIds = async (as: TestUser | null, vars: Record<string, unknown>) => ok(await gql(t, as, Q.list, vars)).posts.items.map((p: any) => p.id);

  beforeAll(async () => {
    t = await startService();
  });
  afterAll(async () => {
    await t.stop();
  });

  describe('createPost', () => {
    let w: Awaited<ReturnType<typeof world>>;
    beforeAll(async () => {
      w = await world();
    });

    it('creates a published public post by the caller with sanitized HTML', async () => {
      const created = await post(w.member, w.tribe.id, { content: '<p onclick="x()">Hi <a href="javascript:alert(1)">there</a></p><script>steal()</script>' });
      expect(created).toEqual({
        id: expect.any(String),
        body: '<p>Hi <a>there</a></p>',
        mediaUrls: [],
        visibility: 'public',
        status: 'published',
        isPinned: false,
        pinnedAt: null,
        publishedAt: expect.any(String),
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        community: { id: w.tribe.id },
        author: { id: w.member.id, username: w.member.username },
      });
      const [row] = await rows(sql`select author_id, body, status from posts where id = ${created.id}`);
      expect(row).toEqual({ author_id: w.member.id, body: '<p>Hi <a>there</a></p>', status: 'published' });
    });

    it('keeps media URLs, visibility and status when sent', async () => {
      const created = await post(w.member, w.tribe.id, { mediaUrls: ['https://cdn.example.com/a.png'], visibility: 'members', status: 'draft' });
      expect(created).toMatchObject({ mediaUrls: ['https://cdn.example.com/a.png'], visibility: 'members', status: 'draft', publishedAt: null });
    });

    it('lets a moderator pin a post at creation', async () => {
      const created = await post(w.moderator, w.tribe.id, { isPinned: true });
      expect(created.isPinned).toBe(true);
      expect(new Date(created.pinnedAt).toISOString()).toBe(created.pinnedAt);
    });

    it('answers forbidden (403) when a member pins and writes nothing', async () => {
      const before = await rows(sql`select count(*)::int as n from posts where community_id = ${w.tribe.id}`);
      expect(failure(await gql(t, w.member, Q.create, { c: w.tribe.id, i: { content: 'pin me', isPinned: true } }))).toEqual({ code: 'FORBIDDEN', reason: 'forbidden', status: 403 });
      expect(await rows(sql`select count(*)::int as n from posts where community_id = ${w.tribe.id}`)).toEqual(before);
    });

    it.each([
      ['content that is only script', { content: '<script>x()</script>' }],
      ['a javascript: media URL', { content: 'x', mediaUrls: ['javascript:alert(1)'] }],
      ['an unknown visibility', { content: 'x', visibility: 'everyone' }],
      ['an unknown status', { content: 'x', status: 'archived' }],
      ['more than 10 media URLs', { content: 'x', mediaUrls: Array.from({ length: 11 }, (_, i) => `https://cdn.example.com/${i}.png`) }],
    ])('answers invalid_input (400) for %s', async (_what, input) => {
      expect(failure(await gql(t, w.member, Q.create, { c: w.tribe.id, i: input }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input', status: 400 });
    });

    it('answers forbidden (403) to an outsider and unauthorized (401) to anonymous callers', async () => {
      expect(failure(await gql(t, w.outsider, Q.create, { c: w.tribe.id, i: { content: 'x' } }))).toEqual({ code: 'FORBIDDEN', reason: 'forbidden', status: 403 });
      expect(failure(await gql(t, null, Q.create, { c: w.tribe.id, i: { content: 'x' } }))).toEqual({ code: 'UNAUTHENTICATED', reason: 'unauthorized', status: 401 });
    });

    it('answers not_found (404) for an unknown tribe', async () => {
      expect(failure(await gql(t, w.member, Q.create, { c: MISSING, i: { content: 'x' } }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
    });
  });

  describe('posts', () => {
    let w: Awaited<ReturnType<typeof world>>;
    const ids: Record<string, string> = {};
    beforeAll(async () => {
      w = await world();
      ids.public = (await post(w.member, w.tribe.id, { content: 'public' })).id;
      ids.members = (await post(w.member, w.tribe.id, { content: 'members', visibility: 'members' })).id;
      ids.paid = (await post(w.owner, w.tribe.id, { content: 'paid', visibility: 'paid' })).id;
      ids.draft = (await post(w.member, w.tribe.id, { content: 'draft', status: 'draft' })).id;
      ids.pinned = (await post(w.moderator, w.tribe.id, { content: 'pinned', isPinned: true })).id;
    });

    it('lists published posts newest first, drafts excluded even for their author', async () => {
      expect(await listIds(w.member, { c: w.tribe.id })).toEqual([ids.pinned, ids.members, ids.public]);
    });

    it('shows outsiders and anonymous callers public posts only', async () => {
      expect(await listIds(w.outsider, { c: w.tribe.id })).toEqual([ids.pinned, ids.public]);
      expect(await listIds(null, { c: w.tribe.id })).toEqual([ids.pinned, ids.public]);
    });

    it('shows moderators every visibility', async () => {
      expect(await listIds(w.moderator, { c: w.tribe.id })).toEqual([ids.pinned, ids.paid, ids.members, ids.public]);
    });

    it('filters by pinned', async () => {
      expect(await listIds(w.member, { c: w.tribe.id, pin: true })).toEqual([ids.pinned]);
      expect(await listIds(w.member, { c: w.tribe.id, pin: false })).toEqual([ids.members, ids.public]);
    });

    it('filters by authorId', async () => {
      expect(await listIds(w.member, { c: w.tribe.id, a: w.moderator.id })).toEqual([ids.pinned]);
      expect(await listIds(w.member, { c: w.tribe.id, a: w.outsider.id })).toEqual([]);
    });

    it('pages', async () => {
      const first = ok(await gql(t, w.member, Q.list, { c: w.tribe.id, pp: 2 })).posts;
      expect(first).toEqual({ items: [{ id: ids.pinned }, { id: ids.members }], page: 1, perPage: 2, hasMore: true });
      const second = ok(await gql(t, w.member, Q.list, { c: w.tribe.id, p: 2, pp: 2 })).posts;
      expect(second).toEqual({ items: [{ id: ids.public }], page: 2, perPage: 2, hasMore: false });
    });

    it('answers invalid_input (400) for an authorId that is not a UUID', async () => {
      expect(failure(await gql(t, w.member, Q.list, { c: w.tribe.id, a: 'bob' }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input', status: 400 });
    });

    it('answers forbidden (403) to outsiders and unauthorized (401) to anonymous callers of a private tribe', async () => {
      const p = await world({ isPublic: false });
      const only = (await post(p.member, p.tribe.id, { content: 'inside' })).id;
      expect(await listIds(p.member, { c: p.tribe.id })).toEqual([only]);
      expect(failure(await gql(t, p.outsider, Q.list, { c: p.tribe.id }))).toEqual({ code: 'FORBIDDEN', reason: 'forbidden', status: 403 });
      expect(failure(await gql(t, null, Q.list, { c: p.tribe.id }))).toEqual({ code: 'UNAUTHENTICATED', reason: 'unauthorized', status: 401 });
    });
  });

  describe('post', () => {
    let w: Awaited<ReturnType<typeof world>>;
    beforeAll(async () => {
      w = await world();
    });

    it('returns a visible post, also when communityId matches', async () => {
      const created = await post(w.member, w.tribe.id, { content: 'one' });
      expect(ok(await gql(t, null, Q.one, { id: created.id })).post).toEqual(created);
      expect(ok(await gql(t, w.outsider, Q.one, { id: created.id, c: w.tribe.id })).post.id).toBe(created.id);
    });

    it('answers not_found (404) when communityId names another tribe', async () => {
      const created = await post(w.member, w.tribe.id);
      const other = await createTribe(t, w.owner);
      expect(failure(await gql(t, w.member, Q.one, { id: created.id, c: other.id }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
    });

    it('answers not_found (404) for unknown and non-UUID ids', async () => {
      expect(failure(await gql(t, w.member, Q.one, { id: MISSING }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
      expect(failure(await gql(t, w.member, Q.one, { id: 'x' }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
    });

    it('hides members-only posts from outsiders and drafts from other members as not_found', async () => {
      const membersOnly = await post(w.member, w.tribe.id, { visibility: 'members' });
      const draft = await post(w.member, w.tribe.id, { status: 'draft' });
      expect(failure(await gql(t, w.outsider, Q.one, { id: membersOnly.id }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
      expect(failure(await gql(t, null, Q.one, { id: membersOnly.id }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
      expect(ok(await gql(t, w.other, Q.one, { id: membersOnly.id })).post.id).toBe(membersOnly.id);
      expect(failure(await gql(t, w.other, Q.one, { id: draft.id }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
      expect(ok(await gql(t, w.member, Q.one, { id: draft.id })).post.id).toBe(draft.id);
    });
  });

  describe('updatePost', () => {
    let w: Awaited<ReturnType<typeof world>>;
    beforeAll(async () => {
      w = await world();
    });

    it('lets the author change only the sent fields', async () => {
      const created = await post(w.member, w.tribe.id, { content: 'before', mediaUrls: ['https://cdn.example.com/x.png'] });
      const updated = ok(await gql(t, w.member, Q.update, { id: created.id, i: { content: '<em>after</em>' } })).updatePost;
      expect(updated).toMatchObject({ id: created.id, body: '<em>after</em>', mediaUrls: ['https://cdn.example.com/x.png'], visibility: 'public', status: 'published' });
      const [row] = await rows(sql`select body, media_urls from posts where id = ${created.id}`);
      expect(row).toEqual({ body: '<em>after</em>', media_urls: ['https://cdn.example.com/x.png'] });
    });

    it('publishes a draft and sets publishedAt', async () => {
      const draft = await post(w.member, w.tribe.id, { status: 'draft' });
      const updated = ok(await gql(t, w.member, Q.update, { id: draft.id, i: { status: 'published' } })).updatePost;
      expect(updated.status).toBe('published');
      expect(updated.publishedAt).toEqual(expect.any(String));
    });

    it('lets a moderator pin and unpin another member’s post', async () => {
      const created = await post(w.member, w.tribe.id);
      const pinned = ok(await gql(t, w.moderator, Q.update, { id: created.id, i: { isPinned: true } })).updatePost;
      expect(pinned).toMatchObject({ isPinned: true, body: created.body });
      const unpinned = ok(await gql(t, w.moderator, Q.update, { id: created.id, i: { isPinned: false } })).updatePost;
      expect(unpinned).toMatchObject({ isPinned: false, pinnedAt: null });
    });

    it('answers forbidden (403) when the author, a plain member, pins', async () => {
      const created = await post(w.member, w.tribe.id);
      expect(failure(await gql(t, w.member, Q.update, { id: created.id, i: { isPinned: true } }))).toEqual({ code: 'FORBIDDEN', reason: 'forbidden', status: 403 });
    });

    it.each(['other', 'moderator', 'owner'] as const)('answers forbidden (403) when the %s rewrites someone else’s post, which stays unchanged', async (who) => {
      const created = await post(w.member, w.tribe.id, { content: 'mine' });
      expect(failure(await gql(t, w[who], Q.update, { id: created.id, i: { content: 'theirs' } }))).toEqual({ code: 'FORBIDDEN', reason: 'forbidden', status: 403 });
      expect((await rows(sql`select body from posts where id = ${created.id}`))[0].body).toBe('mine');
    });

    it('answers empty (400) when no field is sent', async () => {
      const created = await post(w.member, w.tribe.id);
      expect(failure(await gql(t, w.member, Q.update, { id: created.id, i: {} }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'empty', status: 400 });
    });

    it('answers not_found (404) for an unknown post and unauthorized (401) to anonymous callers', async () => {
      const created = await post(w.member, w.tribe.id);
      expect(failure(await gql(t, w.member, Q.update, { id: MISSING, i: { content: 'x' } }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
      expect(failure(await gql(t, null, Q.update, { id: created.id, i: { content: 'x' } }))).toEqual({ code: 'UNAUTHENTICATED', reason: 'unauthorized', status: 401 });
    });
  });

  describe('deletePost', () => {
    let w: Awaited<ReturnType<typeof world>>;
    beforeAll(async () => {
      w = await world();
    });

    it('lets the author delete a post, its comments going with it', async () => {
      const created = await post(w.member, w.tribe.id);
      ok(await gql(t, w.other, Q.comment, { post: created.id, i: { content: 'a comment' } }));
      expect(ok(await gql(t, w.member, Q.remove, { id: created.id }))).toEqual({ deletePost: true });
      expect(await rows(sql`select 1 from posts where id = ${created.id}`)).toEqual([]);
      expect(await rows(sql`select 1 from comments where post_id = ${created.id}`)).toEqual([]);
      expect(failure(await gql(t, w.member, Q.one, { id: created.id }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
    });

    it('lets a moderator delete another member’s post', async () => {
      const created = await post(w.member, w.tribe.id);
      expect(ok(await gql(t, w.moderator, Q.remove, { id: created.id, c: w.tribe.id }))).toEqual({ deletePost: true });
    });

    it('answers forbidden (403) to another plain member and keeps the post', async () => {
      const created = await post(w.member, w.tribe.id);
      expect(failure(await gql(t, w.other, Q.remove, { id: created.id }))).toEqual({ code: 'FORBIDDEN', reason: 'forbidden', status: 403 });
      expect(await rows(sql`select 1 from posts where id = ${created.id}`)).toHaveLength(1);
    });

    it('answers not_found (404) for an unknown post', async () => {
      expect(failure(await gql(t, w.member, Q.remove, { id: MISSING }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
    });
  });

  describe('comments and createComment', () => {
    let w: Awaited<ReturnType<typeof world>>;
    let target: { id: string };
    beforeAll(async () => {
      w = await world();
      target = await post(w.member, w.tribe.id);
    });

    it('creates a sanitized top-level comment by the caller', async () => {
      const c = ok(await gql(t, w.other, Q.comment, { post: target.id, c: w.tribe.id, i: { content: '<b>nice</b><img src="javascript:x()" onerror="x()">' } })).createComment;
      expect(c).toEqual({ id: expect.any(String), body: '<b>nice</b><img />', parentId: null, createdAt: expect.any(String), author: { id: w.other.id }, post: { id: target.id } });
    });

    it('threads a reply under a comment of the same post', async () => {
      const parent = ok(await gql(t, w.member, Q.comment, { post: target.id, i: { content: 'parent' } })).createComment;
      const reply = ok(await gql(t, w.other, Q.comment, { post: target.id, i: { content: 'reply', parentId: parent.id } })).createComment;
      expect(reply.parentId).toBe(parent.id);
    });

    it('answers invalid_parent (400) for a parent on another post', async () => {
      const elsewhere = await post(w.member, w.tribe.id);
      const foreign = ok(await gql(t, w.member, Q.comment, { post: elsewhere.id, i: { content: 'there' } })).createComment;
      expect(failure(await gql(t, w.member, Q.comment, { post: target.id, i: { content: 'x', parentId: foreign.id } }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_parent', status: 400 });
    });

    it('answers invalid_input (400) for a draft post, empty content or a non-UUID parent', async () => {
      const draft = await post(w.member, w.tribe.id, { status: 'draft' });
      expect(failure(await gql(t, w.member, Q.comment, { post: draft.id, i: { content: 'x' } }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input', status: 400 });
      expect(failure(await gql(t, w.member, Q.comment, { post: target.id, i: { content: '  ' } }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input', status: 400 });
      expect(failure(await gql(t, w.member, Q.comment, { post: target.id, i: { content: 'x', parentId: 'nope' } }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input', status: 400 });
    });

    it('answers forbidden (403) to outsiders and unauthorized (401) to anonymous callers', async () => {
      expect(failure(await gql(t, w.outsider, Q.comment, { post: target.id, i: { content: 'x' } }))).toEqual({ code: 'FORBIDDEN', reason: 'forbidden', status: 403 });
      expect(failure(await gql(t, null, Q.comment, { post: target.id, i: { content: 'x' } }))).toEqual({ code: 'UNAUTHENTICATED', reason: 'unauthorized', status: 401 });
    });

    it('lists comments oldest first with paging, to anyone who sees the post', async () => {
      const fresh = await post(w.member, w.tribe.id);
      const made: string[] = [];
      for (const n of [1, 2, 3]) made.push(ok(await gql(t, w.member, Q.comment, { post: fresh.id, i: { content: `c${n}` } })).createComment.id);
      const all = ok(await gql(t, null, Q.comments, { post: fresh.id })).comments;
      expect(all.items.map((c: any) => c.id)).toEqual(made);
      expect(all).toMatchObject({ page: 1, perPage: 20, hasMore: false });
      const second = ok(await gql(t, w.outsider, Q.comments, { post: fresh.id, p: 2, pp: 2 })).comments;
      expect(second).toMatchObject({ page: 2, perPage: 2, hasMore: false });
      expect(second.items.map((c: any) => c.id)).toEqual([made[2]]);
    });

    it('answers not_found (404) for comments of a post the caller may not see', async () => {
      const p = await world({ isPublic: false });
      const hidden = await post(p.member, p.tribe.id);
      expect(failure(await gql(t, p.outsider, Q.comments, { post: hidden.id }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
      expect(failure(await gql(t, null, Q.comments, { post: hidden.id }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
      expect(ok(await gql(t, p.other, Q.comments, { post: hidden.id })).comments.items).toEqual([]);
    });
  });
});
