import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql, type SQL } from 'drizzle-orm';
import { SignJWT } from 'jose';
import { accessToken, signupUser, type TestUser } from './factory.js';
import { startService, type TestService } from './support.js';

/** Token-authenticated resource API, authentication (spec 4.5, 5.3): login, refresh rotation, me. */
describe('resource API auth', () => {
  let t: TestService;
  /** Milliseconds added to the real time; moved forward to expire tokens, always reset afterwards. */
  let skew = 0;

  beforeAll(async () => {
    t = await startService({}, () => new Date(Date.now() + skew));
  });
  afterAll(async () => {
    await t.stop();
  });

  const rows = async (query: SQL) => ((await t.deps.database.db.execute(query)) as unknown as { rows: Record<string, any>[] }).rows;
  const login = (user: TestUser) => t.api.post('/v1/auth/login').send({ email: user.email, password: user.password });
  const refresh = (token: unknown) => t.api.post('/v1/auth/refresh').send({ refresh_token: token });
  const me = (token: string) => t.api.get('/v1/auth/me').set('authorization', `Bearer ${token}`);
  const jwtPayload = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8'));

  /** The resource-API envelope with exactly `code`, a human message and nothing else but optional details. */
  const expectError = (body: any, code: string) => {
    expect(body).toEqual({ error: expect.objectContaining({ code, message: expect.any(String) }) });
    expect(Object.keys(body.error).every((k) => ['code', 'message', 'details', 'request_id'].includes(k))).toBe(true);
  };

  describe('POST /v1/auth/login', () => {
    it('returns an access token, a refresh token, expires_in 3600 and the user for good credentials', async () => {
      const user = await signupUser(t);
      const res = await login(user);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({
        data: {
          access_token: expect.any(String),
          refresh_token: expect.any(String),
          expires_in: 3600,
          user: { id: user.id, email: user.email, username: user.username },
        },
      });
      const { access_token: jwt, refresh_token: rt } = res.body.data;
      expect(jwt.split('.')).toHaveLength(3);
      expect(jwt.split('.').every((part: string) => /^[A-Za-z0-9_-]+$/.test(part))).toBe(true);
      const payload = jwtPayload(jwt);
      expect(payload.sub).toBe(user.id);
      expect(payload.exp - payload.iat).toBe(3600);
      expect(rt).not.toBe(jwt);
      const stored = await rows(sql`select token_hash, used_at, revoked_at from refresh_tokens where user_id = ${user.id}`);
      expect(stored).toHaveLength(1);
      expect(stored[0]).toMatchObject({ used_at: null, revoked_at: null });
      expect(stored[0].token_hash).not.toBe(rt);
    });

    it('accepts the email in another letter case', async () => {
      const user = await signupUser(t);
      const res = await t.api.post('/v1/auth/login').send({ email: user.email.toUpperCase(), password: user.password });
      expect(res.status).toBe(200);
      expect(res.body.data.user.id).toBe(user.id);
    });

    it('answers 401 invalid_credentials for a wrong password and issues no token', async () => {
      const user = await signupUser(t);
      const res = await t.api.post('/v1/auth/login').send({ email: user.email, password: 'wrong password here' });
      expect(res.status).toBe(401);
      expectError(res.body, 'invalid_credentials');
      expect(await rows(sql`select id from refresh_tokens where user_id = ${user.id}`)).toHaveLength(0);
    });

    it('answers an unknown email exactly like a wrong password', async () => {
      const user = await signupUser(t);
      const wrongPassword = await t.api.post('/v1/auth/login').send({ email: user.email, password: 'wrong password here' });
      const unknownEmail = await t.api.post('/v1/auth/login').send({ email: `nobody_${user.username}@example.com`, password: user.password });
      expect(unknownEmail.status).toBe(401);
      expectError(unknownEmail.body, 'invalid_credentials');
      // The same answer but for the request's own id.
      expect({ ...unknownEmail.body.error, request_id: 0 }).toEqual({ ...wrongPassword.body.error, request_id: 0 });
    });

    it.each([
      ['no body fields', {}],
      ['no password', { email: 'a@example.com' }],
      ['no email', { password: 'correct horse battery' }],
    ])('answers 400 invalid_input with field details for %s', async (_name, body) => {
      const res = await t.api.post('/v1/auth/login').send(body);
      expect(res.status).toBe(400);
      expectError(res.body, 'invalid_input');
      expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field: expect.any(String), message: expect.any(String) })]));
    });

    it.each([
      ['a numeric email', { email: 42, password: 'correct horse battery' }],
      ['a password array', { email: 'a@example.com', password: ['x'] }],
      ['a null password', { email: 'a@example.com', password: null }],
    ])('answers 400 invalid_input for %s', async (_name, body) => {
      const res = await t.api.post('/v1/auth/login').send(body);
      expect(res.status).toBe(400);
      expectError(res.body, 'invalid_input');
    });

    it('answers 400 invalid_input for a JSON array body', async () => {
      const res = await t.api.post('/v1/auth/login').set('content-type', 'application/json').send('[1,2]');
      expect(res.status).toBe(400);
      expectError(res.body, 'invalid_input');
    });

    it.each([
      ['a bare JSON string', '"just a string"'],
      ['broken JSON', '{"email": "a@example.com",'],
      ['a bare word', 'hello'],
    ])('answers 400 malformed_json for %s sent as application/json', async (_name, raw) => {
      const res = await t.api.post('/v1/auth/login').set('content-type', 'application/json').send(raw);
      expect(res.status).toBe(400);
      expectError(res.body, 'malformed_json');
    });

    it.each([
      ['text/plain', 'email=a@example.com'],
      ['application/x-www-form-urlencoded', 'email=a%40example.com&password=x'],
    ])('answers 415 unsupported_media_type for a %s body', async (type, raw) => {
      const res = await t.api.post('/v1/auth/login').set('content-type', type).send(raw);
      expect(res.status).toBe(415);
      expectError(res.body, 'unsupported_media_type');
    });
  });

  describe('POST /v1/auth/refresh', () => {
    it('rotates: returns a new working pair and the new refresh token works once more', async () => {
      const user = await signupUser(t);
      const first = (await login(user)).body.data;
      const res = await refresh(first.refresh_token);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: { access_token: expect.any(String), refresh_token: expect.any(String), expires_in: 3600 } });
      const second = res.body.data;
      expect(second.refresh_token).not.toBe(first.refresh_token);
      expect(second.access_token.split('.')).toHaveLength(3);
      expect((await me(second.access_token)).body.data.id).toBe(user.id);

      const third = await refresh(second.refresh_token);
      expect(third.status).toBe(200);
      expect((await me(third.body.data.access_token)).body.data.id).toBe(user.id);
      const family = await rows(sql`select distinct family_id from refresh_tokens where user_id = ${user.id}`);
      expect(family).toHaveLength(1);
    });

    it('rejects a reused refresh token and then revokes the newer token of the same family', async () => {
      const user = await signupUser(t);
      const first = (await login(user)).body.data;
      const second = (await refresh(first.refresh_token)).body.data;

      const replay = await refresh(first.refresh_token);
      expect(replay.status).toBe(401);
      expectError(replay.body, 'invalid_refresh_token');

      const newer = await refresh(second.refresh_token);
      expect(newer.status).toBe(401);
      expectError(newer.body, 'invalid_refresh_token');

      const live = await rows(sql`select id from refresh_tokens where user_id = ${user.id} and revoked_at is null`);
      expect(live).toHaveLength(0);
    });

    it('leaves another login family of the same user working after one family is revoked', async () => {
      const user = await signupUser(t);
      const stolen = (await login(user)).body.data;
      const other = (await login(user)).body.data;
      await refresh(stolen.refresh_token);
      expect((await refresh(stolen.refresh_token)).status).toBe(401);

      const res = await refresh(other.refresh_token);
      expect(res.status).toBe(200);
      expect((await me(res.body.data.access_token)).status).toBe(200);
    });

    it('answers 401 invalid_refresh_token for a garbage token', async () => {
      const res = await refresh('svc_rt_not-a-real-token');
      expect(res.status).toBe(401);
      expectError(res.body, 'invalid_refresh_token');
    });

    it('answers 401 for a refresh token past its lifetime (30 days)', async () => {
      const user = await signupUser(t);
      const { refresh_token: token } = (await login(user)).body.data;
      try {
        skew = 31 * 86_400_000;
        const res = await refresh(token);
        expect(res.status).toBe(401);
        expectError(res.body, 'invalid_refresh_token');
      } finally {
        skew = 0;
      }
    });

    it('does not take an access token as a refresh token', async () => {
      const user = await signupUser(t);
      const res = await refresh(await accessToken(t, user));
      expect(res.status).toBe(401);
      expectError(res.body, 'invalid_refresh_token');
    });

    it.each([
      ['no refresh_token', {}],
      ['a numeric refresh_token', { refresh_token: 12345 }],
      ['an empty refresh_token', { refresh_token: '' }],
    ])('answers 400 invalid_input for %s', async (_name, body) => {
      const res = await t.api.post('/v1/auth/refresh').send(body);
      expect(res.status).toBe(400);
      expectError(res.body, 'invalid_input');
    });

    it('answers 400 malformed_json for a raw string body', async () => {
      const res = await t.api.post('/v1/auth/refresh').set('content-type', 'application/json').send('"svc_rt_x"');
      expect(res.status).toBe(400);
      expectError(res.body, 'malformed_json');
    });
  });

  describe('GET /v1/auth/me', () => {
    it('returns the user record for the access token', async () => {
      const user = await signupUser(t, { displayName: 'Ada Lovelace' });
      const res = await me(await accessToken(t, user));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        data: { id: user.id, email: user.email, username: user.username, display_name: 'Ada Lovelace', avatar_url: null },
      });
    });

    it('answers 401 unauthorized without an Authorization header', async () => {
      const res = await t.api.get('/v1/auth/me');
      expect(res.status).toBe(401);
      expectError(res.body, 'unauthorized');
    });

    it('answers 401 unauthorized for a malformed, tampered or foreign token', async () => {
      const user = await signupUser(t);
      const good = await accessToken(t, user);
      const [header, , signature] = good.split('.');
      const forgedPayload = Buffer.from(JSON.stringify({ ...jwtPayload(good), sub: '00000000-0000-4000-8000-000000000000' })).toString('base64url');
      const otherKey = await new SignJWT({ typ: 'access' })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(user.id)
        .setIssuer('svc')
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode('another-secret-another-secret-another'));
      const refreshToken = (await login(user)).body.data.refresh_token;
      for (const token of ['not-a-jwt', `${header}.${forgedPayload}.${signature}`, otherKey, refreshToken]) {
        const res = await me(token);
        expect(res.status).toBe(401);
        expectError(res.body, 'unauthorized');
      }
      const basic = await t.api.get('/v1/auth/me').set('authorization', `Basic ${good}`);
      expect(basic.status).toBe(401);
    });

    it('accepts the Bearer scheme name in any letter case (RFC 7235)', async () => {
      const user = await signupUser(t);
      const token = await accessToken(t, user);
      for (const scheme of ['bearer', 'BEARER', 'Bearer']) {
        const res = await t.api.get('/v1/auth/me').set('authorization', `${scheme} ${token}`);
        expect(res.status).toBe(200);
        expect(res.body.data.id).toBe(user.id);
      }
    });

    it('answers 401 once the access token is older than expires_in', async () => {
      const user = await signupUser(t);
      const token = await accessToken(t, user);
      try {
        skew = 3_601_000;
        const res = await me(token);
        expect(res.status).toBe(401);
        expectError(res.body, 'unauthorized');
      } finally {
        skew = 0;
      }
      expect((await me(token)).status).toBe(200);
    });

    it('is not authenticated by a session cookie alone, nor is /v1/communities', async () => {
      const user = await signupUser(t);
      const meRes = await t.api.get('/v1/auth/me').set('cookie', user.cookie);
      expect(meRes.status).toBe(401);
      expectError(meRes.body, 'unauthorized');

      const list = await t.api.get('/v1/communities').set('cookie', user.cookie);
      expect(list.status).toBe(401);
      expectError(list.body, 'unauthorized');

      const create = await t.api.post('/v1/communities').set('cookie', user.cookie).send({ name: 'Cookie tribe', handle: `ck-${user.username.slice(2)}` });
      expect(create.status).toBe(401);
      expectError(create.body, 'unauthorized');
      expect(await rows(sql`select id from communities where created_by = ${user.id}`)).toHaveLength(0);
    });
  });
});
