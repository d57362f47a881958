import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { accessToken, createTribe, join, setRole, signupUser, UNKNOWN_ID, type TestUser } from './factory.js';
import { countOf, gql, sqlRows, startService, type TestService, ok, failure } from './support.js';

const FORBIDDEN = { code: 'FORBIDDEN', reason: 'forbidden' };
const UNAUTHENTICATED = { code: 'UNAUTHENTICATED', reason: 'unauthorized' };
const NOT_FOUND = { code: 'NOT_FOUND', reason: 'not_found' };

const COMMENT = 'id body parentId createdAt updatedAt deletedAt author { id } post { id } mentions { id }';
const Q = {
  post: 'mutation($c: ID!, $i: CreatePostInput!){ createPost(communityId: $c, input: $i){ id } }',
  comment: `mutation($post: ID!, $c: ID, $i: CreateCommentInput!){ createComment(postId: $post, communityId: $c, input: $i){ ${COMMENT} } }`,
  update: `mutation($id: ID!, $c: ID, $i: UpdateCommentInput!){ updateComment(id: $id, communityId: $c, input: $i){ ${COMMENT} } }`,
  remove: 'mutation($id: ID!, $c: ID){ deleteComment(id: $id, communityId: $c) }',
  list: `query($post: ID!, $c: ID){ comments(postId: $post, communityId: $c, perPage: 50){ items { ${COMMENT} } } }`,
};

describe('comments: updateComment and deleteComment', () => {
  let t: TestService;

  /** A tribe with an owner, a moderator, two members and an outsider. */
  const world = async (overrides: Record<string, unknown> = {}) => {
    const [owner, moderator, member, other, outsider] = await Promise.all([1, 2, 3, 4, 5].map(() => signupUser(t)));
    const tribe = await createTribe(t, owner, overrides);
    const code = tribe.isPublic ? undefined : (ok(await gql(t, owner, 'mutation($c: ID!){ createInvite(communityId: $c) }', { c: tribe.id })).createInvite as string);
    for (const u of [moderator, member, other]) await join(t, u, tribe.handle, code);
    await setRole(t, owner, tribe.id, moderator.id, 'moderator');
    return { owner, moderator, member, other, outsider, tribe };
  };
  type World = Awaited<ReturnType<typeof world>>;
  const newPost = async (as: TestUser, communityId: string, content = 'a post') => ok(await gql(t, as, Q.post, { c: communityId, i: { content } })).createPost.id as string;
  const newComment = async (as: TestUser, postId: string, content = 'a comment', parentId?: string) =>
    ok(await gql(t, as, Q.comment, { post: postId, i: { content, parentId } })).createComment;
  const commentRow = async (id: string) => (await sqlRows(t, sql`select body, updated_at, deleted_at from comments where id = ${id}`))[0];
  const commentCount = async (postId: string) => countOf(t, sql`select comment_count as n from posts where id = ${postId}`);
  const listed = async (as: TestUser | null, postId: string) => ok(await gql(t, as, Q.list, { post: postId })).comments.items;

  beforeAll(async () => {
    t = await startService();
  });
  afterAll(async () => {
    await t.stop();
  });

  describe('updateComment', () => {
    let w: World;
    let postId: string;
    beforeAll(async () => {
      w = await world();
      postId = await newPost(w.owner, w.tribe.id);
    });

    it('lets the author replace the text, sanitized as on creation, and sets updatedAt', async () => {
      const c = await newComment(w.member, postId, 'first');
      expect(c.updatedAt).toBeNull();
      const out = ok(await gql(t, w.member, Q.update, { id: c.id, c: w.tribe.id, i: { content: '<b>edited</b><script>x()</script>' } })).updateComment;
      expect(out).toEqual({ ...c, body: '<b>edited</b>', updatedAt: expect.any(String) });
      expect(new Date(out.updatedAt).getTime()).toBeGreaterThanOrEqual(new Date(c.createdAt).getTime());
      const row = await commentRow(c.id);
      expect(row.body).toBe('<b>edited</b>');
      expect(row.updated_at).not.toBeNull();
      expect(row.deleted_at).toBeNull();
    });

    it.each(['moderator', 'owner'] as const)("lets the tribe's %s edit a member's comment", async (who) => {
      const c = await newComment(w.member, postId);
      const out = ok(await gql(t, w[who], Q.update, { id: c.id, i: { content: `moderated by ${who}` } })).updateComment;
      expect(out).toMatchObject({ id: c.id, body: `moderated by ${who}`, author: { id: w.member.id } });
    });

    it('refuses another member and an outsider (FORBIDDEN) and anonymous callers (UNAUTHENTICATED), writing nothing', async () => {
      const c = await newComment(w.member, postId, 'untouched');
      expect(failure(await gql(t, w.other, Q.update, { id: c.id, i: { content: 'hijack' } }))).toEqual(FORBIDDEN);
      expect(failure(await gql(t, w.outsider, Q.update, { id: c.id, i: { content: 'hijack' } }))).toEqual(FORBIDDEN);
      expect(failure(await gql(t, null, Q.update, { id: c.id, i: { content: 'hijack' } }))).toEqual(UNAUTHENTICATED);
      expect(await commentRow(c.id)).toEqual({ body: 'untouched', updated_at: null, deleted_at: null });
    });

    it('answers invalid_input for content that is empty after removing unsafe HTML, writing nothing', async () => {
      const c = await newComment(w.member, postId, 'kept');
      expect(failure(await gql(t, w.member, Q.update, { id: c.id, i: { content: '<script>x()</script>' } }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input' });
      expect(failure(await gql(t, w.member, Q.update, { id: c.id, i: { content: 'x'.repeat(50_001) } }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input' });
      expect(await commentRow(c.id)).toEqual({ body: 'kept', updated_at: null, deleted_at: null });
    });

    it('answers NOT_FOUND for an unknown id, another tribe than communityId, a post the caller may not see, and a tombstone', async () => {
      const c = await newComment(w.member, postId);
      const elsewhere = await world();
      expect(failure(await gql(t, w.member, Q.update, { id: UNKNOWN_ID, i: { content: 'x' } }))).toEqual(NOT_FOUND);
      expect(failure(await gql(t, w.member, Q.update, { id: 'not-a-uuid', i: { content: 'x' } }))).toEqual(NOT_FOUND);
      expect(failure(await gql(t, w.member, Q.update, { id: c.id, c: elsewhere.tribe.id, i: { content: 'x' } }))).toEqual(NOT_FOUND);

      const secret = await world({ isPublic: false });
      const hidden = await newComment(secret.member, await newPost(secret.owner, secret.tribe.id));
      expect(failure(await gql(t, w.member, Q.update, { id: hidden.id, i: { content: 'x' } }))).toEqual(NOT_FOUND);
      expect(failure(await gql(t, null, Q.update, { id: hidden.id, i: { content: 'x' } }))).toEqual(NOT_FOUND);

      const parent = await newComment(w.member, postId, 'parent');
      await newComment(w.other, postId, 'reply', parent.id);
      ok(await gql(t, w.member, Q.remove, { id: parent.id }));
      expect(failure(await gql(t, w.member, Q.update, { id: parent.id, i: { content: 'back from the dead' } }))).toEqual(NOT_FOUND);
      expect(await commentRow(parent.id)).toMatchObject({ body: null, updated_at: null });
    });
  });

  describe('deleteComment', () => {
    let w: World;
    beforeAll(async () => {
      w = await world();
    });

    it('deletes a comment without replies by its author, and the post counts one comment less', async () => {
      const postId = await newPost(w.owner, w.tribe.id);
      const keep = await newComment(w.other, postId);
      const c = await newComment(w.member, postId);
      expect(await commentCount(postId)).toBe(2);
      expect(ok(await gql(t, w.member, Q.remove, { id: c.id, c: w.tribe.id })).deleteComment).toBe(true);
      expect(await commentRow(c.id)).toBeUndefined();
      expect(await commentCount(postId)).toBe(1);
      expect((await listed(w.member, postId)).map((x: any) => x.id)).toEqual([keep.id]);
    });

    it('keeps a comment with replies as a tombstone: listed with body null and deletedAt, replies intact', async () => {
      const postId = await newPost(w.owner, w.tribe.id);
      const parent = await newComment(w.member, postId, `parent @${w.other.username}`);
      expect(parent.mentions).toEqual([{ id: w.other.id }]);
      const reply = await newComment(w.other, postId, 'a reply', parent.id);
      const nested = await newComment(w.owner, postId, 'a nested reply', reply.id);
      expect(await commentCount(postId)).toBe(3);

      expect(ok(await gql(t, w.member, Q.remove, { id: parent.id })).deleteComment).toBe(true);
      expect(await commentCount(postId)).toBe(2);
      const thread = await listed(w.outsider, postId);
      expect(thread).toEqual([
        { ...parent, body: null, deletedAt: expect.any(String), mentions: [] },
        reply,
        nested,
      ]);
      expect(await countOf(t, sql`select count(*)::int as n from mentions where comment_id = ${parent.id}`)).toBe(0);
    });

    it('refuses a reply to a tombstone with invalid_parent, writing nothing', async () => {
      const postId = await newPost(w.owner, w.tribe.id);
      const parent = await newComment(w.member, postId);
      await newComment(w.other, postId, 'reply', parent.id);
      ok(await gql(t, w.member, Q.remove, { id: parent.id }));
      const before = await commentCount(postId);
      expect(failure(await gql(t, w.owner, Q.comment, { post: postId, i: { content: 'late', parentId: parent.id } }))).toEqual({
        code: 'BAD_USER_INPUT',
        reason: 'invalid_parent',
      });
      expect(await commentCount(postId)).toBe(before);
      expect(await countOf(t, sql`select count(*)::int as n from comments where post_id = ${postId}`)).toBe(2);
    });

    it('removes a tombstone once its last reply is deleted', async () => {
      const postId = await newPost(w.owner, w.tribe.id);
      const parent = await newComment(w.member, postId);
      const reply = await newComment(w.other, postId, 'reply', parent.id);
      ok(await gql(t, w.member, Q.remove, { id: parent.id }));
      ok(await gql(t, w.other, Q.remove, { id: reply.id }));
      expect(await listed(w.member, postId)).toEqual([]);
      expect(await commentCount(postId)).toBe(0);
    });

    it.each(['moderator', 'owner'] as const)("lets the tribe's %s delete a member's comment", async (who) => {
      const postId = await newPost(w.owner, w.tribe.id);
      const c = await newComment(w.member, postId);
      expect(ok(await gql(t, w[who], Q.remove, { id: c.id })).deleteComment).toBe(true);
      expect(await commentRow(c.id)).toBeUndefined();
      expect(await commentCount(postId)).toBe(0);
    });

    it('refuses another member and an outsider (FORBIDDEN) and anonymous callers (UNAUTHENTICATED), writing nothing', async () => {
      const postId = await newPost(w.owner, w.tribe.id);
      const c = await newComment(w.member, postId, 'stays');
      expect(failure(await gql(t, w.other, Q.remove, { id: c.id }))).toEqual(FORBIDDEN);
      expect(failure(await gql(t, w.outsider, Q.remove, { id: c.id }))).toEqual(FORBIDDEN);
      expect(failure(await gql(t, null, Q.remove, { id: c.id }))).toEqual(UNAUTHENTICATED);
      expect(await commentRow(c.id)).toEqual({ body: 'stays', updated_at: null, deleted_at: null });
      expect(await commentCount(postId)).toBe(1);
    });

    it('answers NOT_FOUND for another tribe than communityId and for a tombstone, counting nothing twice', async () => {
      const postId = await newPost(w.owner, w.tribe.id);
      const parent = await newComment(w.member, postId);
      await newComment(w.other, postId, 'reply', parent.id);
      const elsewhere = await world();
      expect(failure(await gql(t, w.member, Q.remove, { id: parent.id, c: elsewhere.tribe.id }))).toEqual(NOT_FOUND);
      expect(await commentCount(postId)).toBe(2);
      ok(await gql(t, w.member, Q.remove, { id: parent.id }));
      expect(failure(await gql(t, w.member, Q.remove, { id: parent.id }))).toEqual(NOT_FOUND);
      expect(failure(await gql(t, w.moderator, Q.remove, { id: parent.id }))).toEqual(NOT_FOUND);
      expect(await commentCount(postId)).toBe(1);
    });

    it('answers NOT_FOUND for a comment in a private tribe the caller is not in', async () => {
      const secret = await world({ isPublic: false });
      const postId = await newPost(secret.owner, secret.tribe.id);
      const c = await newComment(secret.member, postId);
      expect(failure(await gql(t, w.moderator, Q.remove, { id: c.id }))).toEqual(NOT_FOUND);
      expect(failure(await gql(t, null, Q.remove, { id: c.id }))).toEqual(NOT_FOUND);
      expect(await commentCount(postId)).toBe(1);
    });
  });

  describe('the resource API', () => {
    it('lists a tombstone with content null in the same comment shape', async () => {
      const w = await world();
      const postId = await newPost(w.owner, w.tribe.id);
      const parent = await newComment(w.member, postId, 'gone soon');
      const reply = await newComment(w.other, postId, 'still here', parent.id);
      ok(await gql(t, w.member, Q.remove, { id: parent.id }));
      const token = await accessToken(t, w.other);
      const res = await t.api.get(`/v1/communities/${w.tribe.id}/posts/${postId}/comments`).set('authorization', `Bearer ${token}`);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([
        expect.objectContaining({ id: parent.id, body: null, content: null, parent_id: null, author_id: w.member.id }),
        expect.objectContaining({ id: reply.id, content: 'still here', parent_id: parent.id }),
      ]);
      expect(Object.keys(res.body.data[0]).sort()).toEqual(['author', 'author_id', 'body', 'content', 'created_at', 'id', 'parent_id', 'post_id']);
    });
  });
});
