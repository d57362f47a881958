import { and, desc, eq, isNull, lte, or, sql } from 'drizzle-orm';
import { preparedOnce, type Executor } from '../../db/src/index.js';
import { users } from './identity.tables.js';
import { personalApiKeys, type PersonalApiKey } from './personal-keys.tables.js';

/** What authentication needs of a live key whose user may act now. */
export interface LivePersonalKey {
  id: string;
  userId: string;
  keyHash: string;
  scopes: string[];
  lastUsedAt: Date | null;
}

const record = {
  id: personalApiKeys.id,
  userId: personalApiKeys.userId,
  name: personalApiKeys.name,
  keyPrefix: personalApiKeys.keyPrefix,
  scopes: personalApiKeys.scopes,
  lastUsedAt: personalApiKeys.lastUsedAt,
  revokedAt: personalApiKeys.revokedAt,
  createdAt: personalApiKeys.createdAt,
};

/** Holds the user's key-creation lock until the transaction ends: creations of one user count one at a time. */
export async function lockUser(tx: Executor, userId: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`personal_api_keys:${userId}`}, 0))`);
}

/** The user's unrevoked keys. */
export async function countLive(db: Executor, userId: string): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(personalApiKeys)
    .where(and(eq(personalApiKeys.userId, userId), isNull(personalApiKeys.revokedAt)));
  return Number(row?.n ?? 0);
}

export async function insert(db: Executor, values: typeof personalApiKeys.$inferInsert): Promise<PersonalApiKey> {
  const [row] = await db.insert(personalApiKeys).values(values).returning(record);
  return row;
}

/** Every key of the user, revoked ones included, newest first. */
export async function listByUser(db: Executor, userId: string): Promise<PersonalApiKey[]> {
  return db.select(record).from(personalApiKeys).where(eq(personalApiKeys.userId, userId)).orderBy(desc(personalApiKeys.createdAt), desc(personalApiKeys.id));
}

/** Revokes the user's key `id` (a key revoked already keeps its first time); undefined when the user has no such key. */
export async function revoke(db: Executor, userId: string, id: string, now: Date): Promise<PersonalApiKey | undefined> {
  const [row] = await db
    .update(personalApiKeys)
    .set({ revokedAt: sql`coalesce(${personalApiKeys.revokedAt}, ${now.toISOString()}::timestamptz)` })
    .where(and(eq(personalApiKeys.id, id), eq(personalApiKeys.userId, userId)))
    .returning(record);
  return row;
}

/** Revokes every live key of the user at `now` (an account being deleted or erased); returns how many. */
export async function revokeAllOfUser(db: Executor, userId: string, now: Date): Promise<number> {
  const rows = await db
    .update(personalApiKeys)
    .set({ revokedAt: now })
    .where(and(eq(personalApiKeys.userId, userId), isNull(personalApiKeys.revokedAt)))
    .returning({ id: personalApiKeys.id });
  return rows.length;
}

const liveByPrefix = preparedOnce((db) =>
  db
    .select({
      id: personalApiKeys.id,
      userId: personalApiKeys.userId,
      keyHash: personalApiKeys.keyHash,
      scopes: personalApiKeys.scopes,
      lastUsedAt: personalApiKeys.lastUsedAt,
    })
    .from(personalApiKeys)
    .innerJoin(users, eq(users.id, personalApiKeys.userId))
    .where(
      and(
        eq(personalApiKeys.keyPrefix, sql.placeholder('keyPrefix')),
        isNull(personalApiKeys.revokedAt),
        isNull(users.deletedAt),
        or(isNull(users.suspendedAt), lte(users.suspendedUntil, sql.placeholder('now'))),
      ),
    )
    .limit(5)
    .prepare('identity_personal_key_by_prefix'),
); // prepared once per database: this lookup runs on every resource API request made with a personal key

/**
 * The unrevoked keys with this prefix whose user exists, is not deleted and is not suspended at `now` (read from the table on every
 * request, never remembered: a revocation or a suspension stops the key at the very next request). Usually one.
 */
export async function findLiveByPrefix(db: Executor, keyPrefix: string, now: Date): Promise<LivePersonalKey[]> {
  return liveByPrefix(db).execute({ keyPrefix, now });
}

/** Sets `last_used_at` to `now` unless it was set less than a minute before (so concurrent requests write once). */
export async function touchLastUsed(db: Executor, id: string, now: Date): Promise<void> {
  const minuteAgo = new Date(now.getTime() - 60_000);
  await db
    .update(personalApiKeys)
    .set({ lastUsedAt: now })
    .where(and(eq(personalApiKeys.id, id), or(isNull(personalApiKeys.lastUsedAt), lte(personalApiKeys.lastUsedAt, minuteAgo))));
}
