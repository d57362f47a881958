import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import express from 'express';
import { SignJWT, exportSPKI, generateKeyPair } from 'jose';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { identityWebhooksRouter } from '../rest-facade/src/application/identity-webhooks.js';
import { createPost, createTribe, signupUser, unique } from './factory.js';
import { countOf, gql, movableClock, sqlRows, startService, type TestService } from './support.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const OTHER_SECRET = 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=';
const PATH = '/webhooks/identity';

type Headers = Record<string, string>;
interface Delivery {
  /** The message id (`webhook-id`); a new one by default. */
  id?: string;
  /** Unix seconds signed and sent; now by default. */
  t?: number;
  secret?: string;
  /** `svix` sends the svix-* names instead of webhook-*. */
  names?: 'webhook' | 'svix';
  /** Changes the signed headers before sending (a header set to undefined is left out). */
  headers?: (h: Headers) => Record<string, string | undefined>;
  /** Sent instead of the signed body. */
  body?: string;
}

/** A Clerk-shaped user object. */
function clerkUser(id: string, fields: { email?: string | null; verified?: boolean; first?: string; last?: string; username?: string | null; image?: string | null } = {}) {
  const emailId = `idn_${unique()}`;
  return {
    id,
    object: 'user',
    email_addresses:
      fields.email === null
        ? []
        : [
            { id: `idn_${unique()}`, email_address: `secondary_${unique()}@example.com`, verification: { status: 'verified' } },
            { id: emailId, email_address: fields.email ?? `idp_${unique()}@example.com`, verification: { status: fields.verified === false ? 'unverified' : 'verified' } },
          ],
    primary_email_address_id: fields.email === null ? null : emailId,
    first_name: fields.first ?? 'Ada',
    last_name: fields.last ?? 'Lovelace',
    username: fields.username === undefined ? null : fields.username,
    image_url: fields.image === undefined ? 'https://img.example.com/ada.png' : fields.image,
  };
}

/** Inbound identity-provider webhooks: `POST /webhooks/identity` (docs/identity-webhooks.md). */
describe('identity webhooks', () => {
  let t: TestService;
  let privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  const clock = movableClock();
  const nowSeconds = () => Math.floor(clock.now().getTime() / 1000);

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256', { extractable: true });
    privateKey = pair.privateKey;
    t = await startService({ IDP_WEBHOOK_SECRET: SECRET, IDP_JWT_PUBLIC_KEY: await exportSPKI(pair.publicKey) }, clock.now);
  });
  afterAll(async () => {
    await t.stop();
  });

  /** The signature headers the official `standardwebhooks` library makes for `raw`. */
  function signedHeaders(raw: string, o: Delivery): Headers {
    const id = o.id ?? `msg_${unique()}${unique()}`;
    const ts = o.t ?? nowSeconds();
    const signature = new Webhook(o.secret ?? SECRET).sign(id, new Date(ts * 1000), raw);
    const p = o.names ?? 'webhook';
    return { [`${p}-id`]: id, [`${p}-timestamp`]: String(ts), [`${p}-signature`]: signature };
  }
  /** POSTs `event` (an object is serialised once; a string is sent byte for byte), signed. */
  function deliver(event: unknown, o: Delivery = {}, target: express.Express | undefined = undefined) {
    const raw = typeof event === 'string' ? event : JSON.stringify(event);
    const signed = signedHeaders(raw, o);
    const headers = o.headers ? o.headers(signed) : signed;
    const req = (target ? request(target) : t.api).post(PATH).set('content-type', 'application/json');
    for (const [name, value] of Object.entries(headers)) if (value !== undefined) req.set(name, value);
    return req.send(o.body ?? raw);
  }
  const event = (type: string, data: Record<string, unknown>) => ({ type, object: 'event', timestamp: clock.now().getTime(), data });
  const userRow = async (subject: string) =>
    (
      await sqlRows(
        t,
        sql`select id, email, username, display_name, avatar_url, password_hash, (email_verified_at is not null) as verified, deleted_at from users where idp_subject = ${subject}`,
      )
    )[0];
  const messages = (id: string) => countOf(t, sql`select count(*)::int as n from idp_webhook_messages where message_id = ${id}`);
  const idpToken = (sub: string, email: string) =>
    new SignJWT({ email, email_verified: true, name: 'From token' }).setProtectedHeader({ alg: 'RS256' }).setSubject(sub).setIssuedAt().setExpirationTime('10m').sign(privateKey);
  const received = { received: true };
  /** A flat Application API refusal as the provider's delivery log shows it. */
  const refusal = (error: string, message: string) => ({ error, message, requestId: expect.any(String) });
  const MISSING = 'webhook-id, webhook-timestamp and webhook-signature (or svix-id, svix-timestamp and svix-signature) are required.';
  const STALE = "webhook-timestamp: must be within 300 seconds of the server's clock.";
  const NO_MATCH = 'webhook-signature: no v1 signature matches the body signed with IDP_WEBHOOK_SECRET.';
  const NOT_EVENT = 'body: must be a JSON event {type, data}.';
  const EMAIL_TAKEN = 'data: the address is registered here by another account that cannot be linked (see docs/identity-webhooks.md).';

  describe('user.created', () => {
    it('provisions an account from a Clerk user (primary address, name, avatar, username) that signs in with __session', async () => {
      const sub = `user_${unique()}`;
      const email = `Ada_${unique()}@Example.com`;
      const res = await deliver(event('user.created', clerkUser(sub, { email, username: 'ada_lovelace' })));
      expect(res.status).toBe(200);
      expect(res.body).toEqual(received);
      const row = await userRow(sub);
      expect(row).toEqual({
        id: expect.any(String),
        email,
        username: expect.stringMatching(/^ada_lovelace(_[a-z0-9]{6})?$/),
        display_name: 'Ada Lovelace',
        avatar_url: 'https://img.example.com/ada.png',
        password_hash: null,
        verified: true,
        deleted_at: null,
      });
      const me = await t.api.get('/auth/me').set('cookie', `__session=${await idpToken(sub, email)}`);
      expect(me.status).toBe(200);
      expect(me.body.user).toMatchObject({ id: row.id, email, displayName: 'Ada Lovelace' });
    });

    it.each([
      ['an unsafe username', { username: '<b>Ada</b> Lovelace!' }, /^_b_ada__b__lovelace_(_[a-z0-9]{6})?$/],
      ['no username (the address local part)', { username: null, email: `Grace.Hopper.${unique()}@example.com` }, /^grace_hopper_[a-z0-9]{6,}/],
      ['a username of two characters', { username: 'ab' }, /^user(_[a-z0-9]{6})?$/],
    ])('derives a valid username from %s', async (_label, fields, pattern) => {
      const sub = `user_${unique()}`;
      expect((await deliver(event('user.created', clerkUser(sub, fields)))).status).toBe(200);
      const row = await userRow(sub);
      expect(row.username).toMatch(/^[a-z0-9_]{3,30}$/);
      expect(row.username).toMatch(pattern);
    });

    it('gives a taken username a suffix, and reads OpenID Connect claim names too', async () => {
      const taken = await signupUser(t);
      const sub = `oidc|${unique()}`;
      const email = `oidc_${unique()}@example.com`;
      const res = await deliver(event('user.created', { id: sub, email, email_verified: true, name: 'Oidc Person', preferred_username: taken.username, picture: 'https://img.example.com/o.png' }));
      expect(res.status).toBe(200);
      expect(await userRow(sub)).toMatchObject({ email, display_name: 'Oidc Person', avatar_url: 'https://img.example.com/o.png', verified: true });
      expect((await userRow(sub)).username).toMatch(new RegExp(`^${taken.username.slice(0, 20)}_[a-z0-9]{6}$`));
    });

    it('is idempotent: another message for the same user, and three simultaneous deliveries, make one account', async () => {
      const sub = `user_${unique()}`;
      const data = clerkUser(sub);
      const results = await Promise.all([0, 1, 2].map(() => deliver(event('user.created', data), { id: 'msg_same_' + sub })));
      expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
      expect((await deliver(event('user.created', { ...data, first_name: 'Other' }))).status).toBe(200);
      expect(await countOf(t, sql`select count(*)::int as n from users where idp_subject = ${sub}`)).toBe(1);
      expect((await userRow(sub)).display_name).toBe('Ada Lovelace');
    });

    it('provisions users created at once with one username (each their own, distinct) and one user told at once by several messages (one account)', async () => {
      const username = `same_${unique()}`.slice(0, 20);
      const subs = Array.from({ length: 6 }, () => `user_${unique()}`);
      const together = await Promise.all(subs.map((sub) => deliver(event('user.created', clerkUser(sub, { username })))));
      expect(together.map((r) => [r.status, r.body])).toEqual(subs.map(() => [200, received]));
      const names = await Promise.all(subs.map(async (sub) => (await userRow(sub)).username as string));
      expect(new Set(names).size).toBe(subs.length);
      for (const name of names) expect(name).toMatch(new RegExp(`^${username}(_[a-z0-9]{6})?$`));

      const sub = `user_${unique()}`;
      const data = clerkUser(sub);
      const ids = [0, 1, 2].map((i) => `msg_${i}_${sub}`);
      const told = await Promise.all(ids.map((id) => deliver(event('user.created', data), { id })));
      expect(told.map((r) => [r.status, r.body])).toEqual(ids.map(() => [200, received]));
      expect(await countOf(t, sql`select count(*)::int as n from users where idp_subject = ${sub}`)).toBe(1);
      for (const id of ids) expect(await messages(id)).toBe(1);
    });

    it('links a password account whose address is verified here; answers 409 email_taken for one whose address is not, and writes nothing', async () => {
      const verified = await signupUser(t);
      await sqlRows(t, sql`update users set email_verified_at = now() where id = ${verified.id}`); // as verifyEmail does
      const sub = `user_${unique()}`;
      expect((await deliver(event('user.created', clerkUser(sub, { email: verified.email.toUpperCase() })))).status).toBe(200);
      expect(await userRow(sub)).toMatchObject({ id: verified.id, email: verified.email, password_hash: expect.any(String) });

      const unverified = await signupUser(t);
      const other = `user_${unique()}`;
      const id = `msg_${unique()}`;
      const res = await deliver(event('user.created', clerkUser(other, { email: unverified.email })), { id });
      expect(res.status).toBe(409);
      expect(res.body).toEqual(refusal('email_taken', EMAIL_TAKEN));
      expect(await userRow(other)).toBeUndefined();
      expect(await messages(id)).toBe(0); // the provider's retry is processed in full
    });

    it('answers 400 invalid_payload for a user without an email address, and writes nothing', async () => {
      const sub = `user_${unique()}`;
      const id = `msg_${unique()}`;
      const res = await deliver(event('user.created', clerkUser(sub, { email: null })), { id });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal('invalid_payload', 'data.email_addresses: user.created needs a valid email address.'));
      expect(await userRow(sub)).toBeUndefined();
      expect(await messages(id)).toBe(0);
    });
  });

  describe('user.updated', () => {
    it('changes the address, name and avatar, and a replayed older message changes nothing', async () => {
      const sub = `user_${unique()}`;
      expect((await deliver(event('user.created', clerkUser(sub)))).status).toBe(200);
      const before = await userRow(sub);
      const email = `new_${unique()}@example.com`;
      const first = { id: `msg_${unique()}` };
      expect((await deliver(event('user.updated', clerkUser(sub, { email, first: 'Augusta', last: 'King', image: 'https://img.example.com/a.png' })), first)).status).toBe(200);
      const second = await deliver(event('user.updated', clerkUser(sub, { email, first: 'Ada', last: 'King', image: null })));
      expect(second.status).toBe(200);
      const replay = await deliver(event('user.updated', clerkUser(sub, { email, first: 'Augusta', last: 'King', image: 'https://img.example.com/a.png' })), first);
      expect(replay.status).toBe(200);
      expect(replay.body).toEqual(received);
      expect(await userRow(sub)).toEqual({ ...before, email, display_name: 'Ada King', avatar_url: null, verified: true });
      const profile = await gql(t, null, 'query($u: String!){ user(username: $u){ displayName avatarUrl } }', { u: before.username });
      expect(profile.data?.user).toEqual({ displayName: 'Ada King', avatarUrl: null });
    });

    it('keeps fields that break the rules, and answers 409 email_taken for an address another account holds', async () => {
      const sub = `user_${unique()}`;
      expect((await deliver(event('user.created', clerkUser(sub)))).status).toBe(200);
      const before = await userRow(sub);
      expect((await deliver(event('user.updated', clerkUser(sub, { email: before.email, first: '\u202e', last: '', image: 'javascript:alert(1)' })))).status).toBe(200);
      expect(await userRow(sub)).toEqual({ ...before, avatar_url: null }); // a refused avatar is no avatar; the name stays
      const holder = await signupUser(t);
      const res = await deliver(event('user.updated', clerkUser(sub, { email: holder.email })));
      expect(res.status).toBe(409);
      expect(res.body).toEqual(refusal('email_taken', EMAIL_TAKEN));
      expect((await userRow(sub)).email).toBe(before.email);
    });

    it('acknowledges an update of a user unknown here and provisions nothing', async () => {
      const sub = `user_${unique()}`;
      expect((await deliver(event('user.updated', clerkUser(sub)))).body).toEqual(received);
      expect(await userRow(sub)).toBeUndefined();
    });
  });

  describe('user.deleted', () => {
    it('revokes every credential at once, erases the personal data, keeps the post under "Deleted user", and a replay changes nothing', async () => {
      const user = await signupUser(t);
      await sqlRows(t, sql`update users set email_verified_at = now(), bio = 'about me', location = 'London' where id = ${user.id}`);
      const sub = `user_${unique()}`;
      expect((await deliver(event('user.created', clerkUser(sub, { email: user.email })))).status).toBe(200);
      const login = await t.api.post('/v1/auth/login').send({ email: user.email, password: user.password });
      const { access_token: accessToken, refresh_token: refreshToken } = login.body.data;
      const tribe = await createTribe(t, user);
      const post = await createPost(t, user, tribe.id, { content: '<p>kept after deletion</p>' });
      await sqlRows(t, sql`insert into mail_outbox (kind, to_address, subject, text_body) values ('digest', ${user.email}, 'queued', 'x')`);
      const personalKey = (await t.api.post('/account/api-keys').set('cookie', user.cookie).send({ name: 'integration' })).body.key as string;
      expect((await t.api.get('/auth/me').set('cookie', user.cookie)).status).toBe(200);
      expect((await t.api.get('/v1/auth/me').set('authorization', `Bearer ${personalKey}`)).status).toBe(200);

      const id = `msg_${unique()}`;
      const res = await deliver(event('user.deleted', { id: sub, object: 'user', deleted: true }), { id });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(received);

      // What the user sees: no credential works, and signing in again is refused.
      expect((await t.api.get('/auth/me').set('cookie', user.cookie)).status).toBe(401);
      expect((await t.api.get('/v1/auth/me').set('authorization', `Bearer ${accessToken}`)).status).toBe(401);
      expect((await t.api.post('/v1/auth/refresh').send({ refresh_token: refreshToken })).status).toBe(401);
      expect((await t.api.get('/v1/auth/me').set('authorization', `Bearer ${personalKey}`)).status).toBe(401);
      const relogin = await t.api.post('/auth/login').send({ email: user.email, password: user.password });
      expect(relogin.status).toBe(401);
      expect(relogin.body).toMatchObject({ error: 'invalid_credentials' });
      expect((await t.api.get('/auth/me').set('cookie', `__session=${await idpToken(sub, user.email)}`)).status).toBe(401);
      expect(await countOf(t, sql`select count(*)::int as n from users where lower(email) = lower(${user.email})`)).toBe(0);

      // What others see: the post, under the placeholder author.
      const seen = await gql(t, null, 'query($id: ID!){ post(id: $id){ body author { id username displayName avatarUrl bio location links } } }', { id: post.id });
      expect(seen.data?.post).toEqual({
        body: expect.stringContaining('kept after deletion'),
        author: { id: user.id, username: `deleted_${user.id.replace(/-/g, '').slice(0, 20)}`, displayName: 'Deleted user', avatarUrl: null, bio: '', location: null, links: [] },
      });

      // The rows.
      expect(await sqlRows(t, sql`select email, display_name, password_hash, email_verified_at, idp_subject, deleted_at from users where id = ${user.id}`)).toEqual([
        { email: `deleted_${user.id}@deleted.invalid`, display_name: 'Deleted user', password_hash: null, email_verified_at: null, idp_subject: sub, deleted_at: expect.any(String) },
      ]);
      expect(await countOf(t, sql`select count(*)::int as n from sessions where user_id = ${user.id} and revoked_at is null`)).toBe(0);
      expect(await countOf(t, sql`select count(*)::int as n from refresh_tokens where user_id = ${user.id} and revoked_at is null`)).toBe(0);
      expect(await countOf(t, sql`select count(*)::int as n from personal_api_keys where user_id = ${user.id} and revoked_at is null`)).toBe(0);
      expect(await countOf(t, sql`select count(*)::int as n from mail_outbox where lower(to_address) = lower(${user.email})`)).toBe(0);
      expect(await countOf(t, sql`select count(*)::int as n from posts where id = ${post.id}`)).toBe(1);
      expect(await sqlRows(t, sql`select event_type, subject from idp_webhook_messages where message_id = ${id}`)).toEqual([{ event_type: 'user.deleted', subject: sub }]);

      // A replay, a later user.updated and another user.created for the same user change nothing.
      const before = await sqlRows(t, sql`select * from users where id = ${user.id}`);
      expect((await deliver(event('user.deleted', { id: sub, deleted: true }), { id })).body).toEqual(received);
      expect((await deliver(event('user.updated', clerkUser(sub, { email: user.email })))).status).toBe(200);
      expect((await deliver(event('user.created', clerkUser(sub, { email: user.email })))).status).toBe(200);
      expect(await sqlRows(t, sql`select * from users where id = ${user.id}`)).toEqual(before);
      expect(await countOf(t, sql`select count(*)::int as n from users where idp_subject = ${sub}`)).toBe(1);
    });

    it('acknowledges the deletion of a user unknown here', async () => {
      expect((await deliver(event('user.deleted', { id: `user_${unique()}`, deleted: true }))).body).toEqual(received);
    });
  });

  describe('other events and refusals', () => {
    it('acknowledges an unknown event type with 200, records its id and changes nothing', async () => {
      const id = `msg_${unique()}`;
      const res = await deliver(event('session.created', { id: `sess_${unique()}`, user_id: 'user_x' }), { id });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(received);
      expect(await sqlRows(t, sql`select event_type, subject from idp_webhook_messages where message_id = ${id}`)).toEqual([{ event_type: 'session.created', subject: null }]);
    });

    it('accepts the svix-* header names', async () => {
      const sub = `user_${unique()}`;
      expect((await deliver(event('user.created', clerkUser(sub)), { names: 'svix' })).status).toBe(200);
      expect(await userRow(sub)).toBeDefined();
    });

    it.each<[string, () => Delivery, string]>([
      ['a timestamp 301 seconds old', () => ({ t: nowSeconds() - 301 }), STALE],
      ['a timestamp 301 seconds ahead', () => ({ t: nowSeconds() + 301 }), STALE],
      ['another secret', () => ({ secret: OTHER_SECRET }), NO_MATCH],
      ['a tampered body', () => ({ body: JSON.stringify({ type: 'user.created', data: { id: 'user_tampered' } }) }), NO_MATCH],
      ['another message id than the one signed', () => ({ headers: (h) => ({ ...h, 'webhook-id': 'msg_other' }) }), NO_MATCH],
      ['a v1 signature of another length', () => ({ headers: (h) => ({ ...h, 'webhook-signature': 'v1,abc=' }) }), NO_MATCH],
      ['no webhook-id', () => ({ headers: (h) => ({ ...h, 'webhook-id': undefined }) }), MISSING],
      ['no webhook-timestamp', () => ({ headers: (h) => ({ ...h, 'webhook-timestamp': undefined }) }), MISSING],
      ['no webhook-signature', () => ({ headers: (h) => ({ ...h, 'webhook-signature': undefined }) }), MISSING],
      ['no signature headers at all', () => ({ headers: () => ({}) }), MISSING],
      ['a timestamp in milliseconds', () => ({ headers: (h) => ({ ...h, 'webhook-timestamp': String(clock.now().getTime()) }) }), 'webhook-id: 1 to 255 printable characters; webhook-timestamp: unix seconds.'],
    ])('answers 400 invalid_signature for %s and writes nothing', async (_label, make, message) => {
      const sub = `user_${unique()}`;
      clock.hold();
      let res;
      const o = { id: `msg_${unique()}`, ...make() };
      try {
        res = await deliver(event('user.created', clerkUser(sub)), o);
      } finally {
        clock.release();
      }
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal('invalid_signature', message));
      expect(await userRow(sub)).toBeUndefined();
      expect(await messages(o.id)).toBe(0);
    });

    it.each([-300, 300])('accepts a timestamp %i seconds from now (the window is 300 seconds either way)', async (offset) => {
      const sub = `user_${unique()}`;
      clock.hold();
      try {
        expect((await deliver(event('user.created', clerkUser(sub)), { t: nowSeconds() + offset })).status).toBe(200);
      } finally {
        clock.release();
      }
    });

    it.each([
      ['a body that is not JSON', 'user created, trust me', NOT_EVENT],
      ['an empty body', '', NOT_EVENT],
      ['an event without data', JSON.stringify({ type: 'user.created' }), NOT_EVENT],
      ['a user event without data.id', JSON.stringify({ type: 'user.deleted', data: { deleted: true } }), "data.id: the provider's user id is required (1 to 255 characters)."],
    ])('answers 400 invalid_payload for %s (signed) and records nothing', async (_label, raw, message) => {
      const id = `msg_${unique()}`;
      const res = await deliver(raw, { id });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal('invalid_payload', message));
      expect(await messages(id)).toBe(0);
    });

    it('answers 503 identity_webhooks_not_configured when IDP_WEBHOOK_SECRET is unset, and writes nothing', async () => {
      const bare = express().use(identityWebhooksRouter({ ...t.deps, config: { ...t.deps.config, idp: {} } }));
      const sub = `user_${unique()}`;
      const res = await deliver(event('user.created', clerkUser(sub)), {}, bare);
      expect(res.status).toBe(503);
      // The router alone: no request id middleware before it.
      expect(res.body).toEqual({ error: 'identity_webhooks_not_configured', message: 'IDP_WEBHOOK_SECRET is not set: identity-provider webhooks are off on this server.' });
      expect(await userRow(sub)).toBeUndefined();
    });

    it('accepts IDP_WEBHOOK_SECRET_PREVIOUS during a rotation, and only then', async () => {
      const rotating = express().use(identityWebhooksRouter({ ...t.deps, config: { ...t.deps.config, idp: { webhookSecret: OTHER_SECRET, webhookSecretPrevious: SECRET } } }));
      const rotated = express().use(identityWebhooksRouter({ ...t.deps, config: { ...t.deps.config, idp: { webhookSecret: OTHER_SECRET } } }));
      const sub = `user_${unique()}`;
      expect((await deliver(event('user.created', clerkUser(sub)), { secret: SECRET }, rotated)).status).toBe(400);
      expect((await deliver(event('user.created', clerkUser(sub)), { secret: SECRET }, rotating)).status).toBe(200);
      expect((await deliver(event('user.created', clerkUser(`user_${unique()}`)), { secret: OTHER_SECRET }, rotating)).status).toBe(200);
      expect(await userRow(sub)).toBeDefined();
    });
  });
});
