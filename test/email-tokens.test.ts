// Email verification and password reset over GraphQL with session cookies, on the real PostgreSQL, with the links read
// from the mail a real SMTP server (in this process) received: tokens stored only as SHA-256, single use, expiring by
// the injectable clock (24 hours, 30 minutes), another user's token refused, identity-provider linking once verified,
// and a reset request that answers the same, in the same time, for an unknown email.
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { SignJWT, exportSPKI, generateKeyPair } from 'jose';
import { sendQueuedMail } from '../subgraphs/mail/index.js';
import { signupUser, unique, type TestUser } from './factory.js';
import { SmtpSink, tokenIn } from './smtp.js';
import { ManualClock, failure, gql, ok, sqlRows, startService, type TestService } from './support.js';

const sha256 = (v: string) => createHash('sha256').update(v).digest('hex');
const PUBLIC_URL = 'https://tribes.example';

const Q = {
  me: '{ me { id email emailVerified } }',
  requestVerification: 'mutation { requestEmailVerification }',
  verify: 'mutation($t: String!){ verifyEmail(token: $t){ id emailVerified } }',
  requestReset: 'mutation($e: String!){ requestPasswordReset(email: $e) }',
  reset: 'mutation($t: String!, $p: String!){ resetPassword(token: $t, newPassword: $p) }',
};

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

describe('email tokens', () => {
  let t: TestService;
  let sink: SmtpSink;
  let idpKey: PrivateKey;
  const clock = new ManualClock();

  beforeAll(async () => {
    sink = await new SmtpSink().start();
    const pair = await generateKeyPair('RS256', { extractable: true });
    idpKey = pair.privateKey;
    t = await startService(
      { SMTP_URL: sink.url, PUBLIC_URL, MAIL_FROM: 'Tribes <no-reply@tribes.example>', IDP_JWT_PUBLIC_KEY: await exportSPKI(pair.publicKey) },
      clock.clock,
    );
  });
  afterAll(async () => {
    await t?.stop();
    await sink?.stop();
  });

  /** Runs the mail.send job once and returns the mails `user` received since `before`. */
  const deliver = async (to: string, before = sink.to(to).length) => {
    await sendQueuedMail(t.deps);
    return sink.to(to).slice(before);
  };

  /** Requests a verification link for `user` and returns its token, read from the mail received. */
  const verificationToken = async (user: TestUser) => {
    const before = sink.to(user.email).length;
    expect(ok(await gql(t, user, Q.requestVerification))).toEqual({ requestEmailVerification: true });
    const mails = await deliver(user.email, before);
    expect(mails).toHaveLength(1);
    return tokenIn(mails[0].text, '/verify-email');
  };

  /** Requests a reset link for `email` and returns its token, read from the mail received. */
  const resetToken = async (email: string) => {
    const before = sink.to(email).length;
    expect(ok(await gql(t, null, Q.requestReset, { e: email }))).toEqual({ requestPasswordReset: true });
    const mails = await deliver(email, before);
    expect(mails).toHaveLength(1);
    return tokenIn(mails[0].text, '/reset-password');
  };

  describe('requestEmailVerification and verifyEmail', () => {
    it('mails a link to PUBLIC_URL/verify-email whose token verifies the caller, stored only as its SHA-256', async () => {
      const user = await signupUser(t);
      expect(ok(await gql(t, user, Q.me)).me).toEqual({ id: user.id, email: user.email, emailVerified: false });

      expect(ok(await gql(t, user, Q.requestVerification))).toEqual({ requestEmailVerification: true });
      const [mail] = await deliver(user.email, 0);
      expect(mail.subject).toBe('Confirm your email address');
      expect(mail.headers.from).toBe('Tribes <no-reply@tribes.example>');
      expect(mail.headers['list-unsubscribe']).toBeUndefined(); // transactional: nothing to unsubscribe from
      expect(mail.text).toContain(`${PUBLIC_URL}/verify-email?token=`);
      const token = tokenIn(mail.text, '/verify-email');
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 random bytes

      const stored = await sqlRows(t, sql`select token_hash, purpose, email, expires_at, used_at from email_tokens where user_id = ${user.id}`);
      expect(stored).toEqual([{ token_hash: sha256(token), purpose: 'verify_email', email: user.email, expires_at: expect.anything(), used_at: null }]);
      expect(new Date(stored[0].expires_at).getTime()).toBe(clock.current.getTime() + 24 * 3_600_000);
      // The sent mail's body is erased from the outbox: the token exists nowhere in the database any more.
      expect(await sqlRows(t, sql`select status, text_body from mail_outbox where lower(to_address) = lower(${user.email})`)).toEqual([{ status: 'sent', text_body: null }]);

      expect(ok(await gql(t, user, Q.verify, { t: token }))).toEqual({ verifyEmail: { id: user.id, emailVerified: true } });
      expect(ok(await gql(t, user, Q.me)).me.emailVerified).toBe(true);
    });

    it('refuses a token used already (invalid_token)', async () => {
      const user = await signupUser(t);
      const token = await verificationToken(user);
      ok(await gql(t, user, Q.verify, { t: token }));
      expect(failure(await gql(t, user, Q.verify, { t: token }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_token' });
    });

    it('refuses a token after 24 hours (expired_token) and leaves the email unverified', async () => {
      const user = await signupUser(t);
      const token = await verificationToken(user);
      clock.advance(24 * 3_600_000 + 1000);
      expect(failure(await gql(t, user, Q.verify, { t: token }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'expired_token' });
      expect(ok(await gql(t, user, Q.me)).me.emailVerified).toBe(false);
      // A fresh link still works.
      const fresh = await verificationToken(user);
      expect(ok(await gql(t, user, Q.verify, { t: fresh })).verifyEmail.emailVerified).toBe(true);
    });

    it("refuses another user's token as invalid_token and verifies nobody", async () => {
      const owner = await signupUser(t);
      const thief = await signupUser(t);
      const token = await verificationToken(owner);
      expect(failure(await gql(t, thief, Q.verify, { t: token }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_token' });
      expect(ok(await gql(t, thief, Q.me)).me.emailVerified).toBe(false);
      expect(ok(await gql(t, owner, Q.me)).me.emailVerified).toBe(false);
      // The token was not spent by the refused attempt: its owner can still use it.
      expect(ok(await gql(t, owner, Q.verify, { t: token })).verifyEmail.emailVerified).toBe(true);
    });

    it('refuses an unknown or malformed token as invalid_token', async () => {
      const user = await signupUser(t);
      for (const token of ['nope', 'x'.repeat(500), '']) {
        expect(failure(await gql(t, user, Q.verify, { t: token }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_token' });
      }
    });

    it('needs a session (UNAUTHENTICATED)', async () => {
      expect(failure(await gql(t, null, Q.requestVerification))).toEqual({ code: 'UNAUTHENTICATED', reason: 'unauthorized' });
      expect(failure(await gql(t, null, Q.verify, { t: 'x' }))).toEqual({ code: 'UNAUTHENTICATED', reason: 'unauthorized' });
    });

    it('sends nothing once the email is verified, and answers the sixth request of an hour with RATE_LIMITED', async () => {
      const user = await signupUser(t);
      for (let i = 0; i < 5; i += 1) ok(await gql(t, user, Q.requestVerification));
      const limited = await gql(t, user, Q.requestVerification);
      expect(failure(limited)).toEqual({ code: 'RATE_LIMITED', reason: 'too_many_requests' });
      expect((await deliver(user.email, 0)).length).toBe(5);
      clock.advance(3_600_000 + 1000);
      const token = await verificationToken(user);
      ok(await gql(t, user, Q.verify, { t: token }));
      const before = sink.to(user.email).length;
      expect(ok(await gql(t, user, Q.requestVerification))).toEqual({ requestEmailVerification: true });
      expect(await deliver(user.email, before)).toEqual([]);
    });
  });

  describe('identity-provider sign-in by verified email', () => {
    const idpToken = (email: string, sub: string) =>
      new SignJWT({ email, email_verified: true, name: 'Linked' }).setProtectedHeader({ alg: 'RS256' }).setSubject(sub).setIssuedAt(clock.seconds).setExpirationTime(clock.seconds + 600).sign(idpKey); // the service's clock
    const me = async (jwt: string) => t.api.get('/auth/me').set('cookie', `__session=${jwt}`);

    it('is refused for a password account until its email is verified, then links to it', async () => {
      const user = await signupUser(t);
      const sub = `idp|${unique()}`;
      expect((await me(await idpToken(user.email, sub))).status).toBe(401);
      expect(await sqlRows(t, sql`select idp_subject from users where id = ${user.id}`)).toEqual([{ idp_subject: null }]);

      ok(await gql(t, user, Q.verify, { t: await verificationToken(user) }));
      const linked = await me(await idpToken(user.email.toUpperCase(), sub));
      expect(linked.status).toBe(200);
      expect(linked.body.user.id).toBe(user.id);
      expect(await sqlRows(t, sql`select idp_subject from users where id = ${user.id}`)).toEqual([{ idp_subject: sub }]);
      expect(await sqlRows(t, sql`select count(*)::int as n from users where lower(email) = lower(${user.email})`)).toEqual([{ n: 1 }]);
    });

    it('counts the email of a user provisioned from a verified identity-provider token as verified', async () => {
      const u = unique();
      const res = await me(await idpToken(`idp_${u}@example.com`, `idp|${u}`));
      expect(res.status).toBe(200);
      const graph = await t.api.post('/graphql').set('cookie', `__session=${await idpToken(`idp_${u}@example.com`, `idp|${u}`)}`).send({ query: Q.me });
      expect(graph.body.data.me).toEqual({ id: res.body.user.id, email: `idp_${u}@example.com`, emailVerified: true });
    });
  });

  describe('requestPasswordReset and resetPassword', () => {
    const NEW_PASSWORD = 'a brand new password';

    it('answers true for a known and an unknown email in the same time (at least 250 ms), and mails only the known one', async () => {
      const user = await signupUser(t);
      const unknown = `nobody_${unique()}@example.com`;
      const known: number[] = [];
      const missing: number[] = [];
      for (let i = 0; i < 4; i += 1) {
        for (const [email, times] of [[user.email, known], [unknown, missing]] as const) {
          const started = performance.now();
          expect(ok(await gql(t, null, Q.requestReset, { e: email }))).toEqual({ requestPasswordReset: true });
          times.push(performance.now() - started);
        }
      }
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
      expect(Math.min(...known, ...missing)).toBeGreaterThanOrEqual(250);
      // Without the floor the two differ by the transaction that queues the mail; with it, by the machine's jitter
      // (the margin leaves room for a loaded CI machine, far below the floor itself).
      expect(Math.abs(median(known) - median(missing))).toBeLessThan(150);
      await sendQueuedMail(t.deps);
      expect(sink.to(user.email)).toHaveLength(4);
      expect(sink.to(unknown)).toEqual([]);
      expect(await sqlRows(t, sql`select count(*)::int as n from mail_outbox where lower(to_address) = lower(${unknown})`)).toEqual([{ n: 0 }]);
    });

    it('sets the new password and ends every session and refresh token of the user; the link works once', async () => {
      const user = await signupUser(t);
      const login = (password: string) => t.api.post('/auth/login').send({ email: user.email, password });
      const other = { cookie: String((await login(user.password)).headers['set-cookie'][0]).split(';')[0] };
      const tokens = (await t.api.post('/v1/auth/login').send({ email: user.email, password: user.password })).body.data;
      expect(ok(await gql(t, other, Q.me)).me.id).toBe(user.id);

      const token = await resetToken(user.email);
      expect(await sqlRows(t, sql`select token_hash from email_tokens where user_id = ${user.id} and purpose = 'reset_password'`)).toEqual([{ token_hash: sha256(token) }]);
      expect(ok(await gql(t, null, Q.reset, { t: token, p: NEW_PASSWORD }))).toEqual({ resetPassword: true });

      for (const session of [user, other]) expect(await gql(t, session, Q.me)).toEqual({ data: { me: null } });
      expect((await t.api.post('/v1/auth/refresh').send({ refresh_token: tokens.refresh_token })).status).toBe(401);
      expect(await sqlRows(t, sql`select count(*)::int as n from sessions where user_id = ${user.id} and revoked_at is null`)).toEqual([{ n: 0 }]);
      expect(await sqlRows(t, sql`select count(*)::int as n from refresh_tokens where user_id = ${user.id} and revoked_at is null`)).toEqual([{ n: 0 }]);
      expect((await login(user.password)).status).toBe(401);
      const fresh = await login(NEW_PASSWORD);
      expect(fresh.status).toBe(200);
      // The link proved the inbox.
      const cookie = String(fresh.headers['set-cookie'][0]).split(';')[0];
      expect(ok(await gql(t, { cookie }, Q.me)).me.emailVerified).toBe(true);

      expect(failure(await gql(t, null, Q.reset, { t: token, p: 'yet another password' }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_token' });
      expect((await login(NEW_PASSWORD)).status).toBe(200);
    });

    it('ends the other reset links of the user when one is used', async () => {
      const user = await signupUser(t);
      const first = await resetToken(user.email);
      const second = await resetToken(user.email);
      ok(await gql(t, null, Q.reset, { t: second, p: NEW_PASSWORD }));
      expect(failure(await gql(t, null, Q.reset, { t: first, p: 'yet another password' }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_token' });
    });

    it('refuses a token after 30 minutes (expired_token) and keeps the password', async () => {
      const user = await signupUser(t);
      const token = await resetToken(user.email);
      clock.advance(30 * 60_000 + 1000);
      expect(failure(await gql(t, null, Q.reset, { t: token, p: NEW_PASSWORD }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'expired_token' });
      expect((await t.api.post('/auth/login').send({ email: user.email, password: user.password })).status).toBe(200);
      expect(ok(await gql(t, user, Q.me)).me.id).toBe(user.id);
    });

    it('is not spent by a weak password (weak_password), nor by an unknown token (invalid_token)', async () => {
      const user = await signupUser(t);
      const token = await resetToken(user.email);
      expect(failure(await gql(t, null, Q.reset, { t: token, p: 'short' }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'weak_password' });
      expect(failure(await gql(t, null, Q.reset, { t: `${token}x`, p: NEW_PASSWORD }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_token' });
      expect(ok(await gql(t, null, Q.reset, { t: token, p: NEW_PASSWORD }))).toEqual({ resetPassword: true });
    });

    it('sends at most 5 links an hour for one account and still answers true', async () => {
      const user = await signupUser(t);
      for (let i = 0; i < 7; i += 1) expect(ok(await gql(t, null, Q.requestReset, { e: user.email }))).toEqual({ requestPasswordReset: true });
      expect(await deliver(user.email, 0)).toHaveLength(5);
    });
  });
});
