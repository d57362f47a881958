import { SignJWT, createRemoteJWKSet, importSPKI, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';

type KeyLike = Awaited<ReturnType<typeof importSPKI>>;
import { z } from 'zod';
import { randomUUID } from 'node:crypto';
import type { Executor } from '../../db/src/index.js';
import {
  type AppConfig,
  type AppDeps,
  type Caller,
  type RequestContext,
  DomainError,
  acceptedSecrets,
  invalid,
  invalidField,
  isUniqueViolation,
  isUuid,
  nameProblem,
  notFound,
  parseInput,
  randomToken,
  requireUser,
  sha256,
  unauthorized,
} from '../kernel/index.js';
import { publish } from '../realtime/index.js';
import { PASSWORD_LIMITS, checkNewPassword, displayNameRule, isUploadPath, parseProfileChanges } from './identity.profile.js';
import * as repo from './identity.repository.js';
import { checkPasswordHash, hashPassword } from './passwords.js';
import type { User } from './identity.repository.js';
import { takeSignInAttempt } from './sign-in-throttle.js';
import { rememberedClaims, rememberToken } from './verified-tokens.js';

export type { User } from './identity.repository.js';

const email = z.string().trim().max(254).email();
/** The sign-up rules (docs/sign-up.md; the Application API's OpenAPI states them as schema constraints). */
export const SIGNUP_RULES = {
  email: 'a valid email address of at most 254 characters',
  password: `${PASSWORD_LIMITS.min} to ${PASSWORD_LIMITS.max} characters`,
  username: '3 to 30 characters, each a lower-case letter a-z, a digit 0-9 or _',
} as const;
const USERNAME = /^[a-z0-9_]{3,30}$/;

const signupInput = z.object({
  email: z.string({ error: `required: ${SIGNUP_RULES.email}` }),
  password: z.string({ error: `required: ${SIGNUP_RULES.password}` }),
  username: z.string({ error: `required: ${SIGNUP_RULES.username}` }),
  displayName: displayNameRule,
  inviteCode: z.string({ error: 'must be a string or null' }).max(64, 'at most 64 characters').optional().nullable(),
});

export interface SignupInput {
  email: string;
  password: string;
  username: string;
  displayName: string;
  inviteCode?: string | null;
}

/**
 * Runs inside the transaction that creates a user, with the new user's id and the parsed sign-up input: what
 * else signing up does (joining a tribe with `inviteCode`). Throwing rolls the user back.
 */
export type WithNewUser = (tx: Executor, userId: string, input: SignupInput) => Promise<void>;

/**
 * Creates a user and opens a session. `withNewUser` runs in the user's creation transaction (the sign-up use
 * case of `onboarding/` joins the invite's tribe there).
 */
export async function createAccount(
  app: AppDeps,
  raw: unknown,
  withNewUser?: WithNewUser,
): Promise<{ user: User; sessionToken: string }> {
  const input = parseInput(signupInput, raw);
  if (!email.safeParse(input.email).success) throw invalidField('invalid_email', 'email', `must be ${SIGNUP_RULES.email}`);
  checkNewPassword(input.password);
  if (!USERNAME.test(input.username)) throw invalidField('invalid_username', 'username', SIGNUP_RULES.username);
  const passwordHash = await hashPassword(app.config.passwordHashing, input.password);
  try {
    const user = await app.database.db.transaction(async (tx) => {
      const created = await repo.insertUser(tx, {
        email: input.email.trim(),
        username: input.username,
        displayName: input.displayName,
        passwordHash,
      });
      await withNewUser?.(tx, created.id, input);
      return created;
    });
    return { user, sessionToken: await openSession(app, user.id) };
  } catch (error) {
    if (isUniqueViolation(error, 'users_email_key')) throw invalidField('email_taken', 'email', 'already registered: sign in instead', 'conflict');
    if (isUniqueViolation(error, 'users_username_key')) throw invalidField('username_taken', 'username', 'taken: choose another', 'conflict');
    throw error;
  }
}

const loginInput = z.object({ email: z.string().max(254), password: z.string().max(256) });

/**
 * Checks an email and password sent from the client address `from`; the same work is done whether or not the email
 * exists. Every password sign-in goes through here: throttled first (`takeSignInAttempt`: `too_many_attempts` before
 * any lookup or hash work once the account or the address is past its limit).
 */
export async function checkPassword(app: AppDeps, raw: unknown, from: string | undefined): Promise<User> {
  const input = parseInput(loginInput, raw);
  const attempt = await takeSignInAttempt(app, input.email, from);
  const found = await repo.findUserByEmail(app.database.db, input.email.trim());
  const ok = await checkPasswordHash(app.config.passwordHashing, found?.passwordHash, input.password);
  if (!found || !ok) throw new DomainError('unauthenticated', 'invalid_credentials', 'Email or password is wrong.');
  await attempt.proved();
  // Only someone who knows the password learns that the account is suspended.
  await refuseSuspended(app, found.id);
  const { passwordHash: _, ...user } = found;
  return user;
}

/**
 * How a WebSocket names the credential it signed in with, and how `signedOut` realtime signals name the credentials
 * they end: a first-party session (`svc_session`) by its id, a resource-API access token by its refresh-token family.
 */
export const credentialOf = {
  session: (sessionId: string) => `session:${sessionId}`,
  family: (familyId: string) => `family:${familyId}`,
};

/**
 * Announces, in `db`'s transaction (on commit), that credentials of `userId` ended: the WebSockets signed in with
 * `credential` (every socket of the user without it), except those signed in with `keep`, close with 4401 in every
 * process.
 */
export function announceSignedOut(db: Executor, userId: string, which: { credential?: string; keep?: string } = {}): Promise<void> {
  return publish(db, { topic: 'signedOut', userId, ...which });
}

/** `account_suspended` (403) when platform staff suspended the user and the suspension is in force at the clock's now. */
async function refuseSuspended(app: AppDeps, userId: string, kind: 'forbidden' | 'unauthenticated' = 'forbidden'): Promise<void> {
  const s = await repo.findSuspension(app.database.db, userId, app.clock());
  if (!s) return;
  const until = s.until ? ` until ${s.until.toISOString()}` : ' until platform staff lift it';
  throw new DomainError(kind, 'account_suspended', `This account is suspended${until}.`);
}

/** True when the user is suspended at the clock's now (one primary-key lookup). */
export async function isSuspended(app: AppDeps, userId: string): Promise<boolean> {
  return (await repo.findSuspension(app.database.db, userId, app.clock())) !== undefined;
}

/**
 * Suspends a user (platform staff decide; the caller checks that): from the next request on, their sessions,
 * `__session` tokens, access tokens and refresh tokens are refused and sign-in answers `account_suspended`, and their
 * WebSockets close (4401) when `db` commits. `until` null: until lifted. Written through `db` (pass a transaction to
 * record it with something else). Returns the user, or `not_found`.
 */
export async function suspendAccount(app: AppDeps, userId: string, reason: string, until: Date | null, db: Executor = app.database.db): Promise<User> {
  const user = isUuid(userId) ? await repo.setSuspension(db, userId, { suspendedAt: app.clock(), until, reason }) : undefined;
  if (!user) throw notFound('User');
  await announceSignedOut(db, user.id);
  return user;
}

/** Lifts a user's suspension (a user who is not suspended stays so), through `db`. Returns the user, or `not_found`. */
export async function unsuspendAccount(app: AppDeps, userId: string, db: Executor = app.database.db): Promise<User> {
  const user = isUuid(userId) ? await repo.setSuspension(db, userId, null) : undefined;
  if (!user) throw notFound('User');
  return user;
}

/** The user with this email (case-insensitive), or null. */
export async function findUserByEmail(app: AppDeps, address: string): Promise<User | null> {
  const found = await repo.findUserByEmail(app.database.db, address.trim());
  if (!found) return null;
  const { passwordHash: _, ...user } = found;
  return user;
}

/** Users in all, and sign-ups since `day` and since `month` (one set-based statement). */
export const userCounts = (app: AppDeps, day: Date, month: Date) => repo.userCounts(app.database.db, day, month);

/** Opens a first-party session and returns its token (only the SHA-256 of it is stored). */
export async function openSession(app: AppDeps, userId: string): Promise<string> {
  const token = randomToken();
  const expires = new Date(app.clock().getTime() + app.config.sessionTtlHours * 3_600_000);
  await repo.insertSession(app.database.db, userId, sha256(token), expires);
  return token;
}

/** The caller of a live session token (its user and the session's id), or null. */
export async function resolveSession(app: AppDeps, token: string): Promise<Caller | null> {
  if (!token || token.length > 200) return null;
  return (await repo.findLiveSession(app.database.db, sha256(token), app.clock())) ?? null;
}

/** Ends a session server-side: the token stops working at once, and the WebSockets it signed in close (4401). */
export async function closeSession(app: AppDeps, token: string): Promise<void> {
  if (!token || token.length > 200) return;
  await app.database.db.transaction(async (tx) => {
    const ended = await repo.revokeSession(tx, sha256(token), app.clock());
    if (ended) await announceSignedOut(tx, ended.userId, { credential: credentialOf.session(ended.sessionId) });
  });
}

/** The signed-in user. */
export async function me(ctx: RequestContext): Promise<User> {
  const userId = requireUser(ctx);
  const [user] = await repo.findUsersByIds(ctx.app.database.db, [userId]);
  if (!user) throw unauthorized();
  return user;
}

/** A public profile by username; `not_found` when no user has it (anything that is not a username included). */
export async function userByUsername(ctx: RequestContext, username: string): Promise<User> {
  const user = await findUserByUsername(ctx.app, username);
  if (!user) throw notFound('User');
  return user;
}

/**
 * Changes the caller's profile: only the fields sent (see `parseProfileChanges` for the rules; an explicit null
 * clears `avatarUrl` or `location`). A refused change writes nothing.
 */
export async function updateProfile(ctx: RequestContext, raw: unknown): Promise<User> {
  const userId = requireUser(ctx);
  const changes = parseProfileChanges(raw);
  if (changes.avatarUrl && isUploadPath(changes.avatarUrl)) {
    if (!ctx.app.profileMedia) throw invalid('invalid_media', 'avatarUrl: uploads are not enabled here.');
    changes.avatarUrl = await ctx.app.profileMedia(ctx, changes.avatarUrl);
  }
  const user = await repo.updateProfile(ctx.app.database.db, userId, changes);
  if (!user) throw unauthorized();
  return user;
}

const passwordChangeInput = z.object({
  currentPassword: z.string({ error: 'currentPassword is required' }).max(256),
  newPassword: z.string({ error: 'newPassword is required' }),
});

/**
 * Changes the caller's password. A wrong current password (or an account without one) is `wrong_password`: the same
 * error and the same Argon2 work either way, as at sign-in, and counted by sign-in throttling (`takeSignInAttempt`:
 * `too_many_attempts` past the account's limits from this address, before any hash work). The new password follows the sign-up rule
 * (`weak_password`). In one transaction: the new hash, every other session of the user ended (the caller's own
 * session keeps working), every refresh token of the user revoked (so every access token is refused: see
 * `accessTokenCaller`) and every WebSocket of the user but the current session's closed (4401).
 */
export async function changePassword(ctx: RequestContext, raw: unknown): Promise<boolean> {
  const userId = requireUser(ctx);
  const input = parseInput(passwordChangeInput, raw);
  checkNewPassword(input.newPassword, 'newPassword');
  const db = ctx.app.database.db;
  const account = await repo.findEmailAndPasswordHash(db, userId);
  // A stolen session must not become a way to guess the password: the sign-in counters of the account apply.
  const attempt = await takeSignInAttempt(ctx.app, account?.email ?? userId, ctx.clientAddress);
  const stored = account?.passwordHash;
  const ok = await checkPasswordHash(ctx.app.config.passwordHashing, stored, input.currentPassword);
  if (!ok) throw invalid('wrong_password', 'currentPassword is wrong.', [{ field: 'currentPassword', message: 'is wrong' }]);
  await attempt.proved();
  const passwordHash = await hashPassword(ctx.app.config.passwordHashing, input.newPassword);
  const now = ctx.app.clock();
  await db.transaction(async (tx) => {
    await repo.setPasswordHash(tx, userId, passwordHash);
    const keep = ctx.caller?.sessionId ?? null;
    await repo.revokeOtherSessions(tx, userId, keep, now);
    await repo.revokeUserRefreshTokens(tx, userId, now);
    await announceSignedOut(tx, userId, keep ? { keep: credentialOf.session(keep) } : {});
  });
  return true;
}

export const findUsersByIds = (app: AppDeps, ids: readonly string[]) => repo.findUsersByIds(app.database.db, ids);
export const searchUserIds = (app: AppDeps, term: string) => repo.searchUserIds(app.database.db, term);

/** Users by exact username (id and username), read with `db` (pass a transaction to read inside it). */
export function userIdsByUsernames(db: Executor, usernames: readonly string[]): Promise<Array<{ id: string; username: string }>> {
  return repo.findUserIdsByUsernames(db, usernames);
}

/** The user with this username, or null (anything that is not a valid username is simply unknown). */
export async function findUserByUsername(app: AppDeps, username: string): Promise<User | null> {
  if (typeof username !== 'string' || !/^[a-z0-9_]{3,30}$/.test(username)) return null;
  return (await repo.findUserByUsername(app.database.db, username)) ?? null;
}

// ---- resource API tokens ----

export const ACCESS_TOKEN_TTL_SECONDS = 3600;

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}

const jwtKey = (app: AppDeps) => new TextEncoder().encode(app.config.jwtSecret);
/** The keys an access token may be signed with: `JWT_SECRET`, then `JWT_SECRET_PREVIOUS` during a rotation. */
const jwtVerifyKeys = (app: AppDeps) => acceptedSecrets(app.config.jwtSecret, app.config.jwtSecretPrevious).map((s) => new TextEncoder().encode(s));
/** The memo of verified tokens is per set of accepted secrets: dropping the previous one forgets what it verified. */
const memoKey = (app: AppDeps) => acceptedSecrets(app.config.jwtSecret, app.config.jwtSecretPrevious).join('\n');

/**
 * Issues an access token (JWT, one hour) and a refresh token starting or continuing a family. The access token names
 * its family (`fam`): it is refused once the family is revoked.
 */
export async function issueTokens(app: AppDeps, userId: string, familyId: string = randomUUID()): Promise<TokenPair> {
  const now = app.clock();
  const accessToken = await new SignJWT({ typ: 'access', fam: familyId })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(userId)
    .setIssuer('svc')
    .setIssuedAt(Math.floor(now.getTime() / 1000))
    .setExpirationTime(Math.floor(now.getTime() / 1000) + ACCESS_TOKEN_TTL_SECONDS)
    .sign(jwtKey(app));
  const refreshToken = `svc_rt_${randomToken()}`;
  await repo.insertRefreshToken(app.database.db, {
    userId,
    familyId,
    tokenHash: sha256(refreshToken),
    expiresAt: new Date(now.getTime() + app.config.refreshTokenTtlDays * 86_400_000),
  });
  return { accessToken, refreshToken, expiresIn: ACCESS_TOKEN_TTL_SECONDS };
}

/** Logs in for the resource API (throttled as `checkPassword`, from the client address `from`). */
export async function loginWithTokens(app: AppDeps, raw: unknown, from: string | undefined): Promise<TokenPair & { user: User }> {
  const user = await checkPassword(app, raw, from);
  return { ...(await issueTokens(app, user.id)), user };
}

const refreshInput = z.object({ refresh_token: z.string({ error: 'refresh_token is required' }).min(1) });

/**
 * Rotates a refresh token: each works once. Presenting one that was used already revokes its whole
 * family, so a stolen token dies with the legitimate one: the family's access tokens are refused from the next request
 * on and its WebSockets close (4401).
 */
export async function refreshTokensFor(app: AppDeps, raw: unknown): Promise<TokenPair> {
  const { refresh_token: token } = parseInput(refreshInput, raw);
  const bad = () => new DomainError('unauthenticated', 'invalid_refresh_token', 'Refresh token is invalid, expired or already used.');
  const now = app.clock();
  // An over-long string is just another unknown token: 401 like any other, not a 400.
  const row = token.length <= 200 ? await repo.findRefreshToken(app.database.db, sha256(token)) : undefined;
  if (!row) throw bad();
  // Checked before the token is spent: once the suspension ends, the same refresh token works again.
  await refuseSuspended(app, row.userId, 'unauthenticated');
  if (row.usedAt || row.revokedAt || !(await repo.markRefreshTokenUsed(app.database.db, row.id, now))) {
    await app.database.db.transaction(async (tx) => {
      await repo.revokeRefreshFamily(tx, row.familyId, now);
      await announceSignedOut(tx, row.userId, { credential: credentialOf.family(row.familyId) });
    });
    throw bad();
  }
  if (row.expiresAt <= now) throw bad();
  return issueTokens(app, row.userId, row.familyId);
}

/** The user id of a valid access token, or null (see `accessTokenCaller`). */
export async function verifyAccessToken(app: AppDeps, token: string): Promise<string | null> {
  return (await accessTokenCaller(app, token))?.userId ?? null;
}

/**
 * The user and refresh-token family of a valid access token, or null: a good signature and time claims, a user who
 * is not suspended now, and a family none of whose refresh tokens was revoked (a reused refresh token,
 * `changePassword`, `resetPassword`). A token without a family (issued before families were named) is refused: its
 * client refreshes.
 */
export async function accessTokenCaller(app: AppDeps, token: string): Promise<{ userId: string; familyId: string } | null> {
  const now = app.clock();
  // A token that verified before is not checked again (its time claims are): see verified-tokens.ts.
  let claims = rememberedClaims(memoKey(app), token, now);
  if (claims === null) return null;
  if (claims === undefined) {
    let payload: JWTPayload | undefined;
    for (const key of jwtVerifyKeys(app)) {
      try {
        ({ payload } = await jwtVerify(token, key, { algorithms: ['HS256'], issuer: 'svc', currentDate: now }));
        break;
      } catch {
        // not a token of this key, or expired: the next key (during a rotation), else refused
      }
    }
    if (!payload) return null;
    if (payload.typ !== 'access' || typeof payload.sub !== 'string' || typeof payload.fam !== 'string' || !isUuid(payload.fam)) return null;
    claims = { sub: payload.sub, fam: payload.fam, nbf: payload.nbf, exp: payload.exp };
    rememberToken(memoKey(app), token, claims);
  }
  const { sub: userId, fam: familyId } = claims;
  // Both are read with the user and the family, remembered across requests until a change to either is announced:
  // a suspension or a revoked family stops the token from the next request on. A database that is down is not a bad
  // token: its error goes on (a 503, not a 401).
  const [suspended, family] = await Promise.all([isSuspended(app, userId), repo.findRefreshFamily(app.database.db, familyId)]);
  if (suspended || !family || family.revoked || family.userId !== userId) return null;
  return { userId, familyId };
}

// ---- identity-provider sessions (`__session`) ----

/** The identity provider's verification key (null when none is configured), loaded on first use and kept. */
export type IdpKeySource = () => Promise<KeyLike | JWTVerifyGetKey | null>;

declare module '../kernel/context.js' {
  interface AppDeps {
    /** The identity provider's key for `__session` tokens: `idpKeySource(config.idp)`. */
    idpKey: IdpKeySource;
    /**
     * Checks an uploaded avatar's `/media/...` path (the caller's own `avatar` upload) and returns it as stored, else
     * throws `invalid_media`: the media domain's, wired in `server/deps.ts` (identity sits below it).
     */
    profileMedia?: (ctx: RequestContext, path: string) => Promise<string>;
  }
}

/** The key source of `IDP_JWT_PUBLIC_KEY` or `IDP_JWKS_URL`: nothing is read before the first call. */
export function idpKeySource(idp: AppConfig['idp']): IdpKeySource {
  let key: Promise<KeyLike | JWTVerifyGetKey | null> | undefined;
  return () =>
    (key ??= idp.publicKeyPem
      ? importPem(idp.publicKeyPem)
      : Promise.resolve(idp.jwksUrl ? createRemoteJWKSet(new URL(idp.jwksUrl)) : null));
}

async function importPem(pem: string): Promise<KeyLike> {
  for (const alg of ['RS256', 'ES256', 'EdDSA']) {
    try {
      return (await importSPKI(pem, alg)) as KeyLike;
    } catch {
      // try the next algorithm family
    }
  }
  throw new Error('IDP_JWT_PUBLIC_KEY is not an RSA, EC P-256 or Ed25519 public key');
}

/**
 * Maps an identity-provider JWT to a user: by `sub` when linked already; otherwise the user with the token's
 * verified email is linked when it has no password or has verified that email here (`verifyEmail`), or a new user is
 * provisioned. The email of a password account whose address was never verified is refused (null).
 */
export async function resolveIdpToken(app: AppDeps, token: string): Promise<string | null> {
  const userId = await userOfIdpToken(app, token);
  return userId && !(await isSuspended(app, userId)) ? userId : null;
}

async function userOfIdpToken(app: AppDeps, token: string): Promise<string | null> {
  const key = await app.idpKey();
  if (!key || token.length > 8192) return null;
  let payload: JWTPayload;
  try {
    const options = {
      algorithms: ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384', 'EdDSA'],
      issuer: app.config.idp.issuer,
      audience: app.config.idp.audience,
      currentDate: app.clock(),
    };
    payload = (typeof key === 'function' ? await jwtVerify(token, key, options) : await jwtVerify(token, key, options)).payload;
  } catch {
    return null;
  }
  if (typeof payload.sub !== 'string' || payload.sub.length === 0) return null;
  const db = app.database.db;
  const linked = await repo.findUserByIdpSubject(db, payload.sub);
  // A deleted account keeps its provider id, so that its user is not provisioned again from a token still alive.
  if (linked) return linked.deletedAt ? null : linked.id;
  const mail = typeof payload.email === 'string' && email.safeParse(payload.email).success ? payload.email : null;
  if (!mail || payload.email_verified !== true) return null;
  const existing = await repo.findUserByEmail(db, mail);
  if (existing) {
    // A password account links only once its owner proved the address here (verifyEmail, or a password reset):
    // until then, linking it to whoever proves the address at the identity provider could hand that person an
    // account someone else signed up with.
    if (existing.passwordHash && !existing.emailVerifiedAt) return null;
    await repo.linkIdpSubject(db, existing.id, payload.sub);
    // The provider vouched for the address (email_verified): it counts as verified here too.
    if (!existing.emailVerifiedAt) await repo.markEmailVerified(db, existing.id, existing.email, app.clock());
    return existing.id;
  }
  const base = (typeof payload.preferred_username === 'string' ? payload.preferred_username : mail.split('@')[0])
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 20);
  const user = await repo.insertUser(db, {
    email: mail,
    username: `${base.length >= 3 ? base : 'user'}_${randomToken(4).toLowerCase().replace(/[^a-z0-9]/g, '0').slice(0, 6)}`,
    displayName: typeof payload.name === 'string' && !nameProblem(payload.name.trim()) ? payload.name.trim().slice(0, 80) : base,
    idpSubject: payload.sub,
    emailVerifiedAt: app.clock(), // the provider vouched for it (email_verified)
  });
  return user.id;
}

/** A user by id, or `not_found`. */
export async function getUser(app: AppDeps, id: string): Promise<User> {
  const [user] = await repo.findUsersByIds(app.database.db, [id]);
  if (!user) throw notFound('User');
  return user;
}
