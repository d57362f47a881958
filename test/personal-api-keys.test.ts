// Personal API keys of the resource API (spec 5.3, issue 31): created, listed and revoked by a signed-in user through
// GraphQL and the console's account settings; they act as that user on the resource API only, within their scopes.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { PERSONAL_API_KEYS_PER_USER, deleteAccount, revokeAllPersonalApiKeys, suspendAccount, unsuspendAccount } from '../subgraphs/identity/index.js';
import { censorCredentials } from '../subgraphs/kernel/logging.js';
import { buildConsole } from '../scripts/build-console.js';
import { accessToken, createTribe, signupUser, unique, UNKNOWN_ID, type TestUser } from './factory.js';
import { gql, movableClock, ok, platformGet, sqlRows, startService, type TestService } from './support.js';

const CREATE = `mutation($input: CreatePersonalApiKeyInput!) { createPersonalApiKey(input: $input) { id name key keyPrefix scopes createdAt } }`;
const LIST = `{ me { personalApiKeys { id name keyPrefix scopes lastUsedAt revokedAt createdAt } } }`;
const REVOKE = `mutation($id: ID!) { revokePersonalApiKey(id: $id) { id revokedAt } }`;

interface Key {
  id: string;
  key: string;
  keyPrefix: string;
  scopes: string[];
  createdAt: string;
}

describe('personal API keys (spec 5.3)', () => {
  let t: TestService;
  const clock = movableClock();

  beforeAll(async () => {
    await buildConsole();
    t = await startService({}, clock.now);
  });
  afterAll(async () => {
    await t?.stop();
  });

  const createKey = async (user: TestUser, input: Record<string, unknown> = { name: `key ${unique()}` }): Promise<Key> =>
    ok(await gql(t, user, CREATE, { input })).createPersonalApiKey;
  const asKey = (key: string) => ({ authorization: `Bearer ${key}` });
  const me = (key: string) => t.api.get('/v1/auth/me').set(asKey(key));
  const keyRow = async (id: string) => (await sqlRows(t, sql`select * from personal_api_keys where id = ${id}`))[0];

  describe('GraphQL', () => {
    it('creates a key shown once (svc_pk_ + 43 base64url), read and write by default, listed under me without its text', async () => {
      const user = await signupUser(t);
      const created = await createKey(user, { name: '  CI deploys  ' });
      expect(created).toEqual({
        id: expect.any(String),
        name: 'CI deploys',
        key: expect.stringMatching(/^svc_pk_[A-Za-z0-9_-]{43}$/),
        keyPrefix: created.key.slice(0, 17),
        scopes: ['read', 'write'],
        createdAt: expect.any(String),
      });
      const { me: listed } = ok(await gql(t, user, LIST));
      expect(listed.personalApiKeys).toEqual([
        { id: created.id, name: 'CI deploys', keyPrefix: created.keyPrefix, scopes: ['read', 'write'], lastUsedAt: null, revokedAt: null, createdAt: created.createdAt },
      ]);
      expect(JSON.stringify(listed)).not.toContain(created.key);
      // Another user's keys are not visible through their profile.
      const other = await signupUser(t);
      const profile = ok(await gql(t, other, `query($u: String!) { user(username: $u) { personalApiKeys { id } } }`, { u: user.username }));
      expect(profile.user.personalApiKeys).toBeNull();
      expect(ok(await gql(t, other, LIST)).me.personalApiKeys).toEqual([]);
    });

    it('stores only the SHA-256 of the key and its 17-character prefix, never the key', async () => {
      const user = await signupUser(t);
      const created = await createKey(user);
      const row = await keyRow(created.id);
      expect(row.key_hash).toBe(createHash('sha256').update(created.key).digest('hex'));
      expect(row.key_prefix).toBe(created.key.slice(0, 17));
      expect(JSON.stringify(row)).not.toContain(created.key);
    });

    it('narrows a key to the scopes sent, and names the catalogue', async () => {
      const user = await signupUser(t);
      expect((await createKey(user, { name: 'reader', scopes: ['read', 'read'] })).scopes).toEqual(['read']);
      const catalogue = ok(await gql(t, user, '{ personalApiKeyScopes { name description } }')).personalApiKeyScopes;
      expect(catalogue.map((s: { name: string }) => s.name)).toEqual(['read', 'write']);
      expect(catalogue[0].description).toMatch(/GET/);
    });

    it('refuses a bad name or unknown scopes naming the field and the rule, and writes nothing', async () => {
      const user = await signupUser(t);
      const cases: Array<[Record<string, unknown>, string, RegExp]> = [
        [{ name: '   ' }, 'invalid_name', /^name: required, 1 to 60 characters/],
        [{ name: 'x'.repeat(61) }, 'invalid_name', /^name: 1 to 60 characters/],
        [{ name: 'ok', scopes: [] }, 'invalid_scopes', /^scopes: one or more of read, write/],
        [{ name: 'ok', scopes: ['read', 'admin'] }, 'invalid_scopes', /^scopes: unknown scope "admin"; one or more of read, write/],
      ];
      for (const [input, reason, message] of cases) {
        const out = await gql(t, user, CREATE, { input });
        expect([input, out.errors?.[0]?.extensions?.code, out.errors?.[0]?.extensions?.reason]).toEqual([input, 'BAD_USER_INPUT', reason]);
        expect(out.errors?.[0]?.message).toMatch(message);
      }
      expect(await sqlRows(t, sql`select id from personal_api_keys where user_id = ${user.id}`)).toEqual([]);
    });

    it('needs a signed-in user', async () => {
      const out = await gql(t, null, CREATE, { input: { name: 'x' } });
      expect(out.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    });

    it("revokes a key at once (the next request is 401) and keeps the row; another user's key is NOT_FOUND", async () => {
      const [user, other] = await Promise.all([signupUser(t), signupUser(t)]);
      const created = await createKey(user);
      expect((await me(created.key)).status).toBe(200);
      const stranger = await gql(t, other, REVOKE, { id: created.id });
      expect(stranger.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      expect((await me(created.key)).status).toBe(200);
      const revoked = ok(await gql(t, user, REVOKE, { id: created.id })).revokePersonalApiKey;
      expect(revoked).toEqual({ id: created.id, revokedAt: expect.any(String) });
      const res = await me(created.key);
      expect([res.status, res.body.error.code]).toEqual([401, 'unauthorized']);
      const again = ok(await gql(t, user, REVOKE, { id: created.id })).revokePersonalApiKey;
      expect(again.revokedAt).toBe(revoked.revokedAt);
      expect(ok(await gql(t, user, LIST)).me.personalApiKeys[0].revokedAt).toBe(revoked.revokedAt);
      expect((await gql(t, user, REVOKE, { id: UNKNOWN_ID })).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    });
  });

  describe('console account settings', () => {
    const page = (who?: TestUser) => {
      const req = t.api.get('/console/-/settings').set('accept', 'text/html');
      return who ? req.set('cookie', who.cookie) : req;
    };

    it('shows the sign-in page without a session and the keys page with one', async () => {
      const anonymous = await page();
      expect([anonymous.status, /data-page="signin"/.test(anonymous.text)]).toEqual([200, true]);
      const user = await signupUser(t);
      const res = await page(user);
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['content-security-policy']).toContain("script-src 'self'");
      expect(res.text).toMatch(/data-page="settings"/);
      expect(res.text).toContain('id="pkey-form"');
      expect(res.text).not.toMatch(/<script>|style=/);
      expect((await t.api.get('/console/assets/console.js')).text).toContain('/account/api-keys');
    });

    it('creates (shown once), lists and revokes keys with the session cookie, through the same rules as GraphQL', async () => {
      const user = await signupUser(t);
      const created = await t.api.post('/account/api-keys').set('cookie', user.cookie).send({ name: 'console key', scopes: ['read'] });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        ok: true,
        id: expect.any(String),
        name: 'console key',
        key: expect.stringMatching(/^svc_pk_[A-Za-z0-9_-]{43}$/),
        keyPrefix: created.body.key.slice(0, 17),
        scopes: ['read'],
        createdAt: expect.any(String),
      });
      const list = await t.api.get('/account/api-keys').set('cookie', user.cookie);
      expect(list.status).toBe(200);
      expect(list.body.keys).toEqual([expect.objectContaining({ id: created.body.id, keyPrefix: created.body.keyPrefix, scopes: ['read'], revokedAt: null })]);
      expect(list.body.availableScopes.map((s: { name: string }) => s.name)).toEqual(['read', 'write']);
      expect(JSON.stringify(list.body)).not.toContain(created.body.key);
      const refused = await t.api.post('/account/api-keys').set('cookie', user.cookie).send({ name: 'bad', scopes: ['root'] });
      expect([refused.status, refused.body.error]).toEqual([400, 'invalid_scopes']);
      const revoked = await t.api.delete(`/account/api-keys/${created.body.id}`).set('cookie', user.cookie);
      expect([revoked.status, revoked.body.ok, typeof revoked.body.revokedAt]).toEqual([200, true, 'string']);
      expect((await me(created.body.key)).status).toBe(401);
      expect((await t.api.delete(`/account/api-keys/${UNKNOWN_ID}`).set('cookie', user.cookie)).status).toBe(404);
    });

    it('takes only the session: no session is 401, a key cannot mint keys, a form of another site is refused', async () => {
      const user = await signupUser(t);
      const key = await createKey(user);
      expect((await t.api.get('/account/api-keys')).status).toBe(401);
      expect((await t.api.post('/account/api-keys').set(asKey(key.key)).send({ name: 'minted' })).status).toBe(401);
      const crossSite = await t.api.post('/account/api-keys').set('cookie', user.cookie).set('origin', 'https://evil.example').send({ name: 'csrf' });
      expect([crossSite.status, crossSite.body.error]).toEqual([403, 'forbidden_origin']);
      expect(await sqlRows(t, sql`select id from personal_api_keys where user_id = ${user.id}`)).toEqual([{ id: key.id }]);
    });
  });

  describe('on the resource API', () => {
    it("acts as its user: reads and writes what the user may, and is refused what the user may not", async () => {
      const [owner, stranger] = await Promise.all([signupUser(t), signupUser(t)]);
      const key = await createKey(owner);
      const who = await me(key.key);
      expect([who.status, who.body.data.id]).toEqual([200, owner.id]);
      const made = await t.api.post('/v1/communities').set(asKey(key.key)).send({ name: 'Key tribe', handle: `key-${unique()}` });
      expect(made.status).toBe(201);
      expect((await t.api.get(`/v1/communities/${made.body.data.id}`).set(asKey(key.key))).status).toBe(200);
      const strangerKey = await createKey(stranger);
      const patch = await t.api.patch(`/v1/communities/${made.body.data.id}`).set(asKey(strangerKey.key)).send({ name: 'Taken over' });
      expect([patch.status, patch.body.error.code]).toEqual([403, 'forbidden']);
    });

    it('is refused with 403 insufficient_scope, naming the scope and the rule, outside its scopes', async () => {
      const user = await signupUser(t);
      const reader = await createKey(user, { name: 'reader', scopes: ['read'] });
      const writer = await createKey(user, { name: 'writer', scopes: ['write'] });
      expect((await me(reader.key)).status).toBe(200);
      const write = await t.api.post('/v1/communities').set(asKey(reader.key)).send({ name: 'Nope', handle: `nope-${unique()}` });
      expect(write.status).toBe(403);
      expect(write.body.error).toEqual(expect.objectContaining({ code: 'insufficient_scope', details: { required_scope: 'write', key_scopes: ['read'] } }));
      expect(write.body.error.message).toBe('This personal API key lacks the write scope: POST, PUT, PATCH and DELETE need the write scope.');
      const read = await me(writer.key);
      expect([read.status, read.body.error.code, read.body.error.details.required_scope]).toEqual([403, 'insufficient_scope', 'read']);
      expect(read.body.error.message).toMatch(/GET and HEAD need the read scope/);
      expect((await t.api.post('/v1/communities').set(asKey(writer.key)).send({ name: 'Yes', handle: `yes-${unique()}` })).status).toBe(201);
    });

    it('uploads to /v1/media with the write scope, and a read-only key is 403 insufficient_scope', async () => {
      const user = await signupUser(t);
      const [reader, writer] = [await createKey(user, { name: 'r', scopes: ['read'] }), await createKey(user, { name: 'w', scopes: ['write'] })];
      const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#336699' } }).png().toBuffer();
      const upload = (key: string) => t.api.post('/v1/media').set(asKey(key)).field('kind', 'avatar').attach('file', png, 'a.png');
      const refused = await upload(reader.key);
      expect([refused.status, refused.body.error.code, refused.body.error.details.required_scope]).toEqual([403, 'insufficient_scope', 'write']);
      expect((await upload(writer.key)).status).toBe(201);
    });

    it('works beside access tokens; a malformed or unknown key is 401', async () => {
      const user = await signupUser(t);
      expect((await me(await accessToken(t, user))).status).toBe(200);
      const key = await createKey(user);
      const unknown = `svc_pk_${'A'.repeat(43)}`;
      const samePrefix = `${key.key.slice(0, 17)}${'B'.repeat(33)}`;
      for (const bad of [unknown, samePrefix, `${key.key}x`, key.key.slice(0, -1)]) expect([bad, (await me(bad)).status]).toEqual([bad, 401]);
    });

    it('stops at once when its user is suspended, works again when lifted, and is revoked when the account is deleted', async () => {
      const user = await signupUser(t);
      const key = await createKey(user);
      expect((await me(key.key)).status).toBe(200);
      await suspendAccount(t.deps, user.id, 'test', null);
      expect((await me(key.key)).status).toBe(401);
      await unsuspendAccount(t.deps, user.id);
      expect((await me(key.key)).status).toBe(200);
      await t.deps.database.db.transaction((tx) => deleteAccount(t.deps, tx, user.id));
      expect((await me(key.key)).status).toBe(401);
      expect(await sqlRows(t, sql`select revoked_at is not null as revoked from personal_api_keys where id = ${key.id}`)).toEqual([{ revoked: true }]);
    });

    it('revokeAllPersonalApiKeys (account erasure) stops every key of the user', async () => {
      const user = await signupUser(t);
      const [a, b] = [await createKey(user), await createKey(user)];
      expect(await revokeAllPersonalApiKeys(t.deps, user.id)).toBe(2);
      expect([(await me(a.key)).status, (await me(b.key)).status]).toEqual([401, 401]);
    });

    it('records its last use at most once a minute', async () => {
      const user = await signupUser(t);
      const key = await createKey(user);
      const lastUsed = async () =>
        (await sqlRows<{ ms: number | null }>(t, sql`select (extract(epoch from last_used_at) * 1000)::float8 as ms from personal_api_keys where id = ${key.id}`))[0].ms;
      expect(await lastUsed()).toBeNull();
      await me(key.key);
      const first = (await lastUsed())!;
      expect(Math.abs(first - clock.now().getTime())).toBeLessThan(5_000);
      clock.advance(30_000);
      await me(key.key);
      expect(await lastUsed()).toBe(first);
      clock.advance(31_000);
      await me(key.key);
      const moved = (await lastUsed())!;
      expect(moved - first).toBeGreaterThanOrEqual(60_000);
      expect(Date.parse(ok(await gql(t, user, LIST)).me.personalApiKeys[0].lastUsedAt)).toBe(moved);
    });
  });

  describe('elsewhere', () => {
    it('is 401 on the Platform API, anonymous on GraphQL, and nothing on the tribe control plane', async () => {
      const user = await signupUser(t);
      const tribe = await createTribe(t, user);
      const key = await createKey(user);
      const platform = await platformGet(t, '/v1/members', key.key);
      expect([platform.status, platform.body.error.type]).toEqual([401, 'unauthorized']);
      const graphql = await t.api.post('/graphql').set(asKey(key.key)).send({ query: '{ me { id } }' });
      expect(graphql.body.data.me).toBeNull();
      expect((await t.api.get(`/communities/${tribe.handle}/api-keys`).set(asKey(key.key))).status).toBe(401);
    });

    it('is censored in log lines wherever it appears', () => {
      const key = `svc_pk_${'C'.repeat(43)}`;
      const line = JSON.stringify({ msg: `called with Bearer ${key}`, url: `/x?k=${key}` });
      expect(censorCredentials(line)).toBe(JSON.stringify({ msg: 'called with Bearer svc_pk_[redacted]', url: '/x?k=svc_pk_[redacted]' }));
    });
  });

  describe('the per-user cap', () => {
    it(`holds at ${PERSONAL_API_KEYS_PER_USER} live keys under concurrent creates, with 409 personal_api_key_limit`, async () => {
      const user = await signupUser(t);
      const outs = await Promise.all(Array.from({ length: PERSONAL_API_KEYS_PER_USER + 3 }, (_, i) => gql(t, user, CREATE, { input: { name: `k${i}` } })));
      const made = outs.filter((o) => !o.errors);
      const refused = outs.filter((o) => o.errors);
      expect(made).toHaveLength(PERSONAL_API_KEYS_PER_USER);
      expect(refused.map((o) => [o.errors![0].extensions?.code, o.errors![0].extensions?.reason, o.errors![0].extensions?.details])).toEqual(
        Array(3).fill(['CONFLICT', 'personal_api_key_limit', { limit: PERSONAL_API_KEYS_PER_USER }]),
      );
      expect(await sqlRows(t, sql`select count(*)::int as n from personal_api_keys where user_id = ${user.id} and revoked_at is null`)).toEqual([{ n: 10 }]);
      const rest = await t.api.post('/account/api-keys').set('cookie', user.cookie).send({ name: 'one more' });
      expect([rest.status, rest.body.error]).toEqual([409, 'personal_api_key_limit']);
      ok(await gql(t, user, REVOKE, { id: made[0].data.createPersonalApiKey.id }));
      expect((await t.api.post('/account/api-keys').set('cookie', user.cookie).send({ name: 'after a revoke' })).status).toBe(201);
    });
  });
});
