// A tribe's settings and metadata (spec 2.6, issue 31): in the full community object of the resource API and in
// GraphQL; settings a read-only mirror of the switches set elsewhere, metadata a small JSON object the owner or admins
// set, validated (each refusal names the field and the rule, and changes nothing).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { crew, staffedTribe, unique, type Cast } from './factory.js';
import { bearer, failure, gql, ok, startService, type TestService } from './support.js';

const FULL = 'id isPublic metadata settings { communityId visibility joinPolicy defaultPostVisibility moderation { requireApproval newMemberPostLimit blockedWords blockedDomains } }';

describe('community settings and metadata', () => {
  let t: TestService;
  let cast: Cast;
  let s: Awaited<ReturnType<typeof staffedTribe>>;
  const path = () => `/v1/communities/${s.tribe.id}`;
  const metadataNow = async () => (await t.api.get(path()).set(bearer(s.owner))).body.data.metadata;

  beforeAll(async () => {
    t = await startService();
    cast = await crew(t);
    s = await staffedTribe(t, cast);
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
  });

  describe('read', () => {
    it('answers settings and metadata in the full object (GET) and not in lists; moderation only to moderators and above', async () => {
      const asOwner = await t.api.get(path()).set(bearer(s.owner));
      expect(asOwner.status).toBe(200);
      expect(asOwner.body.data).toMatchObject({
        id: s.tribe.id,
        is_public: true,
        metadata: {},
        settings: {
          visibility: 'public',
          join_policy: 'open',
          default_post_visibility: 'public',
          moderation: { require_approval: false, new_member_post_limit: t.deps.config.automod.newMemberPostLimit, blocked_words: [], blocked_domains: [] },
        },
      });
      expect((await t.api.get(path()).set(bearer(s.moderator))).body.data.settings.moderation).toEqual(asOwner.body.data.settings.moderation);
      expect((await t.api.get(path()).set(bearer(s.member))).body.data.settings).toEqual({
        visibility: 'public', join_policy: 'open', default_post_visibility: 'public', moderation: null,
      });
      const listed = await t.api.get('/v1/communities').set(bearer(s.owner)).query({ search: s.tribe.name });
      expect(listed.body.data[0].id).toBe(s.tribe.id);
      expect(listed.body.data[0]).not.toHaveProperty('settings');
      expect(listed.body.data[0]).not.toHaveProperty('metadata');
    });

    it('answers the same in GraphQL (anonymous: moderation null), and mirrors the switches where they are set', async () => {
      const anonymous = ok(await gql(t, null, `query($id: ID!){ community(id: $id){ ${FULL} } }`, { id: s.tribe.id })).community;
      expect(anonymous).toEqual({
        id: s.tribe.id, isPublic: true, metadata: {},
        settings: { communityId: s.tribe.id, visibility: 'public', joinPolicy: 'open', defaultPostVisibility: 'public', moderation: null },
      });
      const other = await staffedTribe(t, cast);
      ok(await gql(t, other.owner, 'mutation($c: ID!){ updateModerationSettings(communityId: $c, input: {requireApproval: true, newMemberPostLimit: 1}){ requireApproval } }', { c: other.tribe.id }));
      const patched = await t.api.patch(`/v1/communities/${other.tribe.id}`).set(bearer(other.owner)).send({ is_public: false });
      expect(patched.status).toBe(200);
      expect(patched.body.data.settings).toMatchObject({ visibility: 'private', join_policy: 'invite_only', moderation: { require_approval: true, new_member_post_limit: 1 } });
      const viaGraphql = ok(await gql(t, other.admin, `query($id: ID!){ community(id: $id){ ${FULL} } }`, { id: other.tribe.id })).community.settings;
      expect(viaGraphql).toMatchObject({ visibility: 'private', joinPolicy: 'invite_only', moderation: { requireApproval: true, newMemberPostLimit: 1 } });
    });
  });

  describe('write', () => {
    it('sets metadata through the resource API (owner) and GraphQL (admin), replacing it whole; {} clears it; create takes it too', async () => {
      const first = { crm_id: 'acct_42', 'plan.tier': 'gold', flags: { beta: true, limits: [1, 2] } };
      const res = await t.api.patch(path()).set(bearer(s.owner)).send({ metadata: first });
      expect(res.status).toBe(200);
      expect(res.body.data.metadata).toEqual(first);
      expect(await metadataNow()).toEqual(first);

      const second = { crm_id: 'acct_43' };
      const out = ok(await gql(t, s.admin, 'mutation($id: ID!, $m: JSON){ updateCommunity(id: $id, input: {metadata: $m}){ metadata } }', { id: s.tribe.id, m: second }));
      expect(out.updateCommunity.metadata).toEqual(second);
      // An inline literal works as a variable does.
      ok(await gql(t, s.admin, 'mutation($id: ID!){ updateCommunity(id: $id, input: {metadata: {source: "zapier", n: 2}}){ metadata } }', { id: s.tribe.id }));
      expect(await metadataNow()).toEqual({ source: 'zapier', n: 2 });

      expect((await t.api.patch(path()).set(bearer(s.owner)).send({ metadata: {} })).body.data.metadata).toEqual({});

      const created = await t.api.post('/v1/communities').set(bearer(s.owner)).send({ name: 'With metadata', handle: `md-${unique()}`, metadata: { source: 'import' } });
      expect(created.status).toBe(201);
      expect(created.body.data).toMatchObject({ metadata: { source: 'import' }, settings: { visibility: 'public', join_policy: 'open' } });
    });

    it('refuses metadata that breaks a rule with 400 invalid_input naming the field and the rule, and changes nothing', async () => {
      const kept = { kept: 'yes' };
      await t.api.patch(path()).set(bearer(s.owner)).send({ metadata: kept });
      const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]));
      const cases: Array<[unknown, string, string]> = [
        [['a'], 'metadata', 'metadata: must be a JSON object ({} clears it)'],
        [null, 'metadata', 'metadata: must be a JSON object ({} clears it)'],
        ['text', 'metadata', 'metadata: must be a JSON object ({} clears it)'],
        [tooMany, 'metadata', 'metadata: at most 50 keys (got 51)'],
        [{ 'bad key': 1 }, 'metadata.bad key', 'metadata.bad key: key must be 1 to 40 of A-Z a-z 0-9 _ . : -'],
        [{ ['k'.repeat(41)]: 1 }, `metadata.${'k'.repeat(41)}`, `metadata.${'k'.repeat(41)}: key must be 1 to 40 of A-Z a-z 0-9 _ . : -`],
        [{ a: { constructor: 1 } }, 'metadata.a.constructor', 'metadata.a.constructor: key constructor is reserved'],
        [{ a: { b: { c: {} } } }, 'metadata.a.b.c', 'metadata.a.b.c: nesting deeper than 3 levels (objects and arrays count)'],
        [{ a: [[['x']]] }, 'metadata.a.0.0', 'metadata.a.0.0: nesting deeper than 3 levels (objects and arrays count)'],
        [{ big: 'x'.repeat(4100) }, 'metadata', 'metadata: at most 4096 bytes serialised as JSON (got 4110)'],
      ];
      for (const [metadata, field, message] of cases) {
        const res = await t.api.patch(path()).set(bearer(s.owner)).send({ metadata });
        expect({ status: res.status, code: res.body.error?.code, message: res.body.error?.message, field: res.body.error?.details?.[0]?.field }).toEqual({
          status: 400, code: 'invalid_input', message, field,
        });
      }
      const viaGraphql = await gql(t, s.owner, 'mutation($id: ID!, $m: JSON){ updateCommunity(id: $id, input: {metadata: $m}){ id } }', { id: s.tribe.id, m: tooMany });
      expect(failure(viaGraphql)).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input' });
      expect(viaGraphql.errors![0].message).toBe('metadata: at most 50 keys (got 51)');
      expect(await metadataNow()).toEqual(kept);
    });

    it('lets only the owner and admins set metadata: a moderator, a member and an outsider are refused and nothing changes', async () => {
      const before = await metadataNow();
      for (const who of [s.moderator, s.member, s.outsider]) {
        const res = await t.api.patch(path()).set(bearer(who)).send({ metadata: { hacked: true } });
        expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 403, code: 'forbidden' });
        const out = await gql(t, who, 'mutation($id: ID!){ updateCommunity(id: $id, input: {metadata: {hacked: true}}){ id } }', { id: s.tribe.id });
        expect(failure(out).code).toBe('FORBIDDEN');
      }
      expect(await metadataNow()).toEqual(before);
    });
  });
});
