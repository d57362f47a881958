import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql, type SQL } from 'drizzle-orm';
import { accessToken, createTribe, join, setRole, signupUser, unique, type TestUser } from './factory.js';
import { gql, startService, type TestService } from './support.js';

type Actor = TestUser & { token: string };
type Who = 'owner' | 'admin' | 'admin2' | 'moderator' | 'moderator2' | 'member' | 'member2' | 'outsider';

/** Token-authenticated resource API, members of a tribe (spec 2.6, 4.5, 5.3). */
describe('resource API members', () => {
  let t: TestService;

  beforeAll(async () => {
    t = await startService();
  });
  afterAll(async () => {
    await t.stop();
  });

  const rows = async (query: SQL) => ((await t.deps.database.db.execute(query)) as unknown as { rows: Record<string, any>[] }).rows;
  const roleOf = async (communityId: string, userId: string) =>
    (await rows(sql`select role from members where community_id = ${communityId} and user_id = ${userId}`))[0]?.role ?? null;
  const actor = async (overrides: Parameters<typeof signupUser>[1] = {}): Promise<Actor> => {
    const user = await signupUser(t, overrides);
    return { ...user, token: await accessToken(t, user) };
  };
  const as = (who: Actor) => ({ authorization: `Bearer ${who.token}` });
  const expectError = (res: { status: number; body: any }, status: number, code: string) => {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
    expect(res.body).toEqual({ error: expect.objectContaining({ code, message: expect.any(String) }) });
  };
  const UNKNOWN = '00000000-0000-4000-8000-000000000000';

  /** Joins a private tribe through an invite created by `inviter`. */
  async function joinPrivate(inviter: TestUser, tribe: { id: string; handle: string }, user: TestUser) {
    const invite = await gql(t, inviter, 'mutation($c: ID!){ createInvite(communityId: $c) }', { c: tribe.id });
    if (invite.errors) throw new Error(JSON.stringify(invite.errors));
    await join(t, user, tribe.handle, invite.data.createInvite);
  }

  /** The cast of a tribe: an owner, two admins, two moderators, two members and an outsider, with display names tagged by `u`. */
  async function crew() {
    const u = unique();
    const [owner, admin, admin2, moderator, moderator2, member, member2, outsider] = await Promise.all([
      actor({ displayName: `Owner ${u}` }),
      actor({ displayName: `Admin ${u}` }),
      actor({ displayName: `Admin Two ${u}` }),
      actor({ displayName: `Moderator ${u}` }),
      actor({ displayName: `Moderator Two ${u}` }),
      actor({ displayName: `Plain Member ${u}` }),
      actor({ displayName: `Other Member ${u}` }),
      actor(),
    ]);
    return { owner, admin, admin2, moderator, moderator2, member, member2, outsider, u };
  }
  // Signing up costs an Argon2 hash, so two casts are made once; every test still gets fresh tribes (roles live per tribe).
  let cast: Awaited<ReturnType<typeof crew>>;
  let otherCast: Awaited<ReturnType<typeof crew>>;
  beforeAll(async () => {
    [cast, otherCast] = await Promise.all([crew(), crew()]);
  });

  /** A new tribe staffed by `people` (the main cast by default); the outsider never joins. */
  async function staffedTribe(options: { isPublic?: boolean } = {}, people = cast) {
    const { owner, admin, admin2, moderator, moderator2, member, member2 } = people;
    const tribe = await createTribe(t, owner, { isPublic: options.isPublic ?? true });
    for (const m of [admin, admin2, moderator, moderator2, member, member2]) {
      if (tribe.isPublic) await join(t, m, tribe.handle);
      else await joinPrivate(owner, tribe, m);
    }
    for (const a of [admin, admin2]) await setRole(t, owner, tribe.id, a.id, 'admin');
    for (const m of [moderator, moderator2]) await setRole(t, owner, tribe.id, m.id, 'moderator');
    return { ...people, tribe };
  }

  describe('GET /v1/communities/:community_id/members', () => {
    it('lists every member newest first with the member record fields', async () => {
      const s = await staffedTribe();
      const res = await t.api.get(`/v1/communities/${s.tribe.id}/members`).set(as(s.member));
      expect(res.status).toBe(200);
      expect(res.body.pagination).toEqual({ page: 1, per_page: 20, has_more: false });
      expect(res.body.data.map((m: any) => m.user_id)).toEqual([s.member2, s.member, s.moderator2, s.moderator, s.admin2, s.admin, s.owner].map((x) => x.id));
      const row = (await rows(sql`select id from members where community_id = ${s.tribe.id} and user_id = ${s.member.id}`))[0];
      expect(res.body.data[1]).toEqual({
        id: row.id,
        user_id: s.member.id,
        username: s.member.username,
        display_name: `Plain Member ${s.u}`,
        role: 'member',
        joined_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        xp: 0,
        level: 1,
      });
    });

    it('filters by role', async () => {
      const s = await staffedTribe();
      const res = await t.api.get(`/v1/communities/${s.tribe.id}/members`).query({ role: 'moderator' }).set(as(s.member));
      expect(res.status).toBe(200);
      expect(res.body.data.map((m: any) => [m.user_id, m.role])).toEqual([
        [s.moderator2.id, 'moderator'],
        [s.moderator.id, 'moderator'],
      ]);
      const owners = await t.api.get(`/v1/communities/${s.tribe.id}/members`).query({ role: 'owner' }).set(as(s.member));
      expect(owners.body.data.map((m: any) => m.user_id)).toEqual([s.owner.id]);
    });

    it('searches by username and by display name, case-insensitively', async () => {
      const s = await staffedTribe();
      const byUsername = await t.api.get(`/v1/communities/${s.tribe.id}/members`).query({ search: s.member.username.toUpperCase() }).set(as(s.member));
      expect(byUsername.body.data.map((m: any) => m.user_id)).toEqual([s.member.id]);
      const byDisplayName = await t.api.get(`/v1/communities/${s.tribe.id}/members`).query({ search: `plain member ${s.u}` }).set(as(s.member));
      expect(byDisplayName.body.data.map((m: any) => m.user_id)).toEqual([s.member.id]);
      const combined = await t.api.get(`/v1/communities/${s.tribe.id}/members`).query({ search: `Moderator`, role: 'moderator' }).set(as(s.member));
      expect(combined.body.data.map((m: any) => m.user_id).sort()).toEqual([s.moderator.id, s.moderator2.id].sort());
    });

    it('does not find users of other tribes by search', async () => {
      const s = await staffedTribe();
      const res = await t.api.get(`/v1/communities/${s.tribe.id}/members`).query({ search: s.outsider.username }).set(as(s.member));
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([]);
    });

    it('pages with page and per_page', async () => {
      const s = await staffedTribe();
      const first = await t.api.get(`/v1/communities/${s.tribe.id}/members`).query({ per_page: 3 }).set(as(s.member));
      expect(first.body.data.map((m: any) => m.user_id)).toEqual([s.member2.id, s.member.id, s.moderator2.id]);
      expect(first.body.pagination).toEqual({ page: 1, per_page: 3, has_more: true });
      const last = await t.api.get(`/v1/communities/${s.tribe.id}/members`).query({ per_page: 3, page: 3 }).set(as(s.member));
      expect(last.body.data.map((m: any) => m.user_id)).toEqual([s.owner.id]);
      expect(last.body.pagination).toEqual({ page: 3, per_page: 3, has_more: false });
      const clamped = await t.api.get(`/v1/communities/${s.tribe.id}/members`).query({ per_page: 500 }).set(as(s.member));
      expect(clamped.body.pagination).toEqual({ page: 1, per_page: 50, has_more: false });
    });

    it('lets an outsider list a public tribe but answers 403 forbidden for a private one', async () => {
      const open = await staffedTribe();
      expect((await t.api.get(`/v1/communities/${open.tribe.id}/members`).set(as(open.outsider))).status).toBe(200);

      const closed = await staffedTribe({ isPublic: false });
      expectError(await t.api.get(`/v1/communities/${closed.tribe.id}/members`).set(as(closed.outsider)), 403, 'forbidden');
      const asMember = await t.api.get(`/v1/communities/${closed.tribe.id}/members`).set(as(closed.member));
      expect(asMember.status).toBe(200);
      expect(asMember.body.data).toHaveLength(7);
    });

    it.each([
      ['an unknown role', 'role=boss', 'invalid_query'],
      ['a long unknown role', `role=${'r'.repeat(30)}`, 'invalid_query'],
      ['an upper-case role', 'role=OWNER', 'invalid_query'],
      ['per_page=0', 'per_page=0', 'invalid_query'],
      ['page=abc', 'page=abc', 'invalid_query'],
    ])('answers 400 for %s', async (_name, query, code) => {
      const s = await staffedTribe();
      expectError(await t.api.get(`/v1/communities/${s.tribe.id}/members?${query}`).set(as(s.member)), 400, code);
    });

    it.each([
      ['an unknown tribe id', UNKNOWN],
      ['a non-UUID tribe id', 'nope'],
    ])('answers 404 not_found for %s', async (_name, id) => {
      const user = await actor();
      expectError(await t.api.get(`/v1/communities/${id}/members`).set(as(user)), 404, 'not_found');
    });

    it('answers 401 unauthorized without an access token', async () => {
      const owner = await actor();
      const tribe = await createTribe(t, owner);
      expectError(await t.api.get(`/v1/communities/${tribe.id}/members`), 401, 'unauthorized');
    });
  });

  describe('GET /v1/communities/:community_id/members/:user_id', () => {
    it('returns the member by user id', async () => {
      const s = await staffedTribe();
      const res = await t.api.get(`/v1/communities/${s.tribe.id}/members/${s.moderator.id}`).set(as(s.member));
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ user_id: s.moderator.id, username: s.moderator.username, role: 'moderator', xp: 0, level: 1 });
    });

    it.each([
      ['a user who is not a member', 'outsider'],
      ['an unknown user id', UNKNOWN],
      ['a non-UUID user id', 'nope'],
    ])('answers 404 not_found for %s', async (_name, who) => {
      const s = await staffedTribe();
      const id = who === 'outsider' ? s.outsider.id : who;
      expectError(await t.api.get(`/v1/communities/${s.tribe.id}/members/${id}`).set(as(s.member)), 404, 'not_found');
    });

    it('answers 403 forbidden to an outsider of a private tribe', async () => {
      const s = await staffedTribe({ isPublic: false });
      expectError(await t.api.get(`/v1/communities/${s.tribe.id}/members/${s.member.id}`).set(as(s.outsider)), 403, 'forbidden');
    });
  });

  describe('PATCH /v1/communities/:community_id/members/:user_id', () => {
    const patch = (s: { tribe: { id: string } }, actorUser: Actor, target: TestUser | string, body: unknown) =>
      t.api
        .patch(`/v1/communities/${s.tribe.id}/members/${typeof target === 'string' ? target : target.id}`)
        .set(as(actorUser))
        .send(body as object);

    it('lets the owner grant and remove admin', async () => {
      const s = await staffedTribe();
      const res = await patch(s, s.owner, s.member, { role: 'admin' });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ user_id: s.member.id, role: 'admin' });
      expect(await roleOf(s.tribe.id, s.member.id)).toBe('admin');

      const back = await patch(s, s.owner, s.admin, { role: 'member' });
      expect(back.status).toBe(200);
      expect(await roleOf(s.tribe.id, s.admin.id)).toBe('member');
    });

    it('lets an admin promote a member to moderator and demote a moderator', async () => {
      const s = await staffedTribe();
      const up = await patch(s, s.admin, s.member, { role: 'moderator' });
      expect(up.status).toBe(200);
      expect(up.body.data.role).toBe('moderator');
      expect(await roleOf(s.tribe.id, s.member.id)).toBe('moderator');
      const down = await patch(s, s.admin, s.moderator, { role: 'member' });
      expect(down.status).toBe(200);
      expect(await roleOf(s.tribe.id, s.moderator.id)).toBe('member');
    });

    it.each<[string, Who, Who, string]>([
      ['an admin demotes another admin', 'admin', 'admin2', 'moderator'],
      ['an admin grants admin', 'admin', 'member', 'admin'],
      ['a moderator changes a member', 'moderator', 'member', 'moderator'],
      ['a member promotes themself', 'member', 'member', 'moderator'],
      ['a member changes another member', 'member', 'member2', 'moderator'],
      ['an outsider changes a member', 'outsider', 'member', 'moderator'],
      ['an admin changes the owner', 'admin', 'owner', 'member'],
      ['the owner changes their own role', 'owner', 'owner', 'admin'],
    ])('answers 403 forbidden when %s, and the role is unchanged', async (_name, who, target, role) => {
      const s = await staffedTribe();
      const before = await roleOf(s.tribe.id, s[target].id);
      expectError(await patch(s, s[who], s[target], { role }), 403, 'forbidden');
      expect(await roleOf(s.tribe.id, s[target].id)).toBe(before);
    });

    it.each([
      ['owner', { role: 'owner' }],
      ['no role', {}],
      ['an unknown role', { role: 'boss' }],
      ['a numeric role', { role: 3 }],
      ['a null role', { role: null }],
      ['an upper-case role', { role: 'ADMIN' }],
    ])('answers 400 invalid_role for %s and changes nothing', async (_name, body) => {
      const s = await staffedTribe();
      expectError(await patch(s, s.owner, s.member, body), 400, 'invalid_role');
      expect(await roleOf(s.tribe.id, s.member.id)).toBe('member');
    });

    it.each([
      ['a user who is not a member', 'outsider'],
      ['an unknown user id', UNKNOWN],
      ['a non-UUID user id', 'nope'],
    ])('answers 404 not_found for %s', async (_name, who) => {
      const s = await staffedTribe();
      const target = who === 'outsider' ? s.outsider.id : who;
      expectError(await patch(s, s.owner, target, { role: 'moderator' }), 404, 'not_found');
      expect(await roleOf(s.tribe.id, s.outsider.id)).toBeNull();
    });
  });

  describe('DELETE /v1/communities/:community_id/members/:user_id', () => {
    const remove = (s: { tribe: { id: string } }, actorUser: Actor, target: TestUser | string) =>
      t.api.delete(`/v1/communities/${s.tribe.id}/members/${typeof target === 'string' ? target : target.id}`).set(as(actorUser));

    it('lets a moderator remove a member at once and records member.removed', async () => {
      const s = await staffedTribe();
      const res = await remove(s, s.moderator, s.member);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(await roleOf(s.tribe.id, s.member.id)).toBeNull();
      const events = await rows(sql`select data from outbox_events where community_id = ${s.tribe.id} and type = 'member.removed'`);
      expect(events.map((e) => e.data)).toEqual([{ userId: s.member.id, handle: s.tribe.handle }]);
      expectError(await t.api.get(`/v1/communities/${s.tribe.id}/members/${s.member.id}`).set(as(s.owner)), 404, 'not_found');
    });

    it('lets the owner remove an admin and an admin remove a moderator', async () => {
      const s = await staffedTribe();
      expect((await remove(s, s.owner, s.admin)).status).toBe(204);
      expect((await remove(s, s.admin2, s.moderator)).status).toBe(204);
      expect(await roleOf(s.tribe.id, s.admin.id)).toBeNull();
      expect(await roleOf(s.tribe.id, s.moderator.id)).toBeNull();
    });

    it.each<[string, Who, Who]>([
      ['a moderator removes an admin', 'moderator', 'admin'],
      ['a moderator removes another moderator', 'moderator', 'moderator2'],
      ['an admin removes another admin', 'admin', 'admin2'],
      ['an admin removes the owner', 'admin', 'owner'],
      ['the owner removes themself', 'owner', 'owner'],
      ['a member removes another member', 'member', 'member2'],
      ['an outsider removes a member', 'outsider', 'member'],
    ])('answers 403 forbidden when %s, and the membership stays', async (_name, who, target) => {
      const s = await staffedTribe();
      const before = await roleOf(s.tribe.id, s[target].id);
      expectError(await remove(s, s[who], s[target]), 403, 'forbidden');
      expect(await roleOf(s.tribe.id, s[target].id)).toBe(before);
      expect(await rows(sql`select id from outbox_events where community_id = ${s.tribe.id} and type = 'member.removed'`)).toHaveLength(0);
    });

    it('keeps the removed member posts', async () => {
      const s = await staffedTribe();
      const post = await t.api.post(`/v1/communities/${s.tribe.id}/posts`).set(as(s.member)).send({ content: '<p>mine</p>' });
      expect(post.status).toBe(201);
      expect((await remove(s, s.moderator, s.member)).status).toBe(204);
      expect(await rows(sql`select author_id, body from posts where id = ${post.body.data.id}`)).toEqual([{ author_id: s.member.id, body: '<p>mine</p>' }]);
      const seen = await t.api.get(`/v1/communities/${s.tribe.id}/posts/${post.body.data.id}`).set(as(s.owner));
      expect(seen.status).toBe(200);
      expect(seen.body.data).toMatchObject({ author_id: s.member.id, content: '<p>mine</p>' });
    });

    it('ends the removed member access to a private tribe posts at once', async () => {
      const s = await staffedTribe({ isPublic: false });
      expect((await t.api.get(`/v1/communities/${s.tribe.id}/posts`).set(as(s.member))).status).toBe(200);
      expect((await remove(s, s.moderator, s.member)).status).toBe(204);
      expectError(await t.api.get(`/v1/communities/${s.tribe.id}/posts`).set(as(s.member)), 403, 'forbidden');
      expectError(await t.api.get(`/v1/communities/${s.tribe.id}/members`).set(as(s.member)), 403, 'forbidden');
      expectError(await t.api.post(`/v1/communities/${s.tribe.id}/posts`).set(as(s.member)).send({ content: 'still here?' }), 403, 'forbidden');
    });

    it.each([
      ['a user who is not a member', 'outsider'],
      ['an unknown user id', UNKNOWN],
      ['a non-UUID user id', 'nope'],
    ])('answers 404 not_found for %s', async (_name, who) => {
      const s = await staffedTribe();
      const target = who === 'outsider' ? s.outsider.id : who;
      expectError(await remove(s, s.owner, target), 404, 'not_found');
    });
  });

  describe('tribe isolation', () => {
    it('answers 404 for a member of tribe B under tribe A and leaves tribe B unchanged', async () => {
      const a = await staffedTribe();
      const b = await staffedTribe({}, otherCast);
      const bRows = async () => rows(sql`select user_id, role from members where community_id = ${b.tribe.id} order by user_id`);
      const before = await bRows();

      expectError(await t.api.get(`/v1/communities/${a.tribe.id}/members/${b.member.id}`).set(as(a.owner)), 404, 'not_found');
      expectError(await t.api.patch(`/v1/communities/${a.tribe.id}/members/${b.member.id}`).set(as(a.owner)).send({ role: 'admin' }), 404, 'not_found');
      expectError(await t.api.delete(`/v1/communities/${a.tribe.id}/members/${b.member.id}`).set(as(a.owner)), 404, 'not_found');

      expect(await bRows()).toEqual(before);
      expect(await roleOf(a.tribe.id, b.member.id)).toBeNull();
      expect(await rows(sql`select id from outbox_events where community_id = ${b.tribe.id} and type = 'member.removed'`)).toHaveLength(0);
    });

    it('does not let the owner of tribe A act on tribe B through tribe B path', async () => {
      const a = await staffedTribe();
      const b = await staffedTribe({}, otherCast);
      expectError(await t.api.patch(`/v1/communities/${b.tribe.id}/members/${b.member.id}`).set(as(a.owner)).send({ role: 'moderator' }), 403, 'forbidden');
      expectError(await t.api.delete(`/v1/communities/${b.tribe.id}/members/${b.member.id}`).set(as(a.owner)), 403, 'forbidden');
      expect(await roleOf(b.tribe.id, b.member.id)).toBe('member');
    });
  });
});
