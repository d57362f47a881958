import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { accessToken, ALL_SCOPES, createKey, createTribe, signupUser, type CreatedKey, type TestUser } from './factory.js';
import { gql, platformGet, startService, type TestService } from './support.js';
import { expectNoCorsOrRateHeaders, NO_ENDPOINT, READ_ONLY, UNAUTHORIZED } from './expected.js';

const PLATFORM_PATHS = ['/v1/me', '/v1/members', '/v1/members/someone', '/v1/posts', '/v1/events', '/v1/orders'];

/** Headers that differ between two otherwise identical responses. */
const VOLATILE = new Set(['date', 'x-request-id', 'etag', 'content-length']);
const stableHeaders = (headers: Record<string, unknown>) => Object.fromEntries(Object.entries(headers).filter(([h]) => !VOLATILE.has(h)));

describe('Platform API authentication and routing', () => {
  let t: TestService;
  let owner: TestUser;
  let tribe: { id: string; handle: string };
  let key: CreatedKey;
  let revoked: CreatedKey;

  beforeAll(async () => {
    t = await startService();
    owner = await signupUser(t);
    tribe = await createTribe(t, owner);
    key = await createKey(t, owner, tribe.handle, ALL_SCOPES);
    revoked = await createKey(t, owner, tribe.handle, ALL_SCOPES);
    await t.api.delete(`/communities/${tribe.handle}/api-keys/${revoked.id}`).set('cookie', owner.cookie).expect(200);
  });
  afterAll(async () => {
    await t.stop();
  });

  describe('Authorization: Bearer <key>', () => {
    it('authenticates a valid key', async () => {
      const res = await platformGet(t, '/v1/me', key.key);
      expect(res.status).toBe(200);
      expect(res.body.object).toBe('api_key');
    });

    it('accepts the scheme name in any letter case (RFC 7235)', async () => {
      const res = await t.api.get('/v1/me').set('authorization', `bearer ${key.key}`);
      expect(res.status).toBe(200);
    });

    const unknownKey = () => `svc_sk_${'A'.repeat(43)}`;
    it.each<[string, (r: ReturnType<TestService['api']['get']>) => ReturnType<TestService['api']['get']>]>([
      ['no credential at all', (r) => r],
      ['an empty Authorization header', (r) => r.set('authorization', '')],
      ['"Bearer" with nothing after it', (r) => r.set('authorization', 'Bearer ')],
      ['another scheme (Basic)', (r) => r.set('authorization', `Basic ${Buffer.from(`${key.key}:`).toString('base64')}`)],
      ['another scheme (Token)', (r) => r.set('authorization', `Token ${key.key}`)],
      ['the key without a scheme', (r) => r.set('authorization', key.key)],
      ['the key followed by more text', (r) => r.set('authorization', `Bearer ${key.key} extra`)],
      ['a malformed key (too short)', (r) => r.set('authorization', `Bearer ${key.key.slice(0, -1)}`)],
      ['a malformed key (too long)', (r) => r.set('authorization', `Bearer ${key.key}A`)],
      ['a malformed key (other prefix)', (r) => r.set('authorization', `Bearer svc_pk_${key.key.slice(7)}`)],
      ['an unknown well-formed key', (r) => r.set('authorization', `Bearer ${unknownKey()}`)],
      ['a revoked key', (r) => r.set('authorization', `Bearer ${revoked.key}`)],
      ['the key in an X-API-Key header', (r) => r.set('x-api-key', key.key)],
      ['the key in an Api-Key header', (r) => r.set('api-key', key.key)],
      ['the key in the query string (?key=)', (r) => r.query({ key: key.key })],
      ['the key in the query string (?api_key=)', (r) => r.query({ api_key: key.key })],
      ['the key in the query string (?access_token=)', (r) => r.query({ access_token: key.key })],
      ['the key in a cookie', (r) => r.set('cookie', `api_key=${key.key}; key=${key.key}`)],
    ])('answers 401 unauthorized to %s', async (_case, send) => {
      for (const path of ['/v1/me', '/v1/members']) {
        const res = await send(t.api.get(path));
        expect(res.status).toBe(401);
        expect(res.body).toEqual(UNAUTHORIZED);
        expect(res.headers['www-authenticate']).toBe('Bearer');
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      }
    });

    it('answers 401 to a session cookie of the owner', async () => {
      const res = await t.api.get('/v1/members').set('cookie', owner.cookie);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });

    it('answers 401 to a resource-API access token (JWT) of the owner', async () => {
      const token = await accessToken(t, owner);
      const res = await t.api.get('/v1/members').set('authorization', `Bearer ${token}`);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });

    it('makes missing, malformed, unknown and revoked keys indistinguishable', async () => {
      const answers = await Promise.all([
        t.api.get('/v1/members'),
        t.api.get('/v1/members').set('authorization', 'Bearer nope'),
        t.api.get('/v1/members').set('authorization', `Bearer svc_sk_${'z'.repeat(43)}`),
        t.api.get('/v1/members').set('authorization', `Bearer ${revoked.key}`),
      ]);
      for (const res of answers) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual(answers[0].body);
        expect(stableHeaders(res.headers)).toEqual(stableHeaders(answers[0].headers));
      }
    });
  });

  describe('a Platform key elsewhere', () => {
    it('does not authenticate the Application API', async () => {
      for (const [method, path] of [
        ['get', '/auth/me'],
        ['get', `/communities/${tribe.handle}/api-keys`],
        ['get', '/posts/00000000-0000-4000-8000-000000000000'],
      ] as const) {
        const res = await t.api[method](path).set('authorization', `Bearer ${key.key}`);
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ error: 'unauthorized', message: expect.any(String), requestId: expect.any(String) });
      }
    });

    it('does not authenticate the resource API', async () => {
      for (const path of ['/v1/auth/me', '/v1/communities', `/v1/communities/${tribe.id}`]) {
        const res = await t.api.get(path).set('authorization', `Bearer ${key.key}`);
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe('unauthorized');
      }
    });

    it('does not authenticate GraphQL, and the platform queries need a key even for the owner', async () => {
      const anonymous = await t.api
        .post('/graphql')
        .set('authorization', `Bearer ${key.key}`)
        .send({ query: '{ platformMembers { items { id } } }' });
      expect(anonymous.body.errors[0].extensions.reason).toBe('unauthorized');
      const asOwner = await gql(t, owner, '{ platformMembers { items { id } } platformMe { id } }');
      expect(asOwner.errors?.[0]?.extensions?.reason).toBe('unauthorized');
      expect(asOwner.data).toBeNull();
    });
  });

  describe('routing', () => {
    it.each(['/v1', '/v1/', '/v1/nope', '/v1/member', '/v1/members/a/b', '/v1/me/extra', '/v1/Members', '/v1/webhooks', '/v1/authx', '/v1/communitiesx'])(
      'answers an unknown /v1 path (%s) with the typed 404, with or without a key',
      async (path) => {
        for (const res of [await t.api.get(path), await platformGet(t, path, key.key)]) {
          expect(res.status).toBe(404);
          expect(res.body).toEqual(NO_ENDPOINT);
          expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
        }
      },
    );

    it('leaves /v1/auth and /v1/communities to the resource API', async () => {
      const res = await t.api.get('/v1/communities');
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
    });

    it.each(['post', 'put', 'patch', 'delete', 'head'] as const)('answers %s on every Platform path with 405, Allow: GET and the typed envelope', async (method) => {
      for (const path of PLATFORM_PATHS) {
        for (const withKey of [false, true]) {
          const req = t.api[method](path);
          if (withKey) req.set('authorization', `Bearer ${key.key}`);
          if (method !== 'head' && method !== 'delete') req.send({ anything: true });
          const res = await req;
          expect(res.status).toBe(405);
          expect(res.headers.allow).toBe('GET');
          if (method !== 'head') expect(res.body).toEqual(READ_ONLY);
        }
      }
    });

    it('answers 405 before looking at the body or the key', async () => {
      const res = await t.api.post('/v1/members').set('content-type', 'application/json').send('{not json');
      expect(res.status).toBe(405);
      expect(res.body).toEqual(READ_ONLY);
    });
  });

  describe('response headers', () => {
    it('sends JSON with its length and no ETag, so a conditional request still gets the body', async () => {
      const res = await platformGet(t, '/v1/me', key.key);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers.etag).toBeUndefined();
      expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(JSON.stringify(res.body)));
      const again = await platformGet(t, '/v1/me', key.key).set('if-none-match', '*');
      expect(again.status).toBe(200);
      expect(again.body).toEqual(res.body);
    });
  });

  describe('CORS', () => {
    it('sends no Access-Control-* header on a cross-origin GET', async () => {
      for (const path of PLATFORM_PATHS) {
        const res = await platformGet(t, path, key.key).set('origin', 'https://evil.example');
        expectNoCorsOrRateHeaders(res.headers);
      }
      const denied = await t.api.get('/v1/members').set('origin', 'https://evil.example');
      expect(denied.status).toBe(401);
      expectNoCorsOrRateHeaders(denied.headers);
    });

    it('answers a preflight without any Access-Control-* header, so browsers block the call', async () => {
      for (const path of PLATFORM_PATHS) {
        const res = await t.api
          .options(path)
          .set('origin', 'https://evil.example')
          .set('access-control-request-method', 'GET')
          .set('access-control-request-headers', 'authorization');
        expect(res.status).toBe(405);
        expect(res.headers.allow).toBe('GET');
        expect(res.body).toEqual(READ_ONLY);
        expectNoCorsOrRateHeaders(res.headers);
      }
    });
  });
});
