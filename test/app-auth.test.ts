import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type SQL, sql } from 'drizzle-orm';
import { SignJWT, exportSPKI, generateKeyPair } from 'jose';
import { createTribe, join, setRole, signupUser, unique, type TestUser } from './factory.js';
import { gql, startService, type TestService } from './support.js';

const PASSWORD = 'correct horse battery';

/** A fresh, valid signup body; override any field. */
const signupBody = (overrides: Record<string, unknown> = {}) => {
  const u = unique();
  return { email: `app_${u}@example.com`, password: PASSWORD, username: `app_${u}`, displayName: `App ${u}`, ...overrides };
};

type Rows = Array<Record<string, any>>;
/** The rows of a SQL query on the service's database. */
const query = async (t: TestService, q: SQL): Promise<Rows> => ((await t.deps.database.db.execute(q)) as { rows: Rows }).rows;
const usersWithEmail = async (t: TestService, email: string) =>
  Number((await query(t, sql`select count(*)::int as n from users where lower(email) = lower(${email})`))[0].n);

/** The `svc_session=...` cookie (name and value only) of a response. */
const sessionCookieOf = (res: { headers: Record<string, any> }): string => {
  const cookies: string[] = res.headers['set-cookie'] ?? [];
  const found = cookies.find((c) => c.startsWith('svc_session='));
  if (!found) throw new Error(`no svc_session cookie in ${JSON.stringify(cookies)}`);
  return found.split(';')[0];
};
const setCookieHeader = (res: { headers: Record<string, any> }): string =>
  ((res.headers['set-cookie'] ?? []) as string[]).find((c) => c.startsWith('svc_session=')) ?? '';
const attributes = (header: string) => header.split(';').slice(1).map((a) => a.trim().split('=')[0].toLowerCase());

const sha256 = (v: string) => createHash('sha256').update(v).digest('hex');

describe('Application API auth', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startService();
  });
  afterAll(async () => {
    await t.stop();
  });

  describe('POST /auth/signup', () => {
    it('creates the user, answers 201 with the public user and sets an HttpOnly, SameSite=Lax session cookie', async () => {
      const body = signupBody();
      const res = await t.api.post('/auth/signup').send(body);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ user: { id: expect.any(String), email: body.email, username: body.username, displayName: body.displayName } });
      const header = setCookieHeader(res);
      expect(header).toMatch(/^svc_session=[A-Za-z0-9_-]{43};/);
      const attrs = attributes(header);
      expect(attrs).toContain('httponly');
      expect(header).toMatch(/;\s*SameSite=Lax/i);
      expect(attrs).toContain('path');
      expect(attrs).not.toContain('secure'); // the test service runs with COOKIE_SECURE=false
      const [row] = await query(t, sql`select id, email, username, display_name from users where id = ${res.body.user.id}`);
      expect(row).toEqual({ id: res.body.user.id, email: body.email, username: body.username, display_name: body.displayName });
    });

    it('opens a session the cookie authenticates on GET /auth/me', async () => {
      const body = signupBody();
      const res = await t.api.post('/auth/signup').send(body);
      const me = await t.api.get('/auth/me').set('cookie', sessionCookieOf(res));
      expect(me.status).toBe(200);
      expect(me.body).toEqual({ user: { id: res.body.user.id, email: body.email, username: body.username, displayName: body.displayName } });
    });

    it('stores an argon2id password hash and only the SHA-256 of the session token', async () => {
      const res = await t.api.post('/auth/signup').send(signupBody());
      const token = sessionCookieOf(res).slice('svc_session='.length);
      const [user] = await query(t, sql`select password_hash from users where id = ${res.body.user.id}`);
      expect(user.password_hash).toMatch(/^\$argon2id\$/);
      expect(user.password_hash).not.toContain(PASSWORD);
      const sessions = await query(t, sql`select token_hash from sessions where user_id = ${res.body.user.id}`);
      expect(sessions).toHaveLength(1);
      expect(sessions[0].token_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(sessions[0].token_hash).toBe(sha256(token));
      expect(sessions[0].token_hash).not.toBe(token);
    });

    it("hashes at the configured cost (OWASP's argon2id minimum by default); a hash of another cost still signs in", async () => {
      // The suite's services hash at the cheapest cost (test/support.ts); this one at the default, on the same database.
      const owasp = await startService({ PASSWORD_HASH_MEMORY_KIB: '19456', PASSWORD_HASH_ITERATIONS: '2' });
      try {
        const strong = signupBody();
        const created = await owasp.api.post('/auth/signup').send(strong);
        expect(created.status).toBe(201);
        const cheap = signupBody();
        expect((await t.api.post('/auth/signup').send(cheap)).status).toBe(201);
        const hashes = await query(t, sql`select email, password_hash from users where email in (${strong.email}, ${cheap.email})`);
        const hashOf = (email: string) => hashes.find((row) => row.email === email)?.password_hash;
        expect(hashOf(strong.email)).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
        expect(hashOf(cheap.email)).toMatch(/^\$argon2id\$v=19\$m=64,t=1,p=1\$/);
        // Each service verifies the other's hashes: a hash carries its own parameters.
        expect((await t.api.post('/auth/login').send({ email: strong.email, password: PASSWORD })).status).toBe(200);
        expect((await owasp.api.post('/auth/login').send({ email: cheap.email, password: PASSWORD })).status).toBe(200);
        const wrong = await t.api.post('/auth/login').send({ email: strong.email, password: `${PASSWORD}!` });
        expect(wrong.status).toBe(401);
        expect(wrong.body.error).toBe('invalid_credentials');
        const unknown = await owasp.api.post('/auth/login').send({ email: `nobody_${unique()}@example.com`, password: PASSWORD });
        expect(unknown.status).toBe(401);
        expect(unknown.body.error).toBe('invalid_credentials');
      } finally {
        await owasp.stop();
      }
    });

    it.each([
      ['no @', 'not-an-email'],
      ['no domain', 'someone@'],
      ['spaces inside', 'some one@example.com'],
    ])('answers 400 invalid_email for an address with %s and writes nothing', async (_what, email) => {
      const res = await t.api.post('/auth/signup').send(signupBody({ email }));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_email', message: expect.any(String), requestId: expect.any(String) });
      expect(await usersWithEmail(t, email)).toBe(0);
    });

    it('answers 400 weak_password for 9 characters and writes nothing', async () => {
      const body = signupBody({ password: '123456789' });
      const res = await t.api.post('/auth/signup').send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'weak_password', message: expect.any(String), requestId: expect.any(String) });
      expect(await usersWithEmail(t, body.email)).toBe(0);
    });

    it('accepts a password of exactly 10 characters', async () => {
      const body = signupBody({ password: '1234567890' });
      const res = await t.api.post('/auth/signup').send(body);
      expect(res.status).toBe(201);
      const login = await t.api.post('/auth/login').send({ email: body.email, password: '1234567890' });
      expect(login.status).toBe(200);
    });

    it.each([
      ['too short', 'ab'],
      ['too long (31 characters)', `a${'b'.repeat(30)}`],
      ['uppercase', 'Upper_case'],
      ['a dash', 'with-dash'],
      ['a space', 'with space'],
    ])('answers 400 invalid_username for a username %s and writes nothing', async (_what, username) => {
      const body = signupBody({ username });
      const res = await t.api.post('/auth/signup').send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_username', message: expect.any(String), requestId: expect.any(String) });
      expect(await usersWithEmail(t, body.email)).toBe(0);
    });

    it('accepts a username of exactly 30 characters of a-z, 0-9 and _', async () => {
      const username = `u_${unique()}${unique()}`.padEnd(30, '9');
      expect(username).toHaveLength(30);
      const res = await t.api.post('/auth/signup').send(signupBody({ username }));
      expect(res.status).toBe(201);
      expect(res.body.user.username).toBe(username);
    });

    it('answers 409 email_taken for a registered email, also when it differs in case', async () => {
      const first = signupBody();
      expect((await t.api.post('/auth/signup').send(first)).status).toBe(201);
      const same = await t.api.post('/auth/signup').send(signupBody({ email: first.email }));
      expect(same.status).toBe(409);
      expect(same.body).toEqual({ error: 'email_taken', message: expect.any(String), requestId: expect.any(String) });
      const shouting = await t.api.post('/auth/signup').send(signupBody({ email: first.email.toUpperCase() }));
      expect(shouting.status).toBe(409);
      expect(shouting.body).toEqual({ error: 'email_taken', message: expect.any(String), requestId: expect.any(String) });
      expect(await usersWithEmail(t, first.email)).toBe(1);
    });

    it('answers 409 username_taken for a taken username and writes nothing', async () => {
      const first = signupBody();
      expect((await t.api.post('/auth/signup').send(first)).status).toBe(201);
      const second = signupBody({ username: first.username });
      const res = await t.api.post('/auth/signup').send(second);
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ error: 'username_taken', message: expect.any(String), requestId: expect.any(String) });
      expect(await usersWithEmail(t, second.email)).toBe(0);
    });

    it.each(['email', 'password', 'username', 'displayName'])('answers 400 invalid_input when %s is missing and writes nothing', async (field) => {
      const body: Record<string, unknown> = signupBody();
      const email = String(body.email);
      delete body[field];
      const res = await t.api.post('/auth/signup').send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_input', message: expect.any(String), requestId: expect.any(String) });
      expect(await usersWithEmail(t, email)).toBe(0);
    });

    it.each([
      ['password is a number', { password: 1234567890123 }],
      ['username is a number', { username: 12345 }],
      ['displayName is an object', { displayName: { first: 'A' } }],
      ['displayName is blank', { displayName: '   ' }],
      ['inviteCode is a number', { inviteCode: 7 }],
    ])('answers 400 invalid_input when %s and writes nothing', async (_what, overrides) => {
      const body = signupBody(overrides);
      const res = await t.api.post('/auth/signup').send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_input', message: expect.any(String), requestId: expect.any(String) });
      expect(await usersWithEmail(t, body.email)).toBe(0);
    });

    it('answers 400 invalid_input when email is not a string', async () => {
      const res = await t.api.post('/auth/signup').send(signupBody({ email: ['a@example.com'] }));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_input', message: expect.any(String), requestId: expect.any(String) });
      expect(await usersWithEmail(t, 'a@example.com')).toBe(0);
    });

    it('answers 400 invalid_input for a JSON array body', async () => {
      const res = await t.api.post('/auth/signup').set('content-type', 'application/json').send('[]');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_input', message: expect.any(String), requestId: expect.any(String) });
    });

    it('answers 400 malformed_json for a body that is not JSON and writes nothing', async () => {
      const body = signupBody();
      const broken = JSON.stringify(body).slice(0, -1);
      const res = await t.api.post('/auth/signup').set('content-type', 'application/json').send(broken);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'malformed_json', message: expect.any(String), requestId: expect.any(String) });
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(await usersWithEmail(t, body.email)).toBe(0);
    });

    it('sets no cookie on a rejected signup', async () => {
      const res = await t.api.post('/auth/signup').send(signupBody({ password: 'short' }));
      expect(res.status).toBe(400);
      expect(res.headers['set-cookie']).toBeUndefined();
    });

    describe('with inviteCode', () => {
      let owner: TestUser;
      let tribe: { id: string; handle: string };
      let code: string;
      beforeAll(async () => {
        owner = await signupUser(t);
        tribe = await createTribe(t, owner, { isPublic: false });
        const out = await gql(t, owner, 'mutation($c: ID!){ createInvite(communityId: $c) }', { c: tribe.id });
        expect(out.errors).toBeUndefined();
        code = out.data.createInvite;
      });

      it('joins the private tribe as member and records member.joined with {userId, handle} of the tribe', async () => {
        const body = signupBody({ inviteCode: code });
        const res = await t.api.post('/auth/signup').send(body);
        expect(res.status).toBe(201);
        const userId = res.body.user.id;
        const members = await query(t, sql`select role from members where community_id = ${tribe.id} and user_id = ${userId}`);
        expect(members).toEqual([{ role: 'member' }]);
        const events = await query(t, sql`select type, data from outbox_events where community_id = ${tribe.id} and data->>'userId' = ${userId}`);
        expect(events).toEqual([{ type: 'member.joined', data: { userId, handle: tribe.handle } }]);
        const seen = await gql(t, { ...owner, cookie: sessionCookieOf(res) }, 'query($h: String!){ community(handle: $h){ viewerRole } }', { h: tribe.handle });
        expect(seen.data.community.viewerRole).toBe('member');
      });

      it('answers 400 invalid_invite for an unknown code and writes no user', async () => {
        const body = signupBody({ inviteCode: `nope_${unique()}` });
        const res = await t.api.post('/auth/signup').send(body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: 'invalid_invite', message: expect.any(String), requestId: expect.any(String) });
        expect(res.headers['set-cookie']).toBeUndefined();
        expect(await usersWithEmail(t, body.email)).toBe(0);
        expect(await query(t, sql`select 1 from users where username = ${body.username}`)).toEqual([]);
      });

      it('answers 400 invalid_invite for a revoked code and writes no user', async () => {
        const out = await gql(t, owner, 'mutation($c: ID!){ createInvite(communityId: $c) }', { c: tribe.id });
        const revoked = out.data.createInvite as string;
        await t.deps.database.db.execute(sql`update community_invites set revoked_at = now() where code = ${revoked}`);
        const body = signupBody({ inviteCode: revoked });
        const res = await t.api.post('/auth/signup').send(body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: 'invalid_invite', message: expect.any(String), requestId: expect.any(String) });
        expect(await usersWithEmail(t, body.email)).toBe(0);
      });
    });
  });

  describe('Secure cookie attribute', () => {
    let secure: TestService;
    beforeAll(async () => {
      secure = await startService({ COOKIE_SECURE: 'true' });
    });
    afterAll(async () => {
      await secure.stop();
    });

    it('marks the session cookie Secure when COOKIE_SECURE is true', async () => {
      const res = await secure.api.post('/auth/signup').send(signupBody());
      expect(res.status).toBe(201);
      const header = setCookieHeader(res);
      expect(attributes(header)).toEqual(expect.arrayContaining(['secure', 'httponly', 'samesite']));
      expect(header).toMatch(/;\s*SameSite=Lax/i);
    });

    it('marks the login cookie Secure as well', async () => {
      const body = signupBody();
      await secure.api.post('/auth/signup').send(body);
      const res = await secure.api.post('/auth/login').send({ email: body.email, password: body.password });
      expect(res.status).toBe(200);
      expect(attributes(setCookieHeader(res))).toContain('secure');
    });
  });

  describe('POST /auth/login', () => {
    let user: TestUser;
    beforeAll(async () => {
      user = await signupUser(t);
    });

    it('answers 200 with the user and a new session cookie', async () => {
      const res = await t.api.post('/auth/login').send({ email: user.email, password: user.password });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ user: { id: user.id, email: user.email, username: user.username, displayName: expect.any(String) } });
      const cookie = sessionCookieOf(res);
      expect(cookie).not.toBe(user.cookie);
      expect(attributes(setCookieHeader(res))).toContain('httponly');
      const me = await t.api.get('/auth/me').set('cookie', cookie);
      expect(me.status).toBe(200);
      expect(me.body.user.id).toBe(user.id);
    });

    it('matches the email case-insensitively', async () => {
      const res = await t.api.post('/auth/login').send({ email: user.email.toUpperCase(), password: user.password });
      expect(res.status).toBe(200);
      expect(res.body.user.id).toBe(user.id);
    });

    it('answers 401 invalid_credentials for a wrong password, without a cookie', async () => {
      const res = await t.api.post('/auth/login').send({ email: user.email, password: `${user.password}x` });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'invalid_credentials', message: expect.any(String), requestId: expect.any(String) });
      expect(res.headers['set-cookie']).toBeUndefined();
    });

    it('answers 401 invalid_credentials for an unknown email', async () => {
      const res = await t.api.post('/auth/login').send({ email: `nobody_${unique()}@example.com`, password: PASSWORD });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'invalid_credentials', message: expect.any(String), requestId: expect.any(String) });
    });

    it('answers 400 invalid_input when the password is missing', async () => {
      const res = await t.api.post('/auth/login').send({ email: user.email });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_input', message: expect.any(String), requestId: expect.any(String) });
    });
  });

  describe('POST /auth/logout', () => {
    it('revokes the session server-side: the old cookie then gets 401 on GET /auth/me', async () => {
      const user = await signupUser(t);
      expect((await t.api.get('/auth/me').set('cookie', user.cookie)).status).toBe(200);
      const out = await t.api.post('/auth/logout').set('cookie', user.cookie);
      expect(out.status).toBe(200);
      expect(out.body).toEqual({ ok: true });
      expect(setCookieHeader(out)).toMatch(/^svc_session=;.*Expires=Thu, 01 Jan 1970/);
      const me = await t.api.get('/auth/me').set('cookie', user.cookie);
      expect(me.status).toBe(401);
      expect(me.body).toEqual({ error: 'unauthorized', message: expect.any(String), requestId: expect.any(String) });
      const sessions = await query(t, sql`select revoked_at from sessions where user_id = ${user.id}`);
      expect(sessions).toHaveLength(1);
      expect(sessions[0].revoked_at).not.toBeNull();
    });

    it('leaves the user’s other sessions alive', async () => {
      const user = await signupUser(t);
      const other = sessionCookieOf(await t.api.post('/auth/login').send({ email: user.email, password: user.password }));
      await t.api.post('/auth/logout').set('cookie', user.cookie);
      expect((await t.api.get('/auth/me').set('cookie', other)).status).toBe(200);
    });

    it('answers 200 without a session', async () => {
      const res = await t.api.post('/auth/logout');
      expect(res.status).toBe(200);
    });
  });

  describe('GET /auth/me', () => {
    it('answers 401 unauthorized without a cookie', async () => {
      const res = await t.api.get('/auth/me');
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized', message: expect.any(String), requestId: expect.any(String) });
    });

    it('answers 401 unauthorized for a made-up session token', async () => {
      const res = await t.api.get('/auth/me').set('cookie', `svc_session=${'A'.repeat(43)}`);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized', message: expect.any(String), requestId: expect.any(String) });
    });

    it('ignores a __session cookie when no identity provider is configured', async () => {
      const res = await t.api.get('/auth/me').set('cookie', '__session=eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.');
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized', message: expect.any(String), requestId: expect.any(String) });
    });
  });

  describe('GET /posts/:postId', () => {
    const POST_FIELDS = 'id body pinnedAt createdAt';
    let owner: TestUser;
    let member: TestUser;
    let outsider: TestUser;
    let publicTribe: { id: string; handle: string };
    let privateTribe: { id: string; handle: string };
    const createPost = async (as: TestUser, communityId: string, input: Record<string, unknown>) => {
      const out = await gql(t, as, `mutation($c: ID!, $i: CreatePostInput!){ createPost(communityId: $c, input: $i){ ${POST_FIELDS} } }`, { c: communityId, i: input });
      if (out.errors) throw new Error(JSON.stringify(out.errors));
      return out.data.createPost as { id: string; body: string; pinnedAt: string | null; createdAt: string };
    };

    beforeAll(async () => {
      owner = await signupUser(t);
      member = await signupUser(t);
      outsider = await signupUser(t);
      publicTribe = await createTribe(t, owner);
      privateTribe = await createTribe(t, owner, { isPublic: false });
      await join(t, member, publicTribe.handle);
    });

    it('answers exactly the post record {id, communityId, authorId, body, pinnedAt, createdAt}', async () => {
      const post = await createPost(owner, publicTribe.id, { content: '<p>hello <b>world</b></p>' });
      const res = await t.api.get(`/posts/${post.id}`).set('cookie', member.cookie);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: post.id,
        communityId: publicTribe.id,
        authorId: owner.id,
        body: '<p>hello <b>world</b></p>',
        pinnedAt: null,
        createdAt: post.createdAt,
      });
      expect(new Date(res.body.createdAt).toISOString()).toBe(res.body.createdAt);
    });

    it('carries pinnedAt as an ISO date-time for a pinned post', async () => {
      const post = await createPost(owner, publicTribe.id, { content: 'pinned', isPinned: true });
      const res = await t.api.get(`/posts/${post.id}`).set('cookie', outsider.cookie);
      expect(res.status).toBe(200);
      expect(res.body.pinnedAt).toBe(post.pinnedAt);
      expect(new Date(res.body.pinnedAt).toISOString()).toBe(res.body.pinnedAt);
    });

    it('answers a published public post of a public tribe without a session, as GraphQL post(id) answers it anonymously', async () => {
      const post = await createPost(owner, publicTribe.id, { content: '<p>open to all</p>' });
      const res = await t.api.get(`/posts/${post.id}`);
      expect(res.status).toBe(200);
      const viaGraphql = await gql(t, null, 'query($id: ID!){ post(id: $id){ id community { id } author { id } body pinnedAt createdAt } }', { id: post.id });
      expect(viaGraphql.errors).toBeUndefined();
      const g = viaGraphql.data.post;
      expect(res.body).toEqual({ id: g.id, communityId: g.community.id, authorId: g.author.id, body: g.body, pinnedAt: g.pinnedAt, createdAt: g.createdAt });
      expect(res.body.body).toBe('<p>open to all</p>');
    });

    it('answers 401 unauthorized without a session for what GraphQL does not show anonymously (private tribe, members only, draft, removed, unknown), alike', async () => {
      const hidden = [
        await createPost(owner, privateTribe.id, { content: 'secret' }),
        await createPost(owner, publicTribe.id, { content: 'members only', visibility: 'members' }),
        await createPost(owner, publicTribe.id, { content: 'draft', status: 'draft' }),
        await createPost(owner, publicTribe.id, { content: 'removed' }),
      ];
      await t.deps.database.db.execute(sql`update posts set removed_at = now() where id = ${hidden[3].id}`);
      for (const id of [...hidden.map((p) => p.id), '00000000-0000-4000-8000-000000000000']) {
        expect((await gql(t, null, 'query($id: ID!){ post(id: $id){ id } }', { id })).data?.post ?? null).toBeNull();
        const res = await t.api.get(`/posts/${id}`);
        expect(res.status).toBe(401);
        expect(res.body).toMatchObject({ error: 'unauthorized', message: expect.any(String), requestId: expect.any(String) });
      }
      // Signed in, the removed post stays hidden from a member as before (404), and its author still reads it.
      expect((await t.api.get(`/posts/${hidden[3].id}`).set('cookie', member.cookie)).status).toBe(404);
      expect((await t.api.get(`/posts/${hidden[3].id}`).set('cookie', owner.cookie)).status).toBe(200);
    });

    it('answers 404 not_found for an unknown id', async () => {
      const res = await t.api.get('/posts/00000000-0000-4000-8000-000000000000').set('cookie', member.cookie);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not_found', message: expect.any(String), requestId: expect.any(String) });
    });

    it('answers 404 not_found for an id that is not a UUID', async () => {
      const res = await t.api.get('/posts/not-a-uuid').set('cookie', member.cookie);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not_found', message: expect.any(String), requestId: expect.any(String) });
    });

    it('answers 404 not_found for a private tribe’s post seen by an outsider, 200 for its owner', async () => {
      const post = await createPost(owner, privateTribe.id, { content: 'secret' });
      const res = await t.api.get(`/posts/${post.id}`).set('cookie', outsider.cookie);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not_found', message: expect.any(String), requestId: expect.any(String) });
      expect((await t.api.get(`/posts/${post.id}`).set('cookie', owner.cookie)).status).toBe(200);
    });

    it('answers 404 not_found for a members-only post of a public tribe seen by an outsider, 200 for a member', async () => {
      const post = await createPost(owner, publicTribe.id, { content: 'members only', visibility: 'members' });
      const res = await t.api.get(`/posts/${post.id}`).set('cookie', outsider.cookie);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not_found', message: expect.any(String), requestId: expect.any(String) });
      expect((await t.api.get(`/posts/${post.id}`).set('cookie', member.cookie)).status).toBe(200);
    });

    it('answers 404 not_found for a draft seen by another member, 200 for its author', async () => {
      const author = await signupUser(t);
      await join(t, author, publicTribe.handle);
      const post = await createPost(author, publicTribe.id, { content: 'draft', status: 'draft' });
      const res = await t.api.get(`/posts/${post.id}`).set('cookie', member.cookie);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not_found', message: expect.any(String), requestId: expect.any(String) });
      expect((await t.api.get(`/posts/${post.id}`).set('cookie', author.cookie)).status).toBe(200);
    });

    it('shows a draft to a moderator of the tribe', async () => {
      const author = await signupUser(t);
      const moderator = await signupUser(t);
      await join(t, author, publicTribe.handle);
      await join(t, moderator, publicTribe.handle);
      await setRole(t, owner, publicTribe.id, moderator.id, 'moderator');
      const post = await createPost(author, publicTribe.id, { content: 'draft', status: 'draft' });
      expect((await t.api.get(`/posts/${post.id}`).set('cookie', moderator.cookie)).status).toBe(200);
    });
  });
});

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

describe('identity-provider session (__session JWT)', () => {
  let t: TestService;
  let privateKey: PrivateKey;
  let otherKey: PrivateKey;
  beforeAll(async () => {
    const pair = await generateKeyPair('RS256', { extractable: true });
    privateKey = pair.privateKey;
    otherKey = (await generateKeyPair('RS256', { extractable: true })).privateKey;
    t = await startService({ IDP_JWT_PUBLIC_KEY: await exportSPKI(pair.publicKey) });
  });
  afterAll(async () => {
    await t.stop();
  });

  const idpToken = (claims: Record<string, unknown>, sub: string, options: { key?: PrivateKey; exp?: number | string } = {}) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256' })
      .setSubject(sub)
      .setIssuedAt()
      .setExpirationTime(options.exp ?? '10m')
      .sign(options.key ?? privateKey);
  const me = (jwt: string) => t.api.get('/auth/me').set('cookie', `__session=${jwt}`);

  describe('GET /auth/me', () => {
    it('provisions a user from a verified token and answers 200', async () => {
      const u = unique();
      const email = `idp_${u}@example.com`;
      const sub = `idp|${u}`;
      const res = await me(await idpToken({ email, email_verified: true, name: 'Ada Lovelace' }, sub));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ user: { id: expect.any(String), email, username: expect.stringMatching(/^[a-z0-9_]{3,30}$/), displayName: 'Ada Lovelace' } });
      expect(await query(t, sql`select id, idp_subject, password_hash from users where lower(email) = ${email}`)).toEqual([{ id: res.body.user.id, idp_subject: sub, password_hash: null }]);
    });

    it('maps the same sub to the same user on every request', async () => {
      const u = unique();
      const sub = `idp|${u}`;
      const first = await me(await idpToken({ email: `idp_${u}@example.com`, email_verified: true, name: 'Same' }, sub));
      const again = await me(await idpToken({ email: `idp_${u}@example.com`, email_verified: true, name: 'Same' }, sub));
      expect(first.status).toBe(200);
      expect(again.status).toBe(200);
      expect(again.body.user.id).toBe(first.body.user.id);
      expect((await query(t, sql`select count(*)::int as n from users where idp_subject = ${sub}`))[0]).toEqual({ n: 1 });
    });

    it('authenticates GraphQL with the same identity', async () => {
      const u = unique();
      const jwt = await idpToken({ email: `idp_${u}@example.com`, email_verified: true, name: 'Graph' }, `idp|${u}`);
      const res = await t.api.post('/graphql').set('cookie', `__session=${jwt}`).send({ query: '{ me { displayName email } }' });
      expect(res.body.data.me).toEqual({ displayName: 'Graph', email: `idp_${u}@example.com` });
    });

    it('never links a new sub to a password account whose email was not verified here (see email-tokens.test.ts for the verified case)', async () => {
      const user = await signupUser(t);
      const sub = `idp|${unique()}`;
      const res = await me(await idpToken({ email: user.email.toUpperCase(), email_verified: true, name: 'Linked' }, sub));
      expect(res.status).toBe(401);
      const linked = (await t.deps.database.db.execute(sql`select idp_subject from users where id = ${user.id}`)) as unknown as { rows: unknown[] };
      expect(linked.rows).toEqual([{ idp_subject: null }]);
    });

    it('answers 401 for a token signed by another key', async () => {
      const u = unique();
      const email = `idp_${u}@example.com`;
      const res = await me(await idpToken({ email, email_verified: true, name: 'Mallory' }, `idp|${u}`, { key: otherKey }));
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized', message: expect.any(String), requestId: expect.any(String) });
      expect((await query(t, sql`select count(*)::int as n from users where lower(email) = ${email}`))[0]).toEqual({ n: 0 });
    });

    it('answers 401 for an expired token', async () => {
      const u = unique();
      const email = `idp_${u}@example.com`;
      const res = await me(await idpToken({ email, email_verified: true, name: 'Late' }, `idp|${u}`, { exp: Math.floor(Date.now() / 1000) - 60 }));
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized', message: expect.any(String), requestId: expect.any(String) });
      expect((await query(t, sql`select count(*)::int as n from users where lower(email) = ${email}`))[0]).toEqual({ n: 0 });
    });

    it('answers 401 for an unknown sub whose email is not verified, and provisions nobody', async () => {
      const u = unique();
      const email = `idp_${u}@example.com`;
      const res = await me(await idpToken({ email, email_verified: false, name: 'Unverified' }, `idp|${u}`));
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized', message: expect.any(String), requestId: expect.any(String) });
      expect((await query(t, sql`select count(*)::int as n from users where lower(email) = ${email}`))[0]).toEqual({ n: 0 });
    });

    it('answers 401 for a token that is not a JWT at all', async () => {
      const res = await me('garbage');
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized', message: expect.any(String), requestId: expect.any(String) });
    });
  });
});
