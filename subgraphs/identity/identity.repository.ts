import { and, count, eq, gt, ilike, inArray, isNull, lte, ne, or, sql } from 'drizzle-orm';
import { preparedOnce, rowsByIdRemembered, type Executor } from '../../db/src/index.js';
import { emailTokens, refreshTokens, sessions, users, type EmailTokenPurpose, type UserRow } from './identity.tables.js';

/** A user as the rest of the code sees it; never carries the password hash. */
export interface User {
  id: string;
  email: string;
  username: string;
  displayName: string;
  avatarUrl: string | null;
  /** About the person; empty when not set. */
  bio: string;
  location: string | null;
  /** HTTPS URLs, in the order given. */
  links: string[];
  /** When the user proved the email address; null: never. */
  emailVerifiedAt: Date | null;
  createdAt: Date;
  /** The platform suspension as stored (in force while set and `suspendedUntil` is null or ahead of the clock). */
  suspendedAt: Date | null;
  suspendedUntil: Date | null;
  suspensionReason: string | null;
  /** When the account was deleted (its personal data erased; see account-deletion.ts); null: a live account. */
  deletedAt: Date | null;
}

const toUser = (r: UserRow): User => ({
  id: r.id,
  email: r.email,
  username: r.username,
  displayName: r.displayName,
  avatarUrl: r.avatarUrl,
  bio: r.bio,
  location: r.location,
  links: r.links,
  emailVerifiedAt: r.emailVerifiedAt,
  createdAt: r.createdAt,
  suspendedAt: r.suspendedAt,
  suspendedUntil: r.suspendedUntil,
  suspensionReason: r.suspensionReason,
  deletedAt: r.deletedAt,
});

export async function insertUser(db: Executor, values: typeof users.$inferInsert): Promise<User> {
  const [row] = await db.insert(users).values(values).returning();
  return toUser(row);
}

const usersByIds = preparedOnce((db) =>
  db
    .select()
    .from(users)
    .where(sql`${users.id} = any(${sql.placeholder('ids')}::uuid[])`)
    .prepare('identity_users_by_ids'),
);

/**
 * Users by id (every User entity batch goes through here): one array parameter and a statement prepared once per
 * database, so a batch of 100 costs no more SQL building than a batch of one. Through the database's root handle
 * the users are remembered across requests (never the password hash) until a trigger announces `u:<id>`.
 */
const usersByIdsRemembered = rowsByIdRemembered<Executor, User>('u', async (db, ids) => (await usersByIds(db).execute({ ids })).map(toUser), {
  typename: 'User',
});

export async function findUsersByIds(db: Executor, ids: readonly string[]): Promise<User[]> {
  return ids.length === 0 ? [] : usersByIdsRemembered(db, ids);
}

export async function findUserByEmail(db: Executor, email: string): Promise<(User & { passwordHash: string | null }) | undefined> {
  const [row] = await db.select().from(users).where(sql`lower(${users.email}) = lower(${email})`).limit(1);
  return row && { ...toUser(row), passwordHash: row.passwordHash };
}

export async function findUserByIdpSubject(db: Executor, subject: string): Promise<User | undefined> {
  const [row] = await db.select().from(users).where(eq(users.idpSubject, subject)).limit(1);
  return row && toUser(row);
}

export async function linkIdpSubject(db: Executor, userId: string, subject: string): Promise<void> {
  await db.update(users).set({ idpSubject: subject }).where(and(eq(users.id, userId), isNull(users.idpSubject)));
}

/** The user with exactly this username (usernames are unique and lower case). */
export async function findUserByUsername(db: Executor, username: string): Promise<User | undefined> {
  const [row] = await db.select().from(users).where(eq(users.username, username)).limit(1);
  return row && toUser(row);
}

/** The users named by `usernames` (exact), id and username only, in one statement. */
export async function findUserIdsByUsernames(db: Executor, usernames: readonly string[]): Promise<Array<{ id: string; username: string }>> {
  if (usernames.length === 0) return [];
  return db.select({ id: users.id, username: users.username }).from(users).where(inArray(users.username, [...usernames]));
}

/** Ids of users whose username or display name contains `term` (case-insensitive). */
export async function searchUserIds(db: Executor, term: string): Promise<string[]> {
  const pattern = `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const rows = await db
    .select({ id: users.id })
    .from(users)
    .where(or(ilike(users.username, pattern), ilike(users.displayName, pattern)));
  return rows.map((r) => r.id);
}

/** The changes of a profile update: only the fields present are written. */
export type ProfilePatch = Partial<Pick<User, 'displayName' | 'bio' | 'avatarUrl' | 'location' | 'links'>>;

/** Writes the present fields of `patch` and returns the user after the change (undefined when the user is gone). */
export async function updateProfile(db: Executor, id: string, patch: ProfilePatch): Promise<User | undefined> {
  const [row] = await db.update(users).set(patch).where(eq(users.id, id)).returning();
  return row && toUser(row);
}

/** The password hash of a user: null for an account without a password (identity provider), undefined when unknown. */
export async function findPasswordHash(db: Executor, id: string): Promise<string | null | undefined> {
  return (await findEmailAndPasswordHash(db, id))?.passwordHash;
}

/** The user's email and password hash (null without a password), or undefined for an unknown id. */
export async function findEmailAndPasswordHash(db: Executor, id: string): Promise<{ email: string; passwordHash: string | null } | undefined> {
  const [row] = await db.select({ email: users.email, passwordHash: users.passwordHash }).from(users).where(eq(users.id, id)).limit(1);
  return row;
}

export async function setPasswordHash(db: Executor, id: string, passwordHash: string): Promise<void> {
  await db.update(users).set({ passwordHash }).where(eq(users.id, id));
}

export async function insertSession(db: Executor, userId: string, tokenHash: string, expiresAt: Date): Promise<void> {
  await db.insert(sessions).values({ userId, tokenHash, expiresAt });
}

/** A user not suspended at `now`: no suspension, or one whose `until` has passed. */
const notSuspended = (now: unknown) => or(isNull(users.suspendedAt), lte(users.suspendedUntil, now as Date));

/** The user and id of a live (not revoked, not expired) session of a user who is not suspended. */
const liveSession = preparedOnce((db) =>
  db
    .select({ userId: sessions.userId, sessionId: sessions.id })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(
      and(
        eq(sessions.tokenHash, sql.placeholder('tokenHash')),
        isNull(sessions.revokedAt),
        gt(sessions.expiresAt, sql.placeholder('now')),
        notSuspended(sql.placeholder('now')),
      ),
    )
    .limit(1)
    .prepare('identity_live_session_unsuspended'),
);

/**
 * The user's suspension in force at `now`, or undefined when the user may act (or does not exist). Read with the
 * user (`findUsersByIds`: remembered across requests until the user changes); whether it is in force is decided at
 * `now`.
 */
export async function findSuspension(db: Executor, userId: string, now: Date): Promise<Suspension | undefined> {
  const [user] = await findUsersByIds(db, [userId]);
  if (!user?.suspendedAt || (user.suspendedUntil && user.suspendedUntil.getTime() <= now.getTime())) return undefined;
  return { suspendedAt: user.suspendedAt, until: user.suspendedUntil, reason: user.suspensionReason ?? '' };
}

/** A platform suspension of a user. */
export interface Suspension {
  suspendedAt: Date;
  /** Null: until staff lift it. */
  until: Date | null;
  reason: string;
}

/** Sets (or, with null, lifts) the user's suspension; undefined when the user does not exist. */
export async function setSuspension(db: Executor, userId: string, s: Suspension | null): Promise<User | undefined> {
  const [row] = await db
    .update(users)
    .set({ suspendedAt: s?.suspendedAt ?? null, suspendedUntil: s?.until ?? null, suspensionReason: s?.reason ?? null })
    .where(eq(users.id, userId))
    .returning();
  return row && toUser(row);
}

/** The platform's user figures: all users, sign-ups since each instant, in one statement. */
export async function userCounts(db: Executor, day: Date, month: Date): Promise<{ total: number; signupsDay: number; signupsMonth: number }> {
  const [row] = await db
    .select({
      total: sql<number>`count(*)::int`,
      signupsDay: sql<number>`(count(*) filter (where ${users.createdAt} >= ${day.toISOString()}::timestamptz))::int`,
      signupsMonth: sql<number>`(count(*) filter (where ${users.createdAt} >= ${month.toISOString()}::timestamptz))::int`,
    })
    .from(users);
  return { total: Number(row.total), signupsDay: Number(row.signupsDay), signupsMonth: Number(row.signupsMonth) };
}

export async function findLiveSession(db: Executor, tokenHash: string, now: Date): Promise<{ userId: string; sessionId: string } | undefined> {
  const [row] = await liveSession(db).execute({ tokenHash, now });
  return row;
}

/** Revokes every live session of the user except `keep` (the caller's own; null revokes them all). */
export async function revokeOtherSessions(db: Executor, userId: string, keep: string | null, now: Date): Promise<void> {
  await db
    .update(sessions)
    .set({ revokedAt: now })
    .where(and(eq(sessions.userId, userId), isNull(sessions.revokedAt), keep ? ne(sessions.id, keep) : undefined));
}

/** Revokes every refresh token of the user that is not revoked yet (every family). */
export async function revokeUserRefreshTokens(db: Executor, userId: string, now: Date): Promise<void> {
  await db.update(refreshTokens).set({ revokedAt: now }).where(and(eq(refreshTokens.userId, userId), isNull(refreshTokens.revokedAt)));
}

/** Revokes the live session with this token hash; returns its user and id (undefined when none was live). */
export async function revokeSession(db: Executor, tokenHash: string, now: Date): Promise<{ userId: string; sessionId: string } | undefined> {
  const [row] = await db
    .update(sessions)
    .set({ revokedAt: now })
    .where(and(eq(sessions.tokenHash, tokenHash), isNull(sessions.revokedAt)))
    .returning({ userId: sessions.userId, sessionId: sessions.id });
  return row;
}

export async function insertRefreshToken(
  db: Executor,
  values: { userId: string; familyId: string; tokenHash: string; expiresAt: Date },
): Promise<void> {
  await db.insert(refreshTokens).values(values);
}

export async function findRefreshToken(db: Executor, tokenHash: string) {
  const [row] = await db.select().from(refreshTokens).where(eq(refreshTokens.tokenHash, tokenHash)).limit(1);
  return row;
}

/** Marks a refresh token used; false when it was used already (a concurrent refresh won). */
export async function markRefreshTokenUsed(db: Executor, id: string, now: Date): Promise<boolean> {
  const rows = await db
    .update(refreshTokens)
    .set({ usedAt: now })
    .where(and(eq(refreshTokens.id, id), isNull(refreshTokens.usedAt), isNull(refreshTokens.revokedAt)))
    .returning({ id: refreshTokens.id });
  return rows.length === 1;
}

/** A refresh-token family as an access token's check reads it: its user, and whether any of its tokens was revoked. */
export interface RefreshFamily {
  id: string;
  userId: string;
  revoked: boolean;
}

/**
 * Refresh-token families by id, remembered across requests until a trigger (migration 0028) announces `r:<family id>`
 * (a revocation). A family revoked once stays revoked: no token is revoked alone. Unknown ids are left out.
 */
const familiesByIds = rowsByIdRemembered<Executor, RefreshFamily>('r', (db, ids) =>
  db
    .select({
      id: refreshTokens.familyId,
      userId: sql<string>`min(${refreshTokens.userId}::text)`,
      revoked: sql<boolean>`bool_or(${refreshTokens.revokedAt} is not null)`,
    })
    .from(refreshTokens)
    .where(inArray(refreshTokens.familyId, ids))
    .groupBy(refreshTokens.familyId),
);

/** The family with this id, or undefined when it has no token. */
export async function findRefreshFamily(db: Executor, familyId: string): Promise<RefreshFamily | undefined> {
  const [family] = await familiesByIds(db, [familyId]);
  return family;
}

export async function revokeRefreshFamily(db: Executor, familyId: string, now: Date): Promise<void> {
  await db.update(refreshTokens).set({ revokedAt: now }).where(and(eq(refreshTokens.familyId, familyId), isNull(refreshTokens.revokedAt)));
}

// ---- email tokens (verification, password reset) ----

export async function insertEmailToken(
  db: Executor,
  values: { userId: string; purpose: EmailTokenPurpose; tokenHash: string; email: string; expiresAt: Date; createdAt: Date },
): Promise<void> {
  await db.insert(emailTokens).values(values);
}

/** The token of this purpose with this hash (used or not, expired or not), or undefined. */
export async function findEmailToken(db: Executor, purpose: EmailTokenPurpose, tokenHash: string) {
  const [row] = await db
    .select()
    .from(emailTokens)
    .where(and(eq(emailTokens.purpose, purpose), eq(emailTokens.tokenHash, tokenHash)))
    .limit(1);
  return row;
}

/** Marks a token used; false when it was used already (a concurrent use won). */
export async function useEmailToken(db: Executor, id: string, now: Date): Promise<boolean> {
  const rows = await db
    .update(emailTokens)
    .set({ usedAt: now })
    .where(and(eq(emailTokens.id, id), isNull(emailTokens.usedAt)))
    .returning({ id: emailTokens.id });
  return rows.length === 1;
}

/** Marks every unused token of the user of this purpose used (a reset ends the other reset links). */
export async function useAllEmailTokens(db: Executor, userId: string, purpose: EmailTokenPurpose, now: Date): Promise<void> {
  await db
    .update(emailTokens)
    .set({ usedAt: now })
    .where(and(eq(emailTokens.userId, userId), eq(emailTokens.purpose, purpose), isNull(emailTokens.usedAt)));
}

/** Takes the user's lock on issuing tokens of `purpose` until the transaction ends (the hourly budget is counted under it). */
export async function lockEmailTokens(tx: Executor, userId: string, purpose: EmailTokenPurpose): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`email-tokens:${purpose}:${userId}`}, 0))`);
}

/** How many tokens of this purpose were issued to the user since `since`. */
export async function countEmailTokensSince(db: Executor, userId: string, purpose: EmailTokenPurpose, since: Date): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(emailTokens)
    .where(and(eq(emailTokens.userId, userId), eq(emailTokens.purpose, purpose), gt(emailTokens.createdAt, since)));
  return row?.n ?? 0;
}

/** The oldest issue time of the user's tokens of this purpose since `since` (when the window frees a slot). */
export async function oldestEmailTokenSince(db: Executor, userId: string, purpose: EmailTokenPurpose, since: Date): Promise<Date | undefined> {
  const [row] = await db
    .select({ at: sql<Date | string>`min(${emailTokens.createdAt})` })
    .from(emailTokens)
    .where(and(eq(emailTokens.userId, userId), eq(emailTokens.purpose, purpose), gt(emailTokens.createdAt, since)));
  return row?.at == null ? undefined : new Date(row.at);
}

/** Records that the user proved `email` at `now`, if it is still their address (case-insensitive); false otherwise. */
export async function markEmailVerified(db: Executor, userId: string, email: string, now: Date): Promise<boolean> {
  const rows = await db
    .update(users)
    .set({ emailVerifiedAt: now })
    .where(and(eq(users.id, userId), sql`lower(${users.email}) = lower(${email})`))
    .returning({ id: users.id });
  return rows.length === 1;
}
