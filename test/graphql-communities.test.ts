import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type SQL, sql } from 'drizzle-orm';
import { createTribe, join, setRole, signupUser, unique, type TestUser } from './factory.js';
import { gql, startService, type TestService } from './support.js';

type Result = Awaited<ReturnType<typeof gql>>;
type Rows = Array<Record<string, any>>;
/** The rows of a SQL query on the service's database. */
const query = async (t: TestService, q: SQL): Promise<Rows> => ((await t.deps.database.db.execute(q)) as { rows: Rows }).rows;

/** The data of a result that must have succeeded. */
const ok = (out: Result) => {
  expect(out.errors).toBeUndefined();
  return out.data;
};
/** The code and status of the only error of a result. */
const failure = (out: Result) => {
  expect(out.errors).toHaveLength(1);
  const ext = out.errors![0].extensions ?? {};
  return { code: ext.code, reason: ext.reason, status: ext.status };
};

const COMMUNITY = 'id handle name description isPublic category memberCount viewerRole createdAt updatedAt';
const Q = {
  me: '{ me { id username displayName email avatarUrl createdAt } }',
  byHandle: `query($h: String){ community(handle: $h){ ${COMMUNITY} } }`,
  byId: `query($id: ID){ community(id: $id){ ${COMMUNITY} } }`,
  list: 'query($s: String, $p: Int, $pp: Int){ communities(search: $s, page: $p, perPage: $pp){ items { id name } page perPage hasMore } }',
  create: `mutation($i: CreateCommunityInput!){ createCommunity(input: $i){ ${COMMUNITY} } }`,
  update: `mutation($id: ID!, $i: UpdateCommunityInput!){ updateCommunity(id: $id, input: $i){ ${COMMUNITY} } }`,
  remove: 'mutation($id: ID!){ deleteCommunity(id: $id) }',
  join: 'mutation($h: String!, $c: String){ joinCommunity(handle: $h, inviteCode: $c){ id role community { id handle } user { id username } joinedAt xp level } }',
  leave: 'mutation($h: String!){ leaveCommunity(handle: $h) }',
  invite: 'mutation($c: ID!){ createInvite(communityId: $c) }',
  members:
    'query($c: ID!, $r: String, $s: String, $p: Int, $pp: Int){ members(communityId: $c, role: $r, search: $s, page: $p, perPage: $pp){ items { id role user { id username displayName email } } page perPage hasMore } }',
  member: 'query($c: ID!, $u: ID!){ member(communityId: $c, userId: $u){ id role user { id } community { id } } }',
  setRole: 'mutation($c: ID!, $u: ID!, $r: String!){ updateMemberRole(communityId: $c, userId: $u, role: $r){ id role user { id } } }',
  removeMember: 'mutation($c: ID!, $u: ID!){ removeMember(communityId: $c, userId: $u) }',
};

describe('GraphQL communities and members', () => {
  let t: TestService;
  const rows = (q: SQL) => query(t, q);
  const membership = (communityId: string, userId: string) => rows(sql`select id, role from members where community_id = ${communityId} and user_id = ${userId}`);
  const joinedEvents = (communityId: string, userId: string) =>
    rows(sql`select type, data from outbox_events where community_id = ${communityId} and type = 'member.joined' and data->>'userId' = ${userId}`);
  const inviteFor = async (owner: TestUser, communityId: string) => ok(await gql(t, owner, Q.invite, { c: communityId })).createInvite as string;

  beforeAll(async () => {
    t = await startService();
  });
  afterAll(async () => {
    await t.stop();
  });

  describe('me', () => {
    it('is null without a session, with no error', async () => {
      const out = await gql(t, null, Q.me);
      expect(out).toEqual({ data: { me: null } });
    });

    it('is the signed-in user, email included', async () => {
      const user = await signupUser(t, { displayName: 'Me Myself' });
      const me = ok(await gql(t, user, Q.me)).me;
      expect(me).toEqual({ id: user.id, username: user.username, displayName: 'Me Myself', email: user.email, avatarUrl: null, createdAt: expect.any(String) });
    });
  });

  describe('User.email', () => {
    it('is null unless the caller is that user', async () => {
      const owner = await signupUser(t);
      const member = await signupUser(t);
      const tribe = await createTribe(t, owner);
      await join(t, member, tribe.handle);
      const emailsSeenBy = async (viewer: TestUser | null) =>
        Object.fromEntries(ok(await gql(t, viewer, Q.members, { c: tribe.id })).members.items.map((m: any) => [m.user.id, m.user.email]));
      expect(await emailsSeenBy(owner)).toEqual({ [owner.id]: owner.email, [member.id]: null });
      expect(await emailsSeenBy(member)).toEqual({ [owner.id]: null, [member.id]: member.email });
      expect(await emailsSeenBy(null)).toEqual({ [owner.id]: null, [member.id]: null });
    });
  });

  describe('community', () => {
    let owner: TestUser;
    let tribe: { id: string; handle: string; name: string };
    beforeAll(async () => {
      owner = await signupUser(t);
      tribe = await createTribe(t, owner, { description: 'About us', category: 'fitness' });
    });

    it('finds a tribe by handle, case-insensitively, with memberCount and the viewer’s role', async () => {
      const found = ok(await gql(t, owner, Q.byHandle, { h: tribe.handle.toUpperCase() })).community;
      expect(found).toEqual({
        id: tribe.id,
        handle: tribe.handle,
        name: tribe.name,
        description: 'About us',
        isPublic: true,
        category: 'fitness',
        memberCount: 1,
        viewerRole: 'owner',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
    });

    it('shows the metadata to anonymous callers with viewerRole null', async () => {
      const found = ok(await gql(t, null, Q.byHandle, { h: tribe.handle })).community;
      expect(found).toMatchObject({ id: tribe.id, viewerRole: null, memberCount: 1 });
    });

    it('finds a tribe by id', async () => {
      expect(ok(await gql(t, null, Q.byId, { id: tribe.id })).community.handle).toBe(tribe.handle);
    });

    it('answers not_found (404) for an unknown handle and for a non-UUID id', async () => {
      const byHandle = await gql(t, null, Q.byHandle, { h: `missing-${unique()}` });
      expect(failure(byHandle)).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
      expect(byHandle.data).toEqual({ community: null });
      expect(failure(await gql(t, null, Q.byId, { id: 'nope' }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
    });

    it('answers invalid_input (400) without a handle or an id', async () => {
      expect(failure(await gql(t, null, '{ community { id } }'))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input', status: 400 });
    });
  });

  describe('communities', () => {
    const token = `zq${unique()}`;
    const created: string[] = [];
    beforeAll(async () => {
      const owner = await signupUser(t);
      for (const n of [1, 2, 3]) created.push((await createTribe(t, owner, { name: `Search ${token} ${n}` })).id);
      await createTribe(t, owner, { name: `Other ${unique()}` });
    });

    it('filters by name (case-insensitive) and lists newest first', async () => {
      const page = ok(await gql(t, null, Q.list, { s: token.toUpperCase() })).communities;
      expect(page.items.map((c: any) => c.id)).toEqual([...created].reverse());
      expect(page).toMatchObject({ page: 1, perPage: 20, hasMore: false });
    });

    it('pages with page and perPage, hasMore true while a next page exists', async () => {
      const first = ok(await gql(t, null, Q.list, { s: token, p: 1, pp: 2 })).communities;
      expect(first).toEqual({ items: [{ id: created[2], name: `Search ${token} 3` }, { id: created[1], name: `Search ${token} 2` }], page: 1, perPage: 2, hasMore: true });
      const second = ok(await gql(t, null, Q.list, { s: token, p: 2, pp: 2 })).communities;
      expect(second).toEqual({ items: [{ id: created[0], name: `Search ${token} 1` }], page: 2, perPage: 2, hasMore: false });
      const beyond = ok(await gql(t, null, Q.list, { s: token, p: 5, pp: 2 })).communities;
      expect(beyond).toEqual({ items: [], page: 5, perPage: 2, hasMore: false });
    });

    it('clamps perPage to 50', async () => {
      expect(ok(await gql(t, null, Q.list, { s: token, pp: 500 })).communities.perPage).toBe(50);
    });

    it('treats % and _ in the search as literal characters', async () => {
      expect(ok(await gql(t, null, Q.list, { s: `${token}%` })).communities.items).toEqual([]);
      expect(ok(await gql(t, null, Q.list, { s: `Search_${token}` })).communities.items).toEqual([]);
    });

    it.each([
      ['page 0', { p: 0 }],
      ['perPage 0', { pp: 0 }],
      ['a negative page', { p: -1 }],
    ])('answers invalid_query (400) for %s', async (_what, vars) => {
      expect(failure(await gql(t, null, Q.list, vars))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_query', status: 400 });
    });
  });

  describe('createCommunity', () => {
    it('creates a public tribe by default and makes the creator its owner', async () => {
      const owner = await signupUser(t);
      const handle = `new-${unique()}`;
      const created = ok(await gql(t, owner, Q.create, { i: { name: '  Runners  ', handle } })).createCommunity;
      expect(created).toMatchObject({ handle, name: 'Runners', description: '', isPublic: true, category: null, memberCount: 1, viewerRole: 'owner' });
      expect(await membership(created.id, owner.id)).toEqual([{ id: expect.any(String), role: 'owner' }]);
    });

    it('lowercases the handle and keeps isPublic false when sent', async () => {
      const owner = await signupUser(t);
      const handle = `Mixed-${unique()}`;
      const created = ok(await gql(t, owner, Q.create, { i: { name: 'Private', handle, isPublic: false } })).createCommunity;
      expect(created.handle).toBe(handle.toLowerCase());
      expect(created.isPublic).toBe(false);
    });

    it('answers handle_taken (409) for a taken handle, also in another case, and writes nothing', async () => {
      const owner = await signupUser(t);
      const tribe = await createTribe(t, owner);
      const out = await gql(t, owner, Q.create, { i: { name: 'Copy', handle: tribe.handle.toUpperCase() } });
      expect(failure(out)).toEqual({ code: 'CONFLICT', reason: 'handle_taken', status: 409 });
      expect(await rows(sql`select 1 from communities where lower(handle) = ${tribe.handle}`)).toHaveLength(1);
    });

    it.each([
      ['a too-short handle', { name: 'X', handle: 'ab' }],
      ['a handle with an underscore', { name: 'X', handle: 'bad_handle' }],
      ['a handle ending with a dash', { name: 'X', handle: 'bad-' }],
      ['a blank name', { name: '   ', handle: 'fine-handle' }],
    ])('answers invalid_input (400) for %s', async (_what, input) => {
      const owner = await signupUser(t);
      expect(failure(await gql(t, owner, Q.create, { i: input }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input', status: 400 });
    });

    it('answers unauthorized (401) to anonymous callers and writes nothing', async () => {
      const handle = `anon-${unique()}`;
      expect(failure(await gql(t, null, Q.create, { i: { name: 'Anon', handle } }))).toEqual({ code: 'UNAUTHENTICATED', reason: 'unauthorized', status: 401 });
      expect(await rows(sql`select 1 from communities where handle = ${handle}`)).toEqual([]);
    });
  });

  describe('updateCommunity', () => {
    let owner: TestUser;
    let tribe: { id: string; handle: string; name: string };
    beforeAll(async () => {
      owner = await signupUser(t);
      tribe = await createTribe(t, owner, { description: 'Before', category: 'art' });
    });

    it('changes only the sent fields', async () => {
      const updated = ok(await gql(t, owner, Q.update, { id: tribe.id, i: { description: 'After' } })).updateCommunity;
      expect(updated).toMatchObject({ id: tribe.id, handle: tribe.handle, name: tribe.name, description: 'After', category: 'art', isPublic: true });
      const [row] = await rows(sql`select description, category, name from communities where id = ${tribe.id}`);
      expect(row).toEqual({ description: 'After', category: 'art', name: tribe.name });
    });

    it('lets an admin update the tribe', async () => {
      const admin = await signupUser(t);
      await join(t, admin, tribe.handle);
      await setRole(t, owner, tribe.id, admin.id, 'admin');
      const updated = ok(await gql(t, admin, Q.update, { id: tribe.id, i: { name: 'Renamed by admin', category: 'music' } })).updateCommunity;
      expect(updated).toMatchObject({ name: 'Renamed by admin', category: 'music', isPublic: true });
    });

    it('answers empty (400) when no field is sent', async () => {
      expect(failure(await gql(t, owner, Q.update, { id: tribe.id, i: {} }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'empty', status: 400 });
    });

    it('answers handle_taken (409) when the new handle belongs to another tribe', async () => {
      const other = await createTribe(t, owner);
      expect(failure(await gql(t, owner, Q.update, { id: tribe.id, i: { handle: other.handle } }))).toEqual({ code: 'CONFLICT', reason: 'handle_taken', status: 409 });
    });

    it('answers forbidden (403) to a plain member and changes nothing', async () => {
      const member = await signupUser(t);
      await join(t, member, tribe.handle);
      expect(failure(await gql(t, member, Q.update, { id: tribe.id, i: { name: 'Hijacked' } }))).toEqual({ code: 'FORBIDDEN', reason: 'forbidden', status: 403 });
      expect((await rows(sql`select name from communities where id = ${tribe.id}`))[0].name).not.toBe('Hijacked');
    });

    it('answers not_found (404) for an unknown tribe', async () => {
      expect(failure(await gql(t, owner, Q.update, { id: '00000000-0000-4000-8000-000000000000', i: { name: 'x' } }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
    });
  });

  describe('deleteCommunity', () => {
    it('deletes the tribe and its memberships for the owner', async () => {
      const owner = await signupUser(t);
      const member = await signupUser(t);
      const tribe = await createTribe(t, owner);
      await join(t, member, tribe.handle);
      expect(ok(await gql(t, owner, Q.remove, { id: tribe.id }))).toEqual({ deleteCommunity: true });
      expect(failure(await gql(t, owner, Q.byHandle, { h: tribe.handle }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
      expect(await rows(sql`select 1 from members where community_id = ${tribe.id}`)).toEqual([]);
    });

    it('answers forbidden (403) to an admin and keeps the tribe', async () => {
      const owner = await signupUser(t);
      const admin = await signupUser(t);
      const tribe = await createTribe(t, owner);
      await join(t, admin, tribe.handle);
      await setRole(t, owner, tribe.id, admin.id, 'admin');
      expect(failure(await gql(t, admin, Q.remove, { id: tribe.id }))).toEqual({ code: 'FORBIDDEN', reason: 'forbidden', status: 403 });
      expect(await rows(sql`select 1 from communities where id = ${tribe.id}`)).toHaveLength(1);
    });

    it('answers not_found (404) for an unknown tribe', async () => {
      const user = await signupUser(t);
      expect(failure(await gql(t, user, Q.remove, { id: '00000000-0000-4000-8000-000000000000' }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
    });
  });

  describe('joinCommunity', () => {
    let owner: TestUser;
    let open: { id: string; handle: string };
    let closed: { id: string; handle: string };
    beforeAll(async () => {
      owner = await signupUser(t);
      open = await createTribe(t, owner);
      closed = await createTribe(t, owner, { isPublic: false });
    });

    it('joins a public tribe as member', async () => {
      const user = await signupUser(t);
      const joined = ok(await gql(t, user, Q.join, { h: open.handle })).joinCommunity;
      expect(joined).toEqual({
        id: expect.any(String),
        role: 'member',
        community: { id: open.id, handle: open.handle },
        user: { id: user.id, username: user.username },
        joinedAt: expect.any(String),
        xp: 0,
        level: 1,
      });
      expect(await membership(open.id, user.id)).toEqual([{ id: joined.id, role: 'member' }]);
      expect(ok(await gql(t, user, Q.byHandle, { h: open.handle })).community.viewerRole).toBe('member');
    });

    it('returns the same membership when joining twice and records one member.joined event', async () => {
      const user = await signupUser(t);
      const first = ok(await gql(t, user, Q.join, { h: open.handle })).joinCommunity;
      const second = ok(await gql(t, user, Q.join, { h: open.handle })).joinCommunity;
      expect(second.id).toBe(first.id);
      expect(await membership(open.id, user.id)).toHaveLength(1);
      expect(await joinedEvents(open.id, user.id)).toEqual([{ type: 'member.joined', data: { userId: user.id, handle: open.handle } }]);
    });

    it('answers forbidden (403) for a private tribe without an invite and writes nothing', async () => {
      const user = await signupUser(t);
      expect(failure(await gql(t, user, Q.join, { h: closed.handle }))).toEqual({ code: 'FORBIDDEN', reason: 'forbidden', status: 403 });
      expect(await membership(closed.id, user.id)).toEqual([]);
      expect(await joinedEvents(closed.id, user.id)).toEqual([]);
    });

    it('answers forbidden (403) for a private tribe with an unknown or another tribe’s invite', async () => {
      const user = await signupUser(t);
      const otherTribe = await createTribe(t, owner, { isPublic: false });
      const otherCode = await inviteFor(owner, otherTribe.id);
      expect(failure(await gql(t, user, Q.join, { h: closed.handle, c: otherCode }))).toEqual({ code: 'FORBIDDEN', reason: 'forbidden', status: 403 });
      expect(failure(await gql(t, user, Q.join, { h: closed.handle, c: 'made-up' }))).toEqual({ code: 'FORBIDDEN', reason: 'forbidden', status: 403 });
      expect(await membership(closed.id, user.id)).toEqual([]);
    });

    it('joins a private tribe with its invite code', async () => {
      const user = await signupUser(t);
      const code = await inviteFor(owner, closed.id);
      const joined = ok(await gql(t, user, Q.join, { h: closed.handle, c: code })).joinCommunity;
      expect(joined.role).toBe('member');
      expect(await membership(closed.id, user.id)).toEqual([{ id: joined.id, role: 'member' }]);
      expect(await joinedEvents(closed.id, user.id)).toEqual([{ type: 'member.joined', data: { userId: user.id, handle: closed.handle } }]);
      // A member joining again needs no code and gets the same membership.
      expect(ok(await gql(t, user, Q.join, { h: closed.handle })).joinCommunity.id).toBe(joined.id);
    });

    it('answers not_found (404) for an unknown handle', async () => {
      const user = await signupUser(t);
      expect(failure(await gql(t, user, Q.join, { h: `missing-${unique()}` }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
    });

    it('answers unauthorized (401) to anonymous callers', async () => {
      expect(failure(await gql(t, null, Q.join, { h: open.handle }))).toEqual({ code: 'UNAUTHENTICATED', reason: 'unauthorized', status: 401 });
    });
  });

  describe('leaveCommunity', () => {
    let owner: TestUser;
    let tribe: { id: string; handle: string };
    beforeAll(async () => {
      owner = await signupUser(t);
      tribe = await createTribe(t, owner);
    });

    it('removes the caller’s membership', async () => {
      const user = await signupUser(t);
      await join(t, user, tribe.handle);
      expect(ok(await gql(t, user, Q.leave, { h: tribe.handle }))).toEqual({ leaveCommunity: true });
      expect(await membership(tribe.id, user.id)).toEqual([]);
      expect(ok(await gql(t, user, Q.byHandle, { h: tribe.handle })).community.viewerRole).toBeNull();
    });

    it('answers owner_cannot_leave (409) to the owner, who stays owner', async () => {
      expect(failure(await gql(t, owner, Q.leave, { h: tribe.handle }))).toEqual({ code: 'CONFLICT', reason: 'owner_cannot_leave', status: 409 });
      expect(await membership(tribe.id, owner.id)).toEqual([{ id: expect.any(String), role: 'owner' }]);
    });

    it('answers not_found (404) to a non-member', async () => {
      const user = await signupUser(t);
      expect(failure(await gql(t, user, Q.leave, { h: tribe.handle }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
    });

    it('answers unauthorized (401) to anonymous callers', async () => {
      expect(failure(await gql(t, null, Q.leave, { h: tribe.handle }))).toEqual({ code: 'UNAUTHENTICATED', reason: 'unauthorized', status: 401 });
    });
  });

  describe('members', () => {
    const tag = unique();
    let owner: TestUser;
    let alice: TestUser;
    let bob: TestUser;
    let carol: TestUser;
    let tribe: { id: string; handle: string };
    beforeAll(async () => {
      owner = await signupUser(t, { displayName: `Owner ${tag}` });
      alice = await signupUser(t, { username: `alice_${tag}`, displayName: 'Alice Example' });
      bob = await signupUser(t, { username: `bob_${tag}`, displayName: `Robert ${tag}` });
      carol = await signupUser(t, { username: `carol_${tag}`, displayName: 'Carol Example' });
      tribe = await createTribe(t, owner);
      for (const u of [alice, bob, carol]) await join(t, u, tribe.handle);
      await setRole(t, owner, tribe.id, bob.id, 'moderator');
    });
    const ids = (out: Result) => ok(out).members.items.map((m: any) => m.user.id);

    it('lists members newest first with their roles', async () => {
      const page = ok(await gql(t, null, Q.members, { c: tribe.id })).members;
      expect(page.items.map((m: any) => [m.user.id, m.role])).toEqual([
        [carol.id, 'member'],
        [bob.id, 'moderator'],
        [alice.id, 'member'],
        [owner.id, 'owner'],
      ]);
      expect(page).toMatchObject({ page: 1, perPage: 20, hasMore: false });
    });

    it('filters by role', async () => {
      expect(ids(await gql(t, owner, Q.members, { c: tribe.id, r: 'member' }))).toEqual([carol.id, alice.id]);
      expect(ids(await gql(t, owner, Q.members, { c: tribe.id, r: 'moderator' }))).toEqual([bob.id]);
      expect(ids(await gql(t, owner, Q.members, { c: tribe.id, r: 'admin' }))).toEqual([]);
    });

    it('searches username and display name, case-insensitively', async () => {
      expect(ids(await gql(t, owner, Q.members, { c: tribe.id, s: `ALICE_${tag}` }))).toEqual([alice.id]);
      expect(ids(await gql(t, owner, Q.members, { c: tribe.id, s: `robert ${tag}` }))).toEqual([bob.id]);
      expect(ids(await gql(t, owner, Q.members, { c: tribe.id, s: tag, r: 'member' }))).toEqual([carol.id, alice.id]);
    });

    it('pages', async () => {
      const first = ok(await gql(t, owner, Q.members, { c: tribe.id, pp: 3 })).members;
      expect(first.items).toHaveLength(3);
      expect(first.hasMore).toBe(true);
      const second = ok(await gql(t, owner, Q.members, { c: tribe.id, p: 2, pp: 3 })).members;
      expect(second.items.map((m: any) => m.user.id)).toEqual([owner.id]);
      expect(second.hasMore).toBe(false);
    });

    it('answers invalid_input (400) for an unknown role', async () => {
      expect(failure(await gql(t, owner, Q.members, { c: tribe.id, r: 'king' }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input', status: 400 });
    });

    it('answers forbidden (403) to outsiders and unauthorized (401) to anonymous callers of a private tribe', async () => {
      const privateTribe = await createTribe(t, owner, { isPublic: false });
      const outsider = await signupUser(t);
      expect(failure(await gql(t, outsider, Q.members, { c: privateTribe.id }))).toEqual({ code: 'FORBIDDEN', reason: 'forbidden', status: 403 });
      expect(failure(await gql(t, null, Q.members, { c: privateTribe.id }))).toEqual({ code: 'UNAUTHENTICATED', reason: 'unauthorized', status: 401 });
      expect(ids(await gql(t, owner, Q.members, { c: privateTribe.id }))).toEqual([owner.id]);
    });

    it('answers not_found (404) for an unknown tribe', async () => {
      expect(failure(await gql(t, owner, Q.members, { c: '00000000-0000-4000-8000-000000000000' }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
    });
  });

  describe('member', () => {
    it('returns one membership by user id, not_found for a non-member', async () => {
      const owner = await signupUser(t);
      const outsider = await signupUser(t);
      const tribe = await createTribe(t, owner);
      expect(ok(await gql(t, null, Q.member, { c: tribe.id, u: owner.id })).member).toEqual({
        id: expect.any(String),
        role: 'owner',
        user: { id: owner.id },
        community: { id: tribe.id },
      });
      expect(failure(await gql(t, null, Q.member, { c: tribe.id, u: outsider.id }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
      expect(failure(await gql(t, null, Q.member, { c: tribe.id, u: 'nope' }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
    });
  });

  describe('updateMemberRole', () => {
    let owner: TestUser;
    let tribe: { id: string; handle: string };
    beforeAll(async () => {
      owner = await signupUser(t);
      tribe = await createTribe(t, owner);
    });

    it.each(['admin', 'moderator', 'member'])('lets the owner set the role %s', async (role) => {
      const user = await signupUser(t);
      await join(t, user, tribe.handle);
      const updated = ok(await gql(t, owner, Q.setRole, { c: tribe.id, u: user.id, r: role })).updateMemberRole;
      expect(updated).toMatchObject({ role, user: { id: user.id } });
      expect((await membership(tribe.id, user.id))[0].role).toBe(role);
    });

    it('lets an admin promote a member to moderator and back', async () => {
      const admin = await signupUser(t);
      const user = await signupUser(t);
      await join(t, admin, tribe.handle);
      await join(t, user, tribe.handle);
      await setRole(t, owner, tribe.id, admin.id, 'admin');
      expect(ok(await gql(t, admin, Q.setRole, { c: tribe.id, u: user.id, r: 'moderator' })).updateMemberRole.role).toBe('moderator');
      expect(ok(await gql(t, admin, Q.setRole, { c: tribe.id, u: user.id, r: 'member' })).updateMemberRole.role).toBe('member');
    });

    it.each(['owner', 'superuser', ''])('answers invalid_role (400) for the role "%s" and changes nothing', async (role) => {
      const user = await signupUser(t);
      await join(t, user, tribe.handle);
      expect(failure(await gql(t, owner, Q.setRole, { c: tribe.id, u: user.id, r: role }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_role', status: 400 });
      expect((await membership(tribe.id, user.id))[0].role).toBe('member');
    });

    it('answers not_found (404) for a user who is not a member', async () => {
      const user = await signupUser(t);
      expect(failure(await gql(t, owner, Q.setRole, { c: tribe.id, u: user.id, r: 'moderator' }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
    });

    it('answers forbidden (403) when the owner tries to change their own role', async () => {
      expect(failure(await gql(t, owner, Q.setRole, { c: tribe.id, u: owner.id, r: 'member' }))).toEqual({ code: 'FORBIDDEN', reason: 'forbidden', status: 403 });
      expect((await membership(tribe.id, owner.id))[0].role).toBe('owner');
    });
  });

  describe('removeMember', () => {
    it('removes a member at once; they can join the public tribe again', async () => {
      const owner = await signupUser(t);
      const user = await signupUser(t);
      const tribe = await createTribe(t, owner);
      await join(t, user, tribe.handle);
      expect(ok(await gql(t, owner, Q.removeMember, { c: tribe.id, u: user.id }))).toEqual({ removeMember: true });
      expect(await membership(tribe.id, user.id)).toEqual([]);
      expect(ok(await gql(t, owner, Q.byHandle, { h: tribe.handle })).community.memberCount).toBe(1);
      expect(ok(await gql(t, user, Q.join, { h: tribe.handle })).joinCommunity.role).toBe('member');
    });

    it('answers not_found (404) for a user who is not a member', async () => {
      const owner = await signupUser(t);
      const user = await signupUser(t);
      const tribe = await createTribe(t, owner);
      expect(failure(await gql(t, owner, Q.removeMember, { c: tribe.id, u: user.id }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
      expect(failure(await gql(t, owner, Q.removeMember, { c: tribe.id, u: 'not-a-uuid' }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found', status: 404 });
    });
  });
});
