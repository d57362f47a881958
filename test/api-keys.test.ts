import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { createHash } from 'node:crypto';
import { accessToken, ALL_SCOPES, createKey, createTribe, join, setRole, signupUser, unique, type TestUser } from './factory.js';
import { gql, platformGet, sqlRows, startService, type TestService } from './support.js';
import { ISO, KEY_FORMAT, UNAUTHORIZED, UUID } from './expected.js';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

describe('API keys (control plane)', () => {
  let t: TestService;
  /** A mutable clock: tests move it to check lastUsedAt. */
  let now = new Date('2031-03-01T10:00:00.000Z');
  let owner: TestUser;
  let admin: TestUser;
  let moderator: TestUser;
  let member: TestUser;
  let outsider: TestUser;
  let tribe: { id: string; handle: string };
  let otherOwner: TestUser;
  let otherTribe: { id: string; handle: string };

  const path = (handle = tribe.handle) => `/communities/${handle}/api-keys`;
  const keyRows = (communityId: string) => sqlRows(t, sql`select * from api_keys where community_id = ${communityId} order by created_at, id`);

  beforeAll(async () => {
    t = await startService({}, () => new Date(now));
    [owner, admin, moderator, member, outsider, otherOwner] = await Promise.all(Array.from({ length: 6 }, () => signupUser(t)));
    tribe = await createTribe(t, owner);
    otherTribe = await createTribe(t, otherOwner);
    for (const u of [admin, moderator, member]) await join(t, u, tribe.handle);
    await setRole(t, owner, tribe.id, admin.id, 'admin');
    await setRole(t, owner, tribe.id, moderator.id, 'moderator');
  });
  afterAll(async () => {
    await t.stop();
  });

  describe('POST /communities/{handle}/api-keys', () => {
    it('creates a key shown once: svc_sk_ plus 43 base64url characters, keyPrefix its first 17', async () => {
      const res = await t.api.post(path()).set('cookie', owner.cookie).send({ name: 'CRM sync', scopes: ['members:read', 'orders:read'] });
      expect(res.status).toBe(201);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({
        ok: true,
        id: expect.stringMatching(UUID),
        name: 'CRM sync',
        key: expect.stringMatching(KEY_FORMAT),
        keyPrefix: res.body.key.slice(0, 17),
        scopes: ['members:read', 'orders:read'],
      });
      expect(res.body.keyPrefix).toMatch(/^svc_sk_[A-Za-z0-9_-]{10}$/);
      expect(Buffer.from(res.body.key.slice(7), 'base64url')).toHaveLength(32);
    });

    it('creates a different key every time', async () => {
      const a = await createKey(t, owner, tribe.handle);
      const b = await createKey(t, owner, tribe.handle);
      expect(a.key).not.toBe(b.key);
      expect(a.id).not.toBe(b.id);
    });

    it('stores only the SHA-256 of the key and its 17-character prefix, never the key', async () => {
      const created = await createKey(t, owner, tribe.handle, ['posts:read'], 'storage check');
      const [row] = await sqlRows(t, sql`select * from api_keys where id = ${created.id}`);
      expect(row).toMatchObject({
        community_id: tribe.id,
        name: 'storage check',
        key_prefix: created.key.slice(0, 17),
        key_hash: sha256(created.key),
        scopes: ['posts:read'],
        created_by: owner.id,
        last_used_at: null,
        revoked_at: null,
      });
      expect(Object.keys(row).sort()).toEqual(
        ['community_id', 'created_at', 'created_by', 'id', 'key_hash', 'key_prefix', 'last_used_at', 'name', 'revoked_at', 'scopes'].sort(),
      );
      const [{ dump }] = await sqlRows<{ dump: string }>(t, sql`select row_to_json(k)::text as dump from api_keys k where id = ${created.id}`);
      expect(dump).not.toContain(created.key);
      expect(dump).not.toContain(created.key.slice(17));
    });

    it('trims the name and cuts it to 60 characters', async () => {
      const long = `${'n'.repeat(59)}XYZ`;
      const res = await t.api.post(path()).set('cookie', owner.cookie).send({ name: `   ${long}  `, scopes: ['posts:read'] });
      expect(res.status).toBe(201);
      expect(res.body.name).toBe(long.slice(0, 60));
      expect(res.body.name).toHaveLength(60);
      const trimmed = await t.api.post(path()).set('cookie', owner.cookie).send({ name: '  Zapier \n', scopes: ['posts:read'] });
      expect(trimmed.body.name).toBe('Zapier');
      const [row] = await sqlRows(t, sql`select name from api_keys where id = ${res.body.id}`);
      expect(row.name).toBe(long.slice(0, 60));
    });

    it('cuts the name by characters, never inside one', async () => {
      const res = await t.api.post(path()).set('cookie', owner.cookie).send({ name: '🔑'.repeat(70), scopes: ['posts:read'] });
      expect(res.status).toBe(201);
      expect(res.body.name).toBe('🔑'.repeat(60));
    });

    it.each([
      ['empty', ''],
      ['blank', ' \t\n '],
      ['missing', undefined],
      ['not a string', 42],
      ['null', null],
    ])('answers 400 invalid_name when the name is %s, and stores nothing', async (_case, name) => {
      const before = (await keyRows(tribe.id)).length;
      const res = await t.api.post(path()).set('cookie', owner.cookie).send({ name, scopes: ['members:read'] });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_name', message: expect.any(String), requestId: expect.any(String) });
      expect(await keyRows(tribe.id)).toHaveLength(before);
    });

    it('drops unknown scopes and duplicates, and the response shows what was kept', async () => {
      const res = await t.api
        .post(path())
        .set('cookie', owner.cookie)
        .send({ name: 'typo', scopes: ['members:read', 'member:read', 'members:read', 'Posts:Read', 'posts:read', 7, 'orders:write'] });
      expect(res.status).toBe(201);
      expect(res.body.scopes).toEqual(['members:read', 'posts:read']);
      const [row] = await sqlRows(t, sql`select scopes from api_keys where id = ${res.body.id}`);
      expect(row.scopes).toEqual(['members:read', 'posts:read']);
    });

    it('accepts every scope of the catalogue, community:read included', async () => {
      const res = await t.api.post(path()).set('cookie', owner.cookie).send({ name: 'all', scopes: ALL_SCOPES });
      expect(res.status).toBe(201);
      expect(res.body.scopes).toEqual(ALL_SCOPES);
    });

    it.each([
      ['empty', []],
      ['all unknown', ['members:write', 'admin']],
      ['missing', undefined],
      ['a string instead of an array', 'members:read'],
      ['null', null],
    ])('answers 400 no_scopes when the scopes are %s, and stores nothing', async (_case, scopes) => {
      const before = (await keyRows(tribe.id)).length;
      const res = await t.api.post(path()).set('cookie', owner.cookie).send({ name: 'no scopes', scopes });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'no_scopes', message: expect.any(String), requestId: expect.any(String) });
      expect(await keyRows(tribe.id)).toHaveLength(before);
    });

    it('lets an admin create a key', async () => {
      const res = await t.api.post(path()).set('cookie', admin.cookie).send({ name: 'by admin', scopes: ['posts:read'] });
      expect(res.status).toBe(201);
      const [row] = await sqlRows(t, sql`select created_by, community_id from api_keys where id = ${res.body.id}`);
      expect(row).toEqual({ created_by: admin.id, community_id: tribe.id });
    });

    it.each([
      ['a member', () => member],
      ['a moderator', () => moderator],
      ['someone outside the tribe', () => outsider],
      ['the owner of another tribe', () => otherOwner],
    ])('answers 403 forbidden to %s and stores nothing', async (_who, who) => {
      const before = (await keyRows(tribe.id)).length;
      const res = await t.api.post(path()).set('cookie', who().cookie).send({ name: 'x', scopes: ['members:read'] });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'forbidden', message: expect.any(String), requestId: expect.any(String) });
      expect(await keyRows(tribe.id)).toHaveLength(before);
    });

    it('checks the role before validating the body', async () => {
      const res = await t.api.post(path()).set('cookie', member.cookie).send({ name: '', scopes: [] });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'forbidden', message: expect.any(String), requestId: expect.any(String) });
    });

    it('answers 401 unauthorized without a session', async () => {
      const res = await t.api.post(path()).send({ name: 'x', scopes: ['members:read'] });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized', message: expect.any(String), requestId: expect.any(String) });
    });

    it('answers 404 not_found for an unknown tribe', async () => {
      const res = await t.api.post(path(`no-such-${unique()}`)).set('cookie', owner.cookie).send({ name: 'x', scopes: ['members:read'] });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not_found', message: expect.any(String), requestId: expect.any(String) });
    });

    it('is not authenticated by a Platform key or a resource-API access token', async () => {
      const key = await createKey(t, owner, tribe.handle);
      const token = await accessToken(t, owner);
      for (const credential of [key.key, token]) {
        const res = await t.api.post(path()).set('authorization', `Bearer ${credential}`).send({ name: 'x', scopes: ['members:read'] });
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ error: 'unauthorized', message: expect.any(String), requestId: expect.any(String) });
      }
    });
  });

  describe('GET /communities/{handle}/api-keys', () => {
    it('lists the keys newest first with availableScopes, never the key text, revoked keys included', async () => {
      const h = await createTribe(t, owner);
      now = new Date(now.getTime() + 1000);
      const first = await createKey(t, owner, h.handle, ['members:read'], 'first');
      now = new Date(now.getTime() + 1000);
      const second = await createKey(t, owner, h.handle, ['posts:read', 'events:read'], 'second');
      const revoked = await t.api.delete(`${path(h.handle)}/${first.id}`).set('cookie', owner.cookie);
      expect(revoked.status).toBe(200);

      const res = await t.api.get(path(h.handle)).set('cookie', owner.cookie);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        keys: [
          {
            id: second.id,
            name: 'second',
            keyPrefix: second.keyPrefix,
            scopes: ['posts:read', 'events:read'],
            lastUsedAt: null,
            revokedAt: null,
            createdAt: expect.stringMatching(ISO),
          },
          {
            id: first.id,
            name: 'first',
            keyPrefix: first.keyPrefix,
            scopes: ['members:read'],
            lastUsedAt: null,
            revokedAt: expect.stringMatching(ISO),
            createdAt: expect.stringMatching(ISO),
          },
        ],
        availableScopes: ALL_SCOPES,
      });
      expect(JSON.stringify(res.body)).not.toContain(first.key);
      expect(JSON.stringify(res.body)).not.toContain(second.key);
      expect(res.body.keys[0].createdAt > res.body.keys[1].createdAt).toBe(true);
    });

    it("shows only the tribe's own keys", async () => {
      const mine = await createKey(t, owner, tribe.handle);
      const theirs = await createKey(t, otherOwner, otherTribe.handle);
      const res = await t.api.get(path()).set('cookie', owner.cookie);
      const ids = res.body.keys.map((k: { id: string }) => k.id);
      expect(ids).toContain(mine.id);
      expect(ids).not.toContain(theirs.id);
      const other = await t.api.get(path(otherTribe.handle)).set('cookie', otherOwner.cookie);
      expect(other.body.keys.map((k: { id: string }) => k.id)).toEqual([theirs.id]);
    });

    it('lets an admin list the keys', async () => {
      const res = await t.api.get(path()).set('cookie', admin.cookie);
      expect(res.status).toBe(200);
      expect(res.body.availableScopes).toEqual(ALL_SCOPES);
    });

    it.each([
      ['a member', () => member, 403, 'forbidden'],
      ['a moderator', () => moderator, 403, 'forbidden'],
      ['someone outside the tribe', () => outsider, 403, 'forbidden'],
      ['nobody signed in', () => null, 401, 'unauthorized'],
    ])('answers %s with the flat error', async (_who, who, status, code) => {
      const req = t.api.get(path());
      const user = who();
      if (user) req.set('cookie', user.cookie);
      const res = await req;
      expect(res.status).toBe(status);
      expect(res.body).toEqual({ error: code, message: expect.any(String), requestId: expect.any(String) });
    });

    it('answers 404 not_found for an unknown tribe', async () => {
      const res = await t.api.get(path(`no-such-${unique()}`)).set('cookie', owner.cookie);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not_found', message: expect.any(String), requestId: expect.any(String) });
    });
  });

  describe('DELETE /communities/{handle}/api-keys/{id}', () => {
    it('revokes at once: the very next Platform request with the key gets 401', async () => {
      const key = await createKey(t, owner, tribe.handle);
      expect((await platformGet(t, '/v1/me', key.key)).status).toBe(200);
      const res = await t.api.delete(`${path()}/${key.id}`).set('cookie', owner.cookie);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ok: true, id: key.id, revokedAt: now.toISOString() });
      const after = await platformGet(t, '/v1/me', key.key);
      expect(after.status).toBe(401);
      expect(after.body).toEqual(UNAUTHORIZED);
      const members = await platformGet(t, '/v1/members', key.key);
      expect(members.status).toBe(401);
    });

    it('is irreversible and keeps the row for audit; revoking again keeps the first time', async () => {
      const key = await createKey(t, owner, tribe.handle);
      const first = await t.api.delete(`${path()}/${key.id}`).set('cookie', owner.cookie);
      const revokedAt = first.body.revokedAt;
      now = new Date(now.getTime() + 5 * 60_000);
      const again = await t.api.delete(`${path()}/${key.id}`).set('cookie', owner.cookie);
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ ok: true, id: key.id, revokedAt });
      const [row] = await sqlRows(t, sql`select revoked_at, key_hash from api_keys where id = ${key.id}`);
      expect(new Date(row.revoked_at).toISOString()).toBe(revokedAt);
      expect(row.key_hash).toBe(sha256(key.key));
      expect((await platformGet(t, '/v1/me', key.key)).status).toBe(401);
    });

    it('leaves the other keys of the tribe working', async () => {
      const a = await createKey(t, owner, tribe.handle);
      const b = await createKey(t, owner, tribe.handle);
      await t.api.delete(`${path()}/${a.id}`).set('cookie', owner.cookie);
      expect((await platformGet(t, '/v1/me', a.key)).status).toBe(401);
      expect((await platformGet(t, '/v1/me', b.key)).status).toBe(200);
    });

    it('answers 404 not_found for a key of another tribe, and that key keeps working', async () => {
      const theirs = await createKey(t, otherOwner, otherTribe.handle);
      const res = await t.api.delete(`${path()}/${theirs.id}`).set('cookie', owner.cookie);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not_found', message: expect.any(String), requestId: expect.any(String) });
      const [row] = await sqlRows(t, sql`select revoked_at from api_keys where id = ${theirs.id}`);
      expect(row.revoked_at).toBeNull();
      expect((await platformGet(t, '/v1/me', theirs.key)).status).toBe(200);
    });

    it.each([['an unknown id', '00000000-0000-4000-8000-000000000000'], ['a malformed id', 'not-a-uuid']])(
      'answers 404 not_found for %s',
      async (_case, id) => {
        const res = await t.api.delete(`${path()}/${id}`).set('cookie', owner.cookie);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ error: 'not_found', message: expect.any(String), requestId: expect.any(String) });
      },
    );

    it('lets an admin revoke', async () => {
      const key = await createKey(t, owner, tribe.handle);
      const res = await t.api.delete(`${path()}/${key.id}`).set('cookie', admin.cookie);
      expect(res.status).toBe(200);
      expect((await platformGet(t, '/v1/me', key.key)).status).toBe(401);
    });

    it.each([
      ['a member', () => member, 403, 'forbidden'],
      ['a moderator', () => moderator, 403, 'forbidden'],
      ['someone outside the tribe', () => outsider, 403, 'forbidden'],
      ['nobody signed in', () => null, 401, 'unauthorized'],
    ])('answers %s with the flat error and keeps the key working', async (_who, who, status, code) => {
      const key = await createKey(t, owner, tribe.handle);
      const req = t.api.delete(`${path()}/${key.id}`);
      const user = who();
      if (user) req.set('cookie', user.cookie);
      const res = await req;
      expect(res.status).toBe(status);
      expect(res.body).toEqual({ error: code, message: expect.any(String), requestId: expect.any(String) });
      expect((await platformGet(t, '/v1/me', key.key)).status).toBe(200);
    });

    it('answers 404 not_found for an unknown tribe', async () => {
      const key = await createKey(t, owner, tribe.handle);
      const res = await t.api.delete(`${path(`no-such-${unique()}`)}/${key.id}`).set('cookie', owner.cookie);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not_found', message: expect.any(String), requestId: expect.any(String) });
    });
  });

  describe('lastUsedAt', () => {
    const lastUsed = async (id: string) => {
      const [row] = await sqlRows(t, sql`select last_used_at from api_keys where id = ${id}`);
      return row.last_used_at ? new Date(row.last_used_at).toISOString() : null;
    };

    it('is set on first use and moves at most once per minute, without a write per request', async () => {
      const key = await createKey(t, owner, tribe.handle);
      expect(await lastUsed(key.id)).toBeNull();
      const start = new Date(now.getTime());
      await platformGet(t, '/v1/me', key.key).expect(200);
      expect(await lastUsed(key.id)).toBe(start.toISOString());

      // Within the minute: no write at all (no UPDATE statement is even sent).
      now = new Date(start.getTime() + 30_000);
      const statements = t.deps.database.stats.statements;
      await platformGet(t, '/v1/me', key.key).expect(200);
      const perRequest = t.deps.database.stats.statements - statements;
      await platformGet(t, '/v1/me', key.key).expect(200);
      expect(t.deps.database.stats.statements - statements).toBe(2 * perRequest);
      expect(await lastUsed(key.id)).toBe(start.toISOString());

      now = new Date(start.getTime() + 59_999);
      await platformGet(t, '/v1/me', key.key).expect(200);
      expect(await lastUsed(key.id)).toBe(start.toISOString());

      // A minute later: moves once.
      now = new Date(start.getTime() + 60_000);
      await platformGet(t, '/v1/me', key.key).expect(200);
      expect(await lastUsed(key.id)).toBe(now.toISOString());
    });

    it('is shown in the list', async () => {
      const key = await createKey(t, owner, tribe.handle);
      await platformGet(t, '/v1/me', key.key).expect(200);
      const res = await t.api.get(path()).set('cookie', owner.cookie);
      const listed = res.body.keys.find((k: { id: string }) => k.id === key.id);
      expect(listed.lastUsedAt).toBe(now.toISOString());
    });

    it('is not touched by a failed authentication or by a revoked key', async () => {
      const key = await createKey(t, owner, tribe.handle);
      await t.api.delete(`${path()}/${key.id}`).set('cookie', owner.cookie);
      await platformGet(t, '/v1/me', key.key).expect(401);
      expect(await lastUsed(key.id)).toBeNull();
    });
  });

  describe('GraphQL', () => {
    const CREATE = 'mutation($h: String!, $i: CreateApiKeyInput!){ createApiKey(handle: $h, input: $i){ id name key keyPrefix scopes } }';
    const LIST = 'query($h: String!){ apiKeys(handle: $h){ keys { id name keyPrefix scopes lastUsedAt revokedAt createdAt } availableScopes } }';
    const REVOKE = 'mutation($h: String!, $id: ID!){ revokeApiKey(handle: $h, id: $id){ id revokedAt } }';

    it('creates, lists and revokes through the same service as REST', async () => {
      const created = await gql(t, owner, CREATE, { h: tribe.handle, i: { name: '  from graphql ', scopes: ['events:read', 'events:read', 'nope'] } });
      expect(created.errors).toBeUndefined();
      const k = created.data.createApiKey;
      expect(k).toEqual({ id: expect.stringMatching(UUID), name: 'from graphql', key: expect.stringMatching(KEY_FORMAT), keyPrefix: k.key.slice(0, 17), scopes: ['events:read'] });

      const listed = await gql(t, admin, LIST, { h: tribe.handle });
      expect(listed.data.apiKeys.availableScopes).toEqual(ALL_SCOPES);
      expect(listed.data.apiKeys.keys.find((x: { id: string }) => x.id === k.id)).toMatchObject({ name: 'from graphql', revokedAt: null });
      const rest = await t.api.get(path()).set('cookie', owner.cookie);
      expect(rest.body.keys.find((x: { id: string }) => x.id === k.id)).toMatchObject({ name: 'from graphql', scopes: ['events:read'] });

      const revoked = await gql(t, owner, REVOKE, { h: tribe.handle, id: k.id });
      expect(revoked.data.revokeApiKey).toEqual({ id: k.id, revokedAt: now.toISOString() });
      expect((await platformGet(t, '/v1/me', k.key)).status).toBe(401);
    });

    it('applies the same rules and codes', async () => {
      const code = (out: Awaited<ReturnType<typeof gql>>) => out.errors?.[0]?.extensions?.reason;
      expect(code(await gql(t, owner, CREATE, { h: tribe.handle, i: { name: ' ', scopes: ['members:read'] } }))).toBe('invalid_name');
      expect(code(await gql(t, owner, CREATE, { h: tribe.handle, i: { name: 'x', scopes: ['x'] } }))).toBe('no_scopes');
      expect(code(await gql(t, member, CREATE, { h: tribe.handle, i: { name: 'x', scopes: ['members:read'] } }))).toBe('forbidden');
      expect(code(await gql(t, null, LIST, { h: tribe.handle }))).toBe('unauthorized');
      expect(code(await gql(t, owner, LIST, { h: `no-such-${unique()}` }))).toBe('not_found');
      const theirs = await createKey(t, otherOwner, otherTribe.handle);
      expect(code(await gql(t, owner, REVOKE, { h: tribe.handle, id: theirs.id }))).toBe('not_found');
    });
  });
});
