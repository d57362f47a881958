import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type SQL, sql } from 'drizzle-orm';
import { createTribe, join, setRole, signupUser, unique, type TestUser } from './factory.js';
import { gql, startService, type TestService } from './support.js';

type Result = Awaited<ReturnType<typeof gql>>;
type Rows = Array<Record<string, any>>;
/** The rows of a SQL query on the service's database. */
const query = async (t: TestService, q: SQL): Promise<Rows> => ((await t.deps.database.db.execute(q)) as { rows: Rows }).rows;
const ok = (out: Result) => {
  expect(out.errors).toBeUndefined();
  return out.data;
};
const codeOf = (out: Result) => out.errors?.[0]?.extensions?.reason;

const JOIN = 'mutation($h: String!, $c: String){ joinCommunity(handle: $h, inviteCode: $c){ id role } }';
const LEAVE = 'mutation($h: String!){ leaveCommunity(handle: $h) }';
const REMOVE = 'mutation($c: ID!, $u: ID!){ removeMember(communityId: $c, userId: $u) }';
const INVITE = 'mutation($c: ID!){ createInvite(communityId: $c) }';
const CREATE_POST = 'mutation($c: ID!, $i: CreatePostInput!){ createPost(communityId: $c, input: $i){ id } }';
const UPDATE_COMMUNITY = 'mutation($id: ID!, $i: UpdateCommunityInput!){ updateCommunity(id: $id, input: $i){ handle } }';

describe('transactional outbox (events table)', () => {
  let t: TestService;
  /** Every event of a tribe, oldest first, as `{type, data}`. */
  const eventsOf = async (communityId: string, type?: string) =>
    (await query(
      t,
      type
        ? sql`select type, data from outbox_events where community_id = ${communityId} and type = ${type} order by created_at, id`
        : sql`select type, data from outbox_events where community_id = ${communityId} order by created_at, id`,
    )) as Array<{ type: string; data: Record<string, unknown> }>;
  const membersOf = async (communityId: string, userId: string) =>
    query(t, sql`select id, role from members where community_id = ${communityId} and user_id = ${userId}`);

  beforeAll(async () => {
    t = await startService();
  });
  afterAll(async () => {
    await t.stop();
  });

  describe('member.joined', () => {
    it('is written by joinCommunity with data exactly {userId, handle} of the tribe', async () => {
      const owner = await signupUser(t);
      const user = await signupUser(t);
      const tribe = await createTribe(t, owner);
      await join(t, user, tribe.handle.toUpperCase());
      expect(await eventsOf(tribe.id)).toEqual([{ type: 'member.joined', data: { userId: user.id, handle: tribe.handle } }]);
    });

    it('is written for a private tribe joined with an invite code', async () => {
      const owner = await signupUser(t);
      const user = await signupUser(t);
      const tribe = await createTribe(t, owner, { isPublic: false });
      const code = ok(await gql(t, owner, INVITE, { c: tribe.id })).createInvite;
      await join(t, user, tribe.handle, code);
      expect(await eventsOf(tribe.id)).toEqual([{ type: 'member.joined', data: { userId: user.id, handle: tribe.handle } }]);
    });

    it('is written by a signup with an invite code', async () => {
      const owner = await signupUser(t);
      const tribe = await createTribe(t, owner, { isPublic: false });
      const code = ok(await gql(t, owner, INVITE, { c: tribe.id })).createInvite;
      const user = await signupUser(t, { inviteCode: code });
      expect(await eventsOf(tribe.id)).toEqual([{ type: 'member.joined', data: { userId: user.id, handle: tribe.handle } }]);
    });

    it('is not written for the creator becoming owner, nor for a repeated join', async () => {
      const owner = await signupUser(t);
      const user = await signupUser(t);
      const tribe = await createTribe(t, owner);
      expect(await eventsOf(tribe.id)).toEqual([]);
      await join(t, user, tribe.handle);
      await join(t, user, tribe.handle);
      await join(t, owner, tribe.handle);
      expect(await eventsOf(tribe.id, 'member.joined')).toHaveLength(1);
    });

    it('is recorded against the tribe with a creation time', async () => {
      const owner = await signupUser(t);
      const user = await signupUser(t);
      const tribe = await createTribe(t, owner);
      await join(t, user, tribe.handle);
      const rows = await query(t, sql`select community_id, type, created_at from outbox_events where community_id = ${tribe.id}`);
      expect(rows).toEqual([{ community_id: tribe.id, type: 'member.joined', created_at: expect.anything() }]);
    });

    it('is written exactly once when ten joins of the same user race', async () => {
      const owner = await signupUser(t);
      const user = await signupUser(t);
      const tribe = await createTribe(t, owner);
      const results = await Promise.all(Array.from({ length: 10 }, () => gql(t, user, JOIN, { h: tribe.handle })));
      for (const r of results) expect(r.errors).toBeUndefined();
      const ids = new Set(results.map((r) => r.data.joinCommunity.id));
      expect(ids.size).toBe(1);
      const rows = await membersOf(tribe.id, user.id);
      expect(rows).toEqual([{ id: [...ids][0], role: 'member' }]);
      expect(await eventsOf(tribe.id)).toEqual([{ type: 'member.joined', data: { userId: user.id, handle: tribe.handle } }]);
    });

    it('is written exactly once when ten invite joins of the same user race on a private tribe', async () => {
      const owner = await signupUser(t);
      const user = await signupUser(t);
      const tribe = await createTribe(t, owner, { isPublic: false });
      const code = ok(await gql(t, owner, INVITE, { c: tribe.id })).createInvite;
      const results = await Promise.all(Array.from({ length: 10 }, () => gql(t, user, JOIN, { h: tribe.handle, c: code })));
      for (const r of results) expect(r.errors).toBeUndefined();
      expect(await membersOf(tribe.id, user.id)).toHaveLength(1);
      expect(await eventsOf(tribe.id, 'member.joined')).toHaveLength(1);
    });

    it('is not written when joining a private tribe is refused', async () => {
      const owner = await signupUser(t);
      const user = await signupUser(t);
      const tribe = await createTribe(t, owner, { isPublic: false });
      expect(codeOf(await gql(t, user, JOIN, { h: tribe.handle }))).toBe('forbidden');
      expect(await eventsOf(tribe.id)).toEqual([]);
    });

    it('is not written when a signup fails on a taken username after the invite was valid', async () => {
      const owner = await signupUser(t);
      const tribe = await createTribe(t, owner, { isPublic: false });
      const code = ok(await gql(t, owner, INVITE, { c: tribe.id })).createInvite;
      const res = await t.api.post('/auth/signup').send({ email: `dup_${unique()}@example.com`, password: 'correct horse battery', username: owner.username, displayName: 'Dup', inviteCode: code });
      expect(res.status).toBe(409);
      expect(await eventsOf(tribe.id)).toEqual([]);
    });
  });

  describe('member.left', () => {
    it('is written by leaveCommunity with data exactly {userId, handle} of the tribe', async () => {
      const owner = await signupUser(t);
      const user = await signupUser(t);
      const tribe = await createTribe(t, owner);
      await join(t, user, tribe.handle);
      ok(await gql(t, user, LEAVE, { h: tribe.handle }));
      expect(await eventsOf(tribe.id, 'member.left')).toEqual([{ type: 'member.left', data: { userId: user.id, handle: tribe.handle } }]);
    });

    it('carries the tribe’s current handle after a rename', async () => {
      const owner = await signupUser(t);
      const user = await signupUser(t);
      const tribe = await createTribe(t, owner);
      await join(t, user, tribe.handle);
      const renamed = `renamed-${unique()}`;
      ok(await gql(t, owner, UPDATE_COMMUNITY, { id: tribe.id, i: { handle: renamed } }));
      ok(await gql(t, user, LEAVE, { h: renamed }));
      expect(await eventsOf(tribe.id, 'member.left')).toEqual([{ type: 'member.left', data: { userId: user.id, handle: renamed } }]);
    });

    it('is not written when the owner’s leave fails (owner_cannot_leave)', async () => {
      const owner = await signupUser(t);
      const tribe = await createTribe(t, owner);
      expect(codeOf(await gql(t, owner, LEAVE, { h: tribe.handle }))).toBe('owner_cannot_leave');
      expect(await eventsOf(tribe.id)).toEqual([]);
      expect(await membersOf(tribe.id, owner.id)).toEqual([{ id: expect.any(String), role: 'owner' }]);
    });

    it('is not written when a non-member leaves', async () => {
      const owner = await signupUser(t);
      const user = await signupUser(t);
      const tribe = await createTribe(t, owner);
      expect(codeOf(await gql(t, user, LEAVE, { h: tribe.handle }))).toBe('not_found');
      expect(await eventsOf(tribe.id)).toEqual([]);
    });
  });

  describe('member.removed', () => {
    let owner: TestUser;
    let tribe: { id: string; handle: string };
    beforeAll(async () => {
      owner = await signupUser(t);
      tribe = await createTribe(t, owner);
    });

    it('is written by removeMember with data exactly {userId, handle}: the removed user and the tribe', async () => {
      const user = await signupUser(t);
      await join(t, user, tribe.handle);
      ok(await gql(t, owner, REMOVE, { c: tribe.id, u: user.id }));
      const removed = (await eventsOf(tribe.id, 'member.removed')).filter((e) => e.data.userId === user.id);
      expect(removed).toEqual([{ type: 'member.removed', data: { userId: user.id, handle: tribe.handle } }]);
    });

    it('is not written when the removal is forbidden, and the target stays', async () => {
      const moderator = await signupUser(t);
      const admin = await signupUser(t);
      await join(t, moderator, tribe.handle);
      await join(t, admin, tribe.handle);
      await setRole(t, owner, tribe.id, moderator.id, 'moderator');
      await setRole(t, owner, tribe.id, admin.id, 'admin');
      expect(codeOf(await gql(t, moderator, REMOVE, { c: tribe.id, u: admin.id }))).toBe('forbidden');
      expect((await eventsOf(tribe.id, 'member.removed')).filter((e) => e.data.userId === admin.id)).toEqual([]);
      expect(await membersOf(tribe.id, admin.id)).toHaveLength(1);
    });
  });

  describe('post.created', () => {
    let owner: TestUser;
    let tribe: { id: string; handle: string };
    beforeAll(async () => {
      owner = await signupUser(t);
      tribe = await createTribe(t, owner);
    });
    const postEvents = async (postId: string) => (await eventsOf(tribe.id, 'post.created')).filter((e) => e.data.postId === postId);

    it('is written for a published post, with the post, its author and the tribe handle', async () => {
      const created = ok(await gql(t, owner, CREATE_POST, { c: tribe.id, i: { content: 'hello' } })).createPost;
      expect(await postEvents(created.id)).toEqual([{ type: 'post.created', data: { postId: created.id, authorId: owner.id, handle: tribe.handle } }]);
    });

    it('is not written for a draft', async () => {
      const created = ok(await gql(t, owner, CREATE_POST, { c: tribe.id, i: { content: 'later', status: 'draft' } })).createPost;
      expect(await postEvents(created.id)).toEqual([]);
    });

    it('is not written when creating the post fails', async () => {
      const member = await signupUser(t);
      await join(t, member, tribe.handle);
      const before = (await eventsOf(tribe.id, 'post.created')).length;
      expect(codeOf(await gql(t, member, CREATE_POST, { c: tribe.id, i: { content: 'pin', isPinned: true } }))).toBe('forbidden');
      expect(codeOf(await gql(t, member, CREATE_POST, { c: tribe.id, i: { content: '<script>x()</script>' } }))).toBe('invalid_input');
      expect(await eventsOf(tribe.id, 'post.created')).toHaveLength(before);
    });
  });
});

describe('post.created for a published draft', () => {
  it('is written once when a draft is published, never again on later edits', async () => {
    const { sql } = await import('drizzle-orm');
    const t = await startService();
    try {
      const owner = await signupUser(t);
      const tribe = await createTribe(t, owner);
      const draft = await gql(t, owner, 'mutation($c: ID!){ createPost(communityId: $c, input: {content: "d", status: "draft"}){ id } }', { c: tribe.id });
      const id = draft.data.createPost.id;
      const count = async () =>
        ((await t.deps.database.db.execute(sql`select count(*)::int as n from outbox_events where type = 'post.created' and data->>'postId' = ${id}`)) as unknown as { rows: Array<{ n: number }> }).rows[0].n;
      expect(await count()).toBe(0);
      const publish = 'mutation($id: ID!, $s: String){ updatePost(id: $id, input: {status: $s}){ status } }';
      expect((await gql(t, owner, publish, { id, s: 'published' })).data.updatePost.status).toBe('published');
      expect(await count()).toBe(1);
      await gql(t, owner, publish, { id, s: 'draft' });
      await gql(t, owner, publish, { id, s: 'published' });
      expect(await count()).toBe(1);
    } finally {
      await t.stop();
    }
  });
});
