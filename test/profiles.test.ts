// Profiles and my tribes (issue 11), as the web app uses them over GraphQL with its session cookie: the profile
// fields, updateProfile, changePassword (other sessions and refresh tokens end), user(username) and
// User.memberships (most recently active first, private tribes hidden from outsiders, Relay cursors).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { createPost, createTribe, join, signupUser, type TestUser } from './factory.js';
import { gql, sqlRows, startService, type TestService, ok, failure, tamperedCursor } from './support.js';


const PROFILE = 'id username displayName bio avatarUrl location links email createdAt';
const MEMBERSHIPS = 'edges { node { community { id } role xp level joinedAt } cursor } pageInfo { hasNextPage endCursor }';
const Q = {
  me: `{ me { ${PROFILE} } }`,
  user: `query($u: String!){ user(username: $u){ ${PROFILE} } }`,
  update: `mutation($i: UpdateProfileInput!){ updateProfile(input: $i){ ${PROFILE} } }`,
  changePassword: 'mutation($c: String!, $n: String!){ changePassword(currentPassword: $c, newPassword: $n) }',
  // The web app's query, exactly.
  myTribes:
    'query($first: Int, $after: String){ me { memberships(first: $first, after: $after) { edges { node { community { id } role xp level joinedAt } } pageInfo { hasNextPage endCursor } } } }',
  memberships: `query($u: String!, $first: Int, $after: String){ user(username: $u){ memberships(first: $first, after: $after) { ${MEMBERSHIPS} } } }`,
};

describe('Profiles and my tribes', () => {
  let t: TestService;
  /** The stored profile and password of a user: what a refused change must leave alone. */
  const userRow = async (id: string) =>
    (await sqlRows(t, sql`select display_name, bio, avatar_url, location, links, password_hash from users where id = ${id}`))[0];
  const update = (who: { cookie: string } | null, input: Record<string, unknown>) => gql(t, who, Q.update, { i: input });

  beforeAll(async () => {
    t = await startService();
  });
  afterAll(async () => {
    await t.stop();
  });

  describe('User profile fields', () => {
    it('are empty for a new user: bio "", no avatar, no location, no links, and createdAt', async () => {
      const user = await signupUser(t, { displayName: 'New Person' });
      expect(ok(await gql(t, user, Q.me)).me).toEqual({
        id: user.id,
        username: user.username,
        displayName: 'New Person',
        bio: '',
        avatarUrl: null,
        location: null,
        links: [],
        email: user.email,
        createdAt: expect.any(String),
      });
    });
  });

  describe('updateProfile', () => {
    it('writes every field sent and returns the profile', async () => {
      const user = await signupUser(t);
      const input = {
        displayName: '  Ada L.  ',
        bio: 'Builds engines. 🚂',
        avatarUrl: 'https://cdn.example.com/ada.png',
        location: 'London',
        links: ['https://ada.example.com', 'https://example.org/a?b=c#d'],
      };
      const profile = ok(await update(user, input)).updateProfile;
      expect(profile).toMatchObject({ ...input, displayName: 'Ada L.', id: user.id, email: user.email });
      expect(await userRow(user.id)).toMatchObject({
        display_name: 'Ada L.',
        bio: 'Builds engines. 🚂',
        avatar_url: 'https://cdn.example.com/ada.png',
        location: 'London',
        links: ['https://ada.example.com', 'https://example.org/a?b=c#d'],
      });
    });

    it('changes only the fields sent', async () => {
      const user = await signupUser(t);
      ok(await update(user, { displayName: 'Grace', bio: 'old bio', avatarUrl: 'https://x.example.com/g.png', location: 'Arlington', links: ['https://g.example.com'] }));
      const before = await userRow(user.id);
      ok(await update(user, { bio: 'new bio' }));
      expect(await userRow(user.id)).toEqual({ ...before, bio: 'new bio' });
      ok(await update(user, { links: [] }));
      expect(await userRow(user.id)).toEqual({ ...before, bio: 'new bio', links: [] });
    });

    it('clears avatarUrl and location on an explicit null, leaving the rest', async () => {
      const user = await signupUser(t);
      ok(await update(user, { bio: 'keep me', avatarUrl: 'https://x.example.com/a.png', location: 'Paris' }));
      const profile = ok(await update(user, { avatarUrl: null, location: null })).updateProfile;
      expect(profile).toMatchObject({ bio: 'keep me', avatarUrl: null, location: null });
      expect(await userRow(user.id)).toMatchObject({ bio: 'keep me', avatar_url: null, location: null });
    });

    it('accepts an empty bio and a bio of 500 characters counted in code points (500 emoji)', async () => {
      const user = await signupUser(t);
      const emoji = '😀'.repeat(500);
      expect(ok(await update(user, { bio: emoji })).updateProfile.bio).toBe(emoji);
      expect(ok(await update(user, { bio: '' })).updateProfile.bio).toBe('');
    });

    it('accepts 5 links of 2048 characters and a location of 100 characters', async () => {
      const user = await signupUser(t);
      const long = `https://example.com/${'a'.repeat(2048 - 'https://example.com/'.length)}`;
      const links = [long, 'https://a.example', 'https://b.example', 'https://c.example', 'https://d.example'];
      const profile = ok(await update(user, { links, location: 'é'.repeat(100) })).updateProfile;
      expect(profile.links).toEqual(links);
      expect(profile.location).toBe('é'.repeat(100));
    });

    it.each([
      ['displayName', 'a null displayName', { displayName: null }],
      ['displayName', 'an empty displayName', { displayName: '   ' }],
      ['displayName', 'a displayName of 81 characters', { displayName: 'x'.repeat(81) }],
      ['bio', 'a bio of 501 characters', { bio: '😀'.repeat(501) }],
      ['bio', 'a null bio', { bio: null }],
      ['location', 'a location of 101 characters', { location: 'x'.repeat(101) }],
      ['avatarUrl', 'an http: avatar', { avatarUrl: 'http://cdn.example.com/a.png' }],
      ['avatarUrl', 'a javascript: avatar', { avatarUrl: 'javascript:alert(1)' }],
      ['avatarUrl', 'a data: avatar', { avatarUrl: 'data:image/png;base64,AAAA' }],
      ['avatarUrl', 'an avatar URL with credentials', { avatarUrl: 'https://user:secret@cdn.example.com/a.png' }],
      ['avatarUrl', 'an avatar URL with a user name only', { avatarUrl: 'https://user@cdn.example.com/a.png' }],
      ['avatarUrl', 'a relative avatar URL', { avatarUrl: '/a.png' }],
      ['avatarUrl', 'an https: URL without a host', { avatarUrl: 'https:///a.png' }],
      ['avatarUrl', 'a URL with white space', { avatarUrl: 'https://cdn.example.com/a b.png' }],
      ['links', 'six links', { links: ['1', '2', '3', '4', '5', '6'].map((n) => `https://l${n}.example`) }],
      ['links.1', 'an http: link', { links: ['https://ok.example', 'http://plain.example'] }],
      ['links.0', 'a javascript: link', { links: ['javascript:alert(document.cookie)'] }],
      ['links.0', 'a link of 2049 characters', { links: [`https://example.com/${'a'.repeat(2049 - 'https://example.com/'.length)}`] }],
      ['links', 'null links', { links: null }],
    ])('refuses %s (%s) as BAD_USER_INPUT invalid_input naming the field, and writes nothing', async (field, _what, input) => {
      const user = await signupUser(t);
      ok(await update(user, { bio: 'before', location: 'Somewhere', avatarUrl: 'https://x.example.com/a.png', links: ['https://x.example.com'] }));
      const before = await userRow(user.id);
      const out = await update(user, { bio: 'would change', ...input });
      expect(failure(out)).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input' });
      expect(out.errors![0].extensions!.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      expect(await userRow(user.id)).toEqual(before);
    });

    it('refuses an input with no field as BAD_USER_INPUT empty and writes nothing', async () => {
      const user = await signupUser(t);
      const before = await userRow(user.id);
      expect(failure(await update(user, {}))).toEqual({ code: 'BAD_USER_INPUT', reason: 'empty' });
      expect(await userRow(user.id)).toEqual(before);
    });

    it('refuses anonymous callers as UNAUTHENTICATED', async () => {
      expect(failure(await update(null, { bio: 'x' }))).toEqual({ code: 'UNAUTHENTICATED', reason: 'unauthorized' });
    });
  });

  describe('changePassword', () => {
    const NEW_PASSWORD = 'a brand new password';
    const login = (user: TestUser, password: string) => t.api.post('/auth/login').send({ email: user.email, password });

    it('ends every other session and revokes every refresh token; the current session keeps working', async () => {
      const user = await signupUser(t); // session A: the one that changes the password
      const other = { cookie: String((await login(user, user.password)).headers['set-cookie'][0]).split(';')[0] }; // session B
      const tokens = (await t.api.post('/v1/auth/login').send({ email: user.email, password: user.password })).body.data;
      const spare = (await t.api.post('/v1/auth/login').send({ email: user.email, password: user.password })).body.data;
      expect(ok(await gql(t, other, '{ me { id } }')).me).toEqual({ id: user.id });

      expect(ok(await gql(t, user, Q.changePassword, { c: user.password, n: NEW_PASSWORD }))).toEqual({ changePassword: true });

      // The other session is over: me is null (no session), a signed-in operation is UNAUTHENTICATED, REST says 401.
      expect(await gql(t, other, '{ me { id } }')).toEqual({ data: { me: null } });
      expect(failure(await update(other, { bio: 'x' }))).toEqual({ code: 'UNAUTHENTICATED', reason: 'unauthorized' });
      expect(failure(await gql(t, other, Q.changePassword, { c: NEW_PASSWORD, n: 'yet another password' }))).toEqual({ code: 'UNAUTHENTICATED', reason: 'unauthorized' });
      expect((await t.api.get('/auth/me').set('cookie', other.cookie)).status).toBe(401);
      // Every refresh token of the user is refused at the resource API.
      for (const old of [tokens.refresh_token, spare.refresh_token]) {
        const refreshed = await t.api.post('/v1/auth/refresh').send({ refresh_token: old });
        expect(refreshed.status).toBe(401);
      }
      // The current session still works.
      expect(ok(await gql(t, user, '{ me { id } }')).me).toEqual({ id: user.id });
      expect(ok(await update(user, { bio: 'still here' })).updateProfile.bio).toBe('still here');
      // The new password signs in (both APIs), the old one does not.
      expect((await login(user, NEW_PASSWORD)).status).toBe(200);
      expect((await login(user, user.password)).status).toBe(401);
      expect((await t.api.post('/v1/auth/login').send({ email: user.email, password: NEW_PASSWORD })).status).toBe(200);
      expect((await t.api.post('/v1/auth/login').send({ email: user.email, password: user.password })).status).toBe(401);
      const sessions = await sqlRows(t, sql`select revoked_at is not null as revoked from sessions where user_id = ${user.id} order by created_at`);
      expect(sessions.map((s) => s.revoked)).toEqual([false, true, false]); // A kept, B ended, the new login's alive
    });

    it('refuses a wrong current password as BAD_USER_INPUT wrong_password and changes nothing', async () => {
      const user = await signupUser(t);
      const other = { cookie: String((await login(user, user.password)).headers['set-cookie'][0]).split(';')[0] };
      const tokens = (await t.api.post('/v1/auth/login').send({ email: user.email, password: user.password })).body.data;
      const before = await userRow(user.id);
      const out = await gql(t, user, Q.changePassword, { c: 'not the password', n: NEW_PASSWORD });
      expect(failure(out)).toEqual({ code: 'BAD_USER_INPUT', reason: 'wrong_password' });
      // The same answer for an empty or over-long guess: nothing tells guesses apart.
      for (const guess of ['', 'x'.repeat(256)]) {
        const again = await gql(t, user, Q.changePassword, { c: guess, n: NEW_PASSWORD });
        expect(again.errors).toEqual(out.errors);
      }
      expect(await userRow(user.id)).toEqual(before);
      expect(ok(await gql(t, other, '{ me { id } }')).me).toEqual({ id: user.id });
      expect((await t.api.post('/v1/auth/refresh').send({ refresh_token: tokens.refresh_token })).status).toBe(200);
      expect((await login(user, user.password)).status).toBe(200);
    });

    it.each([
      ['shorter than 10 characters', 'short'],
      ['longer than 256 characters', 'x'.repeat(257)],
    ])('refuses a new password %s as BAD_USER_INPUT weak_password and changes nothing', async (_what, weak) => {
      const user = await signupUser(t);
      const before = await userRow(user.id);
      expect(failure(await gql(t, user, Q.changePassword, { c: user.password, n: weak }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'weak_password' });
      expect(await userRow(user.id)).toEqual(before);
      expect((await login(user, user.password)).status).toBe(200);
    });

    it('refuses anonymous callers as UNAUTHENTICATED', async () => {
      expect(failure(await gql(t, null, Q.changePassword, { c: 'whatever123', n: NEW_PASSWORD }))).toEqual({ code: 'UNAUTHENTICATED', reason: 'unauthorized' });
    });
  });

  describe('user(username)', () => {
    let owner: TestUser;
    let viewer: TestUser;
    beforeAll(async () => {
      [owner, viewer] = await Promise.all([signupUser(t, { displayName: 'Public Person' }), signupUser(t)]);
      ok(await update(owner, { bio: 'hello', location: 'Oslo', links: ['https://owner.example'] }));
    });

    it('is the public profile, without email, for another user and for anonymous callers', async () => {
      const expected = {
        id: owner.id,
        username: owner.username,
        displayName: 'Public Person',
        bio: 'hello',
        avatarUrl: null,
        location: 'Oslo',
        links: ['https://owner.example'],
        email: null,
        createdAt: expect.any(String),
      };
      expect(ok(await gql(t, viewer, Q.user, { u: owner.username })).user).toEqual(expected);
      expect(ok(await gql(t, null, Q.user, { u: owner.username })).user).toEqual(expected);
    });

    it('shows the email to the user themself only', async () => {
      expect(ok(await gql(t, owner, Q.user, { u: owner.username })).user.email).toBe(owner.email);
    });

    it.each([
      ['an unknown username', 'nobody_here_at_all'],
      ['an upper-case username', 'NOBODY'],
      ['a username too long to exist', 'x'.repeat(5000)],
      ['an empty username', ''],
    ])('answers NOT_FOUND not_found for %s', async (_what, username) => {
      expect(failure(await gql(t, viewer, Q.user, { u: username }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found' });
    });

    it('refuses a NUL in the username as BAD_USER_INPUT invalid_text, not a 500', async () => {
      const res = await t.api.post('/graphql').set('content-type', 'application/json').send({ query: Q.user, variables: { u: `${owner.username}\u0000` } });
      expect(res.status).toBeLessThan(500);
      expect(failure(res.body)).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_text' });
    });
  });

  describe('User.memberships', () => {
    const myTribes = async (who: TestUser, first?: number, after?: string | null) => ok(await gql(t, who, Q.myTribes, { first, after })).me.memberships;
    const tribeIds = (conn: { edges: Array<{ node: { community: { id: string } } }> }) => conn.edges.map((e) => e.node.community.id);
    const theirTribes = async (viewer: TestUser | null, of: TestUser, first?: number) =>
      tribeIds(ok(await gql(t, viewer, Q.memberships, { u: of.username, first })).user.memberships);
    /** A private tribe of `owner` that `members` joined with an invite. */
    const privateTribe = async (owner: TestUser, ...members: TestUser[]) => {
      const tribe = await createTribe(t, owner, { isPublic: false });
      const code = ok(await gql(t, owner, 'mutation($c: ID!){ createInvite(communityId: $c) }', { c: tribe.id })).createInvite;
      for (const m of members) await join(t, m, tribe.handle, code);
      return tribe;
    };

    it("answers the web app's me query with every tribe of mine, most recently joined first", async () => {
      const [me, owner] = await Promise.all([signupUser(t), signupUser(t)]);
      const a = await createTribe(t, owner);
      const b = await privateTribe(owner, me);
      await join(t, me, a.handle);
      const c = await createTribe(t, me);
      const out = await gql(t, me, Q.myTribes, { first: 10 });
      expect(out).toEqual({
        data: {
          me: {
            memberships: {
              edges: [
                { node: { community: { id: c.id }, role: 'owner', xp: 0, level: 1, joinedAt: expect.any(String) } },
                { node: { community: { id: a.id }, role: 'member', xp: 0, level: 1, joinedAt: expect.any(String) } },
                { node: { community: { id: b.id }, role: 'member', xp: 0, level: 1, joinedAt: expect.any(String) } },
              ],
              pageInfo: { hasNextPage: false, endCursor: expect.any(String) },
            },
          },
        },
      });
      const rows = await sqlRows(t, sql`select joined_at = last_active_at as same from members where user_id = ${me.id}`);
      expect(rows.map((r) => r.same)).toEqual([true, true, true]); // joining is activity at the join time
    });

    it('is empty, with no next page, for a user of no tribe', async () => {
      const loner = await signupUser(t);
      expect(await myTribes(loner)).toEqual({ edges: [], pageInfo: { hasNextPage: false, endCursor: null } });
    });

    it('moves a tribe to the front when the user posts in it', async () => {
      const [me, owner] = await Promise.all([signupUser(t), signupUser(t)]);
      const [a, b, c] = [await createTribe(t, owner), await createTribe(t, owner), await createTribe(t, owner)];
      for (const tribe of [a, b, c]) await join(t, me, tribe.handle);
      expect(tribeIds(await myTribes(me))).toEqual([c.id, b.id, a.id]);
      await createPost(t, me, a.id);
      expect(tribeIds(await myTribes(me))).toEqual([a.id, c.id, b.id]);
      await createPost(t, me, b.id);
      expect(tribeIds(await myTribes(me))).toEqual([b.id, a.id, c.id]);
    });

    describe('privacy', () => {
      let user: TestUser;
      let coMember: TestUser;
      let outsider: TestUser;
      const ids: Record<string, string> = {};
      beforeAll(async () => {
        const owner = await signupUser(t);
        [user, coMember, outsider] = await Promise.all([signupUser(t), signupUser(t), signupUser(t)]);
        const open = await createTribe(t, owner);
        await join(t, user, open.handle);
        ids.public = open.id;
        ids.shared = (await privateTribe(owner, user, coMember)).id; // private, coMember is in it too
        ids.secret = (await privateTribe(owner, user)).id; // private, only user
      });

      it('shows the user all their tribes', async () => {
        expect(tribeIds(await myTribes(user))).toEqual([ids.secret, ids.shared, ids.public]);
        expect(await theirTribes(user, user)).toEqual([ids.secret, ids.shared, ids.public]);
      });

      it('shows an outsider and an anonymous caller public tribes only', async () => {
        expect(await theirTribes(outsider, user)).toEqual([ids.public]);
        expect(await theirTribes(null, user)).toEqual([ids.public]);
      });

      it('shows a co-member the private tribe they share, not the other one', async () => {
        expect(await theirTribes(coMember, user)).toEqual([ids.shared, ids.public]);
      });

      it('pages over the visible tribes only', async () => {
        const first = ok(await gql(t, outsider, Q.memberships, { u: user.username, first: 1 })).user.memberships;
        expect(tribeIds(first)).toEqual([ids.public]);
        expect(first.pageInfo.hasNextPage).toBe(false);
      });
    });

    describe('cursors', () => {
      let me: TestUser;
      let owner: TestUser;
      let tribes: string[];
      beforeAll(async () => {
        [me, owner] = await Promise.all([signupUser(t), signupUser(t)]);
        tribes = [];
        for (let i = 0; i < 4; i += 1) {
          const tribe = await createTribe(t, owner);
          await join(t, me, tribe.handle);
          tribes.unshift(tribe.id); // most recent first
        }
      });

      it('visits each tribe once with first: 1, with no repeat or skip when a tribe is joined between pages', async () => {
        const seen: string[] = [];
        let after: string | null = null;
        let pages = 0;
        for (;;) {
          const page = await myTribes(me, 1, after);
          seen.push(...tribeIds(page));
          pages += 1;
          if (pages === 2) await join(t, me, (await createTribe(t, owner)).handle); // a new, most recent tribe
          if (!page.pageInfo.hasNextPage) break;
          after = page.pageInfo.endCursor;
          expect(pages).toBeLessThan(10);
        }
        expect(seen).toEqual(tribes);
        expect(pages).toBe(4);
      });

      it('keeps tribes apart whose activity differs by microseconds or not at all (ties by membership id)', async () => {
        const user = await signupUser(t);
        const joined: Array<{ communityId: string; memberId: string }> = [];
        for (let i = 0; i < 4; i += 1) {
          const tribe = await createTribe(t, owner);
          joined.push({ communityId: tribe.id, memberId: (await join(t, user, tribe.handle)).id });
        }
        const times = ['2030-01-01T00:00:00.000300Z', '2030-01-01T00:00:00.000200Z', '2030-01-01T00:00:00.000100Z', '2030-01-01T00:00:00.000100Z'];
        for (const [i, m] of joined.entries()) await sqlRows(t, sql`update members set last_active_at = ${times[i]}::timestamptz where id = ${m.memberId}`);
        const tied = joined.slice(2).sort((a, b) => (a.memberId < b.memberId ? 1 : -1));
        const expected = [joined[0], joined[1], ...tied].map((m) => m.communityId);
        const seen: string[] = [];
        let after: string | null = null;
        for (let page = 0; page < 10; page += 1) {
          const conn = await myTribes(user, 1, after);
          seen.push(...tribeIds(conn));
          if (!conn.pageInfo.hasNextPage) break;
          after = conn.pageInfo.endCursor;
        }
        expect(seen).toEqual(expected);
      });

      it('gives every edge a cursor that continues after it', async () => {
        const all = ok(await gql(t, me, `{ me { memberships(first: 3) { ${MEMBERSHIPS} } } }`)).me.memberships;
        const rest = await myTribes(me, 50, all.edges[0].cursor);
        expect(tribeIds(rest).slice(0, 2)).toEqual(tribeIds(all).slice(1, 3));
      });

      it('refuses a tampered cursor as BAD_USER_INPUT invalid_cursor', async () => {
        const { endCursor } = (await myTribes(me, 1)).pageInfo;
        const [payload, mac] = endCursor.split('.');
        const forged = Buffer.from(JSON.stringify(['2000-01-01T00:00:00.000000Z', tribes[0]])).toString('base64url');
        for (const bad of [`${forged}.${mac}`, tamperedCursor(endCursor), 'not-a-cursor', `${payload}.`]) {
          expect(failure(await gql(t, me, Q.myTribes, { first: 1, after: bad }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_cursor' });
        }
      });

      it("refuses a cursor of another user's list, and of the same list seen by another viewer, as invalid_cursor", async () => {
        const { endCursor: theirs } = (await myTribes(owner, 1)).pageInfo;
        expect(failure(await gql(t, me, Q.myTribes, { first: 1, after: theirs }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_cursor' });
        const { endCursor: mine } = (await myTribes(me, 1)).pageInfo;
        expect(failure(await gql(t, owner, Q.memberships, { u: me.username, first: 1, after: mine }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_cursor' });
        expect(failure(await gql(t, null, Q.memberships, { u: me.username, first: 1, after: mine }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_cursor' });
      });

      it.each([0, 51, -1])('refuses first: %d as BAD_USER_INPUT invalid_first', async (first) => {
        expect(failure(await gql(t, me, Q.myTribes, { first }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_first' });
      });

      it('defaults to 20 and allows 50', async () => {
        const many = await signupUser(t);
        for (let i = 0; i < 21; i += 1) await join(t, many, (await createTribe(t, owner)).handle);
        const first = await myTribes(many);
        expect(first.edges).toHaveLength(20);
        expect(first.pageInfo.hasNextPage).toBe(true);
        expect((await myTribes(many, 1, first.pageInfo.endCursor)).edges).toHaveLength(1);
        const all = await myTribes(many, 50);
        expect(all.edges).toHaveLength(21);
        expect(all.pageInfo.hasNextPage).toBe(false);
      });
    });
  });
});
