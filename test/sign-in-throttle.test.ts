// Sign-in throttling (issue 29) on every password surface: POST /auth/login (the web app and the creator console),
// POST /v1/auth/login and the resetPassword mutation, with the documented default numbers (5 failures per account from
// one address, 20 per account from every address, 50 per address, 15-minute windows). Requests come from addresses of
// their own (127.0.0.x, the local address of a real connection: the service does not trust X-Forwarded-For), so one
// address's throttling shows apart from another's. The clock is moved to end a window.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { requestPasswordReset } from '../subgraphs/identity/index.js';
import { signupUser, unique, type TestUser } from './factory.js';
import { tokenIn } from './smtp.js';
import { movableClock, sqlRows, startService, type TestService } from './support.js';

const WINDOW_SECONDS = 900;
const PER_ACCOUNT_ADDRESS = 5;
const PER_ACCOUNT = 20;
const PER_ADDRESS = 50;
const WRONG = 'not the password at all';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: any;
}

describe('sign-in throttling', () => {
  let t: TestService;
  let port: number;
  const clock = movableClock();
  /** Loopback addresses no other test file uses (they all come from 127.0.0.1); a fresh one per call. */
  let nextHost = 10;
  const freshAddress = () => `127.0.${Math.floor(nextHost / 250)}.${(nextHost++ % 250) + 2}`;

  beforeAll(async () => {
    t = await startService(
      {
        SIGN_IN_WINDOW_SECONDS: String(WINDOW_SECONDS),
        SIGN_IN_FAILURES_PER_ACCOUNT_ADDRESS: String(PER_ACCOUNT_ADDRESS),
        SIGN_IN_FAILURES_PER_ACCOUNT: String(PER_ACCOUNT),
        SIGN_IN_FAILURES_PER_ADDRESS: String(PER_ADDRESS),
      },
      clock.now,
    );
    port = await t.listen(0, '127.0.0.1');
  });
  afterAll(async () => {
    await t?.stop();
  });

  /** A JSON POST over a real connection whose local (client) address is `from`. */
  const post = (from: string, path: string, body: unknown): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const payload = JSON.stringify(body);
      const req = httpRequest(
        { host: '127.0.0.1', port, localAddress: from, method: 'POST', path, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : undefined });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });

  const appLogin = (from: string, email: string, password: string) => post(from, '/auth/login', { email, password });
  const resourceLogin = (from: string, email: string, password: string) => post(from, '/v1/auth/login', { email, password });
  const statuses = async (n: number, attempt: () => Promise<Answer>) => {
    const out: number[] = [];
    for (let i = 0; i < n; i += 1) out.push((await attempt()).status);
    return out;
  };
  const times = (n: number, status: number) => Array<number>(n).fill(status);
  const retryAfterOf = (res: Answer) => Number(res.headers['retry-after']);

  /** The first `n` wrong passwords on `user` from `from` on /auth/login: all 401. */
  const fail = async (from: string, user: TestUser, n: number) => {
    expect(await statuses(n, () => appLogin(from, user.email, WRONG))).toEqual(times(n, 401));
  };

  describe('POST /auth/login (the web app and the creator console)', () => {
    it('refuses the 6th attempt on an account from one address with 429 too_many_attempts and Retry-After, the right password included', async () => {
      const user = await signupUser(t);
      const attacker = freshAddress();
      await fail(attacker, user, PER_ACCOUNT_ADDRESS);
      const refused = await appLogin(attacker, user.email, WRONG);
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ error: 'too_many_attempts', message: expect.any(String), requestId: expect.any(String) });
      expect(retryAfterOf(refused)).toBeGreaterThan(WINDOW_SECONDS - 60);
      expect(retryAfterOf(refused)).toBeLessThanOrEqual(WINDOW_SECONDS);
      const right = await appLogin(attacker, user.email.toUpperCase(), user.password);
      expect(right.status).toBe(429);
      expect(right.body).toEqual({ error: 'too_many_attempts', message: expect.any(String), requestId: expect.any(String) });
      expect(right.headers['set-cookie']).toBeUndefined();
    });

    it('lets the owner sign in with the right password from another address while the attacker\'s is refused', async () => {
      const user = await signupUser(t);
      const attacker = freshAddress();
      await fail(attacker, user, PER_ACCOUNT_ADDRESS);
      expect(await statuses(20, () => appLogin(attacker, user.email, WRONG))).toEqual(times(20, 429));
      const owner = await appLogin(freshAddress(), user.email, user.password);
      expect(owner.status).toBe(200);
      expect(owner.body.user.id).toBe(user.id);
      expect(String(owner.headers['set-cookie'])).toMatch(/^svc_session=/);
    });

    it('counts again once the 15-minute window has passed', async () => {
      const user = await signupUser(t);
      const from = freshAddress();
      clock.hold(); // only the test moves time here: 2 seconds before the window's end stay 2 seconds however slow
      try {
        await fail(from, user, PER_ACCOUNT_ADDRESS);
        const refused = await appLogin(from, user.email, user.password);
        expect(refused.status).toBe(429);
        clock.advance((retryAfterOf(refused) - 2) * 1000);
        expect((await appLogin(from, user.email, user.password)).status).toBe(429);
        clock.advance(3_000);
        expect((await appLogin(from, user.email, WRONG)).status).toBe(401);
        expect((await appLogin(from, user.email, user.password)).status).toBe(200);
      } finally {
        clock.release();
      }
    });

    it('forgets the address\'s failures on the account when the right password signs in', async () => {
      const user = await signupUser(t);
      const from = freshAddress();
      await fail(from, user, PER_ACCOUNT_ADDRESS - 1);
      expect((await appLogin(from, user.email, user.password)).status).toBe(200);
      await fail(from, user, PER_ACCOUNT_ADDRESS);
      expect((await appLogin(from, user.email, WRONG)).status).toBe(429);
    });

    it('past 20 failures on one account from many addresses, allows each address one failure on it, and still the right password from a fresh one', async () => {
      const user = await signupUser(t);
      const attackers = Array.from({ length: PER_ACCOUNT / PER_ACCOUNT_ADDRESS }, freshAddress);
      for (const a of attackers) await fail(a, user, PER_ACCOUNT_ADDRESS);
      const late = freshAddress();
      expect((await appLogin(late, user.email, WRONG)).status).toBe(401);
      const second = await appLogin(late, user.email, WRONG);
      expect(second.status).toBe(429);
      expect(second.body).toEqual({ error: 'too_many_attempts', message: expect.any(String), requestId: expect.any(String) });
      expect(retryAfterOf(second)).toBeGreaterThan(0);
      expect((await appLogin(freshAddress(), user.email, user.password)).status).toBe(200);
      // An attacker's address stays refused, the right password included.
      expect((await appLogin(attackers[0], user.email, user.password)).status).toBe(429);
    });

    it('refuses an address after 50 failures on any accounts, whatever the account and the password; an unknown email counts the same', async () => {
      const user = await signupUser(t);
      const sprayer = freshAddress();
      const guesses = Array.from({ length: PER_ADDRESS }, () => `nobody_${unique()}@example.com`);
      const answers: number[] = [];
      for (const email of guesses) answers.push((await appLogin(sprayer, email, WRONG)).status);
      expect(answers).toEqual(times(PER_ADDRESS, 401));
      const refused = await appLogin(sprayer, user.email, user.password);
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ error: 'too_many_attempts', message: expect.any(String), requestId: expect.any(String) });
      expect(retryAfterOf(refused)).toBeGreaterThan(0);
      expect((await appLogin(freshAddress(), user.email, user.password)).status).toBe(200);
    });

    it('stores no email and no address, only hashes of the counters\' names', async () => {
      const user = await signupUser(t);
      await fail(freshAddress(), user, 1);
      const rows = await sqlRows<{ key: string }>(t, sql`select key from sign_in_attempts`);
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) expect(row.key).toMatch(/^[0-9a-f]{64}$/);
    });
  });

  describe('POST /v1/auth/login', () => {
    it('answers 429 too_many_attempts in the resource envelope with Retry-After; the right password works from another address', async () => {
      const user = await signupUser(t);
      const attacker = freshAddress();
      expect(await statuses(PER_ACCOUNT_ADDRESS, () => resourceLogin(attacker, user.email, WRONG))).toEqual(times(PER_ACCOUNT_ADDRESS, 401));
      const refused = await resourceLogin(attacker, user.email, user.password);
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({
        error: { code: 'too_many_attempts', message: expect.any(String), details: { retryAfterSeconds: retryAfterOf(refused) }, request_id: expect.any(String) },
      });
      expect(retryAfterOf(refused)).toBeGreaterThan(WINDOW_SECONDS - 60);
      const owner = await resourceLogin(freshAddress(), user.email, user.password);
      expect(owner.status).toBe(200);
      expect(owner.body.data.user.id).toBe(user.id);
    });

    it('shares its counters with POST /auth/login: one rule for every password surface', async () => {
      const user = await signupUser(t);
      const from = freshAddress();
      await fail(from, user, 3);
      expect(await statuses(2, () => resourceLogin(from, user.email, WRONG))).toEqual([401, 401]);
      expect((await resourceLogin(from, user.email, WRONG)).status).toBe(429);
      expect((await appLogin(from, user.email, user.password)).status).toBe(429);
    });
  });

  describe('resetPassword (GraphQL)', () => {
    const RESET = 'mutation($t: String!, $p: String!){ resetPassword(token: $t, newPassword: $p) }';
    const reset = (from: string, token: string) => post(from, '/graphql', { query: RESET, variables: { t: token, p: 'a brand new password' } });

    /** A real reset link's token for `user`, read from the mail queued for them. */
    const resetToken = async (user: TestUser) => {
      await requestPasswordReset(t.deps, { email: user.email });
      const [mail] = await sqlRows<{ text_body: string }>(
        t,
        sql`select text_body from mail_outbox where to_address = ${user.email} and kind = 'password_reset' order by created_at desc limit 1`,
      );
      return tokenIn(mail.text_body, '/reset-password');
    };

    it('past 50 unknown links from one address answers RATE_LIMITED too_many_attempts with retryAfterSeconds, a real link included; it works from another address', async () => {
      const user = await signupUser(t);
      const guesser = freshAddress();
      const reasons: unknown[] = [];
      for (let i = 0; i < PER_ADDRESS; i += 1) reasons.push((await reset(guesser, `guess-${unique()}`)).body.errors?.[0]?.extensions?.reason);
      expect(reasons).toEqual(Array(PER_ADDRESS).fill('invalid_token'));
      const token = await resetToken(user);
      const refused = await reset(guesser, token);
      expect(refused.body.data).toBeNull();
      expect(refused.body.errors[0].extensions).toEqual(
        expect.objectContaining({ code: 'RATE_LIMITED', reason: 'too_many_attempts', details: { retryAfterSeconds: expect.any(Number) } }),
      );
      expect(refused.body.errors[0].extensions.details.retryAfterSeconds).toBeGreaterThan(0);
      expect(refused.body.errors[0].extensions.details.retryAfterSeconds).toBeLessThanOrEqual(WINDOW_SECONDS);
      expect((await reset(freshAddress(), token)).body).toEqual({ data: { resetPassword: true }, extensions: { cost: expect.any(Object) } });
      expect((await appLogin(freshAddress(), user.email, 'a brand new password')).status).toBe(200);
    });
  });

  describe('changePassword (GraphQL, signed in)', () => {
    const CHANGE = 'mutation($c: String!, $n: String!){ changePassword(currentPassword: $c, newPassword: $n) }';
    /** changePassword with the user's session cookie, from the client address `from`. */
    const change = (from: string, user: TestUser, current: string) =>
      new Promise<Answer>((resolve, reject) => {
        const payload = JSON.stringify({ query: CHANGE, variables: { c: current, n: 'a brand new password' } });
        const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), cookie: user.cookie };
        const req = httpRequest({ host: '127.0.0.1', port, localAddress: from, method: 'POST', path: '/graphql', headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(payload);
      });
    const reasonOf = (res: Answer) => res.body.errors?.[0]?.extensions?.reason ?? 'ok';

    it('counts wrong current passwords as sign-in failures: a stolen session cannot guess the password past the limit', async () => {
      const user = await signupUser(t);
      const thief = freshAddress();
      const reasons: unknown[] = [];
      for (let i = 0; i < PER_ACCOUNT_ADDRESS; i += 1) reasons.push(reasonOf(await change(thief, user, WRONG)));
      expect(reasons).toEqual(times(PER_ACCOUNT_ADDRESS, 0).map(() => 'wrong_password'));
      // The next one is refused before any password work, the right password included; the sign-in counter is the same.
      const refused = await change(thief, user, user.password);
      expect(refused.body.errors[0].extensions).toMatchObject({ code: 'RATE_LIMITED', reason: 'too_many_attempts' });
      expect((await appLogin(thief, user.email, user.password)).status).toBe(429);
      // The owner, elsewhere, still changes the password.
      expect((await change(freshAddress(), user, user.password)).body.data).toEqual({ changePassword: true });
    });
  });
});
