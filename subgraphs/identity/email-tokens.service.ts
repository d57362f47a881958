// Email verification and password reset: one-time tokens mailed as links. A token is 32 random bytes (base64url); only
// its SHA-256 is stored; it works once and expires (verification 24 hours, reset 30 minutes, by the app clock).
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import {
  type AppDeps,
  type RequestContext,
  invalid,
  parseInput,
  randomToken,
  rateLimited,
  requireUser,
  sha256,
  unauthorized,
} from '../kernel/index.js';
import type { Executor } from '../../db/src/index.js';
import { enqueueMail } from '../mail/index.js';
import { checkNewPassword } from './identity.profile.js';
import * as repo from './identity.repository.js';
import type { User } from './identity.repository.js';
import { announceSignedOut } from './identity.service.js';
import { hashPassword } from './passwords.js';
import { takeResetAttempt } from './sign-in-throttle.js';

/** How long a verification link works. */
export const VERIFY_TOKEN_TTL_MS = 24 * 3_600_000;
/** How long a password-reset link works. */
export const RESET_TOKEN_TTL_MS = 30 * 60_000;
/** Tokens of one purpose a user may be sent per `TOKEN_WINDOW_MS`; beyond it, verification is RATE_LIMITED and reset sends nothing. */
export const TOKENS_PER_WINDOW = 5;
export const TOKEN_WINDOW_MS = 3_600_000;
/**
 * `requestPasswordReset` answers no sooner than this after it started, whether or not the email is known, so its
 * duration does not tell whether an account exists (the known path's lookup, insert and queued mail take a few ms).
 */
export const RESET_REQUEST_MIN_MS = 250;

const invalidToken = () => invalid('invalid_token', 'This link is invalid or was used already.');
const expiredToken = () => invalid('expired_token', 'This link has expired: ask for a new one.');
const tokenInput = z.object({ token: z.string({ error: 'token is required' }) });

/** The hash of a token as presented, or null for anything that cannot be a token (then it is simply unknown). */
const hashOf = (token: string): string | null => (token.length > 0 && token.length <= 200 ? sha256(token) : null);

const link = (app: AppDeps, path: string, token: string) => `${app.config.publicUrl}${path}?token=${encodeURIComponent(token)}`;

/**
 * Mails the caller a link that proves their address (valid 24 hours). True; nothing is sent when the address is
 * verified already. More than `TOKENS_PER_WINDOW` requests in an hour are RATE_LIMITED (reason too_many_requests).
 */
export async function requestEmailVerification(ctx: RequestContext): Promise<boolean> {
  const userId = requireUser(ctx);
  const { app } = ctx;
  const db = app.database.db;
  const [user] = await repo.findUsersByIds(db, [userId]);
  if (!user) throw unauthorized();
  if (user.emailVerifiedAt) return true;
  const now = app.clock();
  const token = randomToken(32);
  await db.transaction(async (tx) => {
    await checkTokenBudget(tx, userId, 'verify_email', now, true);
    await repo.insertEmailToken(tx, {
      userId,
      purpose: 'verify_email',
      tokenHash: sha256(token),
      email: user.email,
      expiresAt: new Date(now.getTime() + VERIFY_TOKEN_TTL_MS),
      createdAt: now,
    });
    const url = link(app, '/verify-email', token);
    await enqueueMail(tx, {
      kind: 'verification',
      to: user.email,
      subject: 'Confirm your email address',
      text: `Hello ${user.displayName},\n\nConfirm that ${user.email} is your address by opening this link (it works once, for 24 hours, while you are signed in):\n\n${url}\n\nIf you did not ask for this, ignore this mail.\n`,
      now,
    });
  });
  return true;
}

/**
 * Proves the caller's address with a token of `requestEmailVerification`: the token must be the caller's own, unused,
 * unexpired (else BAD_USER_INPUT invalid_token, or expired_token) and sent to the address the caller still has.
 * Returns the user, now verified.
 */
export async function verifyEmail(ctx: RequestContext, raw: unknown): Promise<User> {
  const userId = requireUser(ctx);
  const { token } = parseInput(tokenInput, raw);
  const { app } = ctx;
  const db = app.database.db;
  const tokenHash = hashOf(token);
  const row = tokenHash ? await repo.findEmailToken(db, 'verify_email', tokenHash) : undefined;
  // Another user's token says nothing about whose it is: the same answer as an unknown one.
  if (!row || row.userId !== userId || row.usedAt) throw invalidToken();
  const now = app.clock();
  if (row.expiresAt <= now) throw expiredToken();
  const verified = await db.transaction(async (tx) => {
    if (!(await repo.useEmailToken(tx, row.id, now))) return false;
    return repo.markEmailVerified(tx, userId, row.email, now);
  });
  if (!verified) throw invalidToken();
  const [user] = await repo.findUsersByIds(db, [userId]);
  return user;
}

const resetRequestInput = z.object({ email: z.string({ error: 'email is required' }).trim().max(254) });

/**
 * Mails a password-reset link (valid 30 minutes) to the account with this email, if there is one. Always true, after
 * the same work and no sooner than `RESET_REQUEST_MIN_MS`, so neither the answer nor its time tells whether the
 * account exists. Beyond `TOKENS_PER_WINDOW` requests an hour for one account, nothing more is sent (still true).
 */
export async function requestPasswordReset(app: AppDeps, raw: unknown): Promise<boolean> {
  const started = performance.now();
  try {
    const { email } = parseInput(resetRequestInput, raw);
    const token = randomToken(32);
    const tokenHash = sha256(token);
    const db = app.database.db;
    const user = email ? await repo.findUserByEmail(db, email) : undefined;
    const now = app.clock();
    if (user) {
      await db.transaction(async (tx) => {
        if (!(await checkTokenBudget(tx, user.id, 'reset_password', now, false))) return;
        await repo.insertEmailToken(tx, {
          userId: user.id,
          purpose: 'reset_password',
          tokenHash,
          email: user.email,
          expiresAt: new Date(now.getTime() + RESET_TOKEN_TTL_MS),
          createdAt: now,
        });
        const url = link(app, '/reset-password', token);
        await enqueueMail(tx, {
          kind: 'password_reset',
          to: user.email,
          subject: 'Reset your password',
          text: `Hello ${user.displayName},\n\nSomeone asked to reset the password of your account. To choose a new password, open this link (it works once, for 30 minutes):\n\n${url}\n\nA new password signs you out everywhere. If you did not ask for this, ignore this mail: your password stays as it is.\n`,
          now,
        });
      });
    }
    return true;
  } finally {
    const left = RESET_REQUEST_MIN_MS - (performance.now() - started);
    if (left > 0) await sleep(left);
  }
}

const resetInput = z.object({
  token: z.string({ error: 'token is required' }),
  newPassword: z.string({ error: 'newPassword is required' }),
});

/**
 * Sets a new password with a token of `requestPasswordReset` (unused and unexpired, else BAD_USER_INPUT invalid_token or
 * expired_token; newPassword follows the sign-up rule, else weak_password). In one transaction: the token used (and every
 * other reset link of the user), the new hash, every session and every refresh token of the user ended (so every access
 * token is refused, and every WebSocket of the user closes with 4401 when it commits), and the email
 * counted as verified (the link proved the inbox). Throttled per client address (`from`) with sign-in
 * (`takeResetAttempt`): past the limit, RATE_LIMITED too_many_attempts before the token is looked up.
 */
export async function resetPassword(app: AppDeps, raw: unknown, from: string | undefined): Promise<boolean> {
  const input = parseInput(resetInput, raw);
  const attempt = await takeResetAttempt(app, from);
  const db = app.database.db;
  const tokenHash = hashOf(input.token);
  const row = tokenHash ? await repo.findEmailToken(db, 'reset_password', tokenHash) : undefined;
  if (!row || row.usedAt) throw invalidToken();
  await attempt.proved();
  const now = app.clock();
  if (row.expiresAt <= now) throw expiredToken();
  checkNewPassword(input.newPassword, 'newPassword');
  const passwordHash = await hashPassword(app.config.passwordHashing, input.newPassword);
  const done = await db.transaction(async (tx) => {
    if (!(await repo.useEmailToken(tx, row.id, now))) return false;
    await repo.useAllEmailTokens(tx, row.userId, 'reset_password', now);
    await repo.setPasswordHash(tx, row.userId, passwordHash);
    await repo.revokeOtherSessions(tx, row.userId, null, now);
    await repo.revokeUserRefreshTokens(tx, row.userId, now);
    await repo.markEmailVerified(tx, row.userId, row.email, now);
    await announceSignedOut(tx, row.userId);
    return true;
  });
  if (!done) throw invalidToken();
  return true;
}

/**
 * True when the user may be sent another token of `purpose` now. Over budget: RATE_LIMITED (with the seconds until the
 * oldest token of the window ages out) when `refuse`, else false. Runs in the transaction that inserts the token, after
 * the user's token lock: concurrent requests are counted one after the other, in every process.
 */
async function checkTokenBudget(tx: Executor, userId: string, purpose: 'verify_email' | 'reset_password', now: Date, refuse: boolean): Promise<boolean> {
  await repo.lockEmailTokens(tx, userId, purpose);
  const since = new Date(now.getTime() - TOKEN_WINDOW_MS);
  const issued = await repo.countEmailTokensSince(tx, userId, purpose, since);
  if (issued < TOKENS_PER_WINDOW) return true;
  if (!refuse) return false;
  const oldest = await repo.oldestEmailTokenSince(tx, userId, purpose, since);
  const retryAfter = Math.max(1, Math.ceil(((oldest?.getTime() ?? now.getTime()) + TOKEN_WINDOW_MS - now.getTime()) / 1000));
  throw rateLimited('too_many_requests', 'Too many verification mails: try again later.', retryAfter);
}
