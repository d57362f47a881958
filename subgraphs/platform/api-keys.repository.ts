import { and, desc, eq, isNull, lte, or, sql } from 'drizzle-orm';
import { preparedOnce, type Executor } from '../../db/src/index.js';
import { apiKeys, type ApiKeyRow } from './api-keys.tables.js';

/** An API key as the control plane shows it: everything but the hash. */
export type ApiKeyRecord = Omit<ApiKeyRow, 'keyHash'>;

/** What authentication needs of a live key. */
export interface LiveKey {
  id: string;
  communityId: string;
  scopes: string[];
  lastUsedAt: Date | null;
}

const record = {
  id: apiKeys.id,
  communityId: apiKeys.communityId,
  name: apiKeys.name,
  keyPrefix: apiKeys.keyPrefix,
  scopes: apiKeys.scopes,
  createdBy: apiKeys.createdBy,
  lastUsedAt: apiKeys.lastUsedAt,
  revokedAt: apiKeys.revokedAt,
  createdAt: apiKeys.createdAt,
};

/** Holds the tribe's key-creation lock until the transaction ends: creations of one tribe count one at a time. */
export async function lockTribe(tx: Executor, communityId: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`api_keys:${communityId}`}, 0))`);
}

/** The tribe's unrevoked keys. */
export async function countLive(db: Executor, communityId: string): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(apiKeys)
    .where(and(eq(apiKeys.communityId, communityId), isNull(apiKeys.revokedAt)));
  return row?.n ?? 0;
}

export async function insert(db: Executor, values: typeof apiKeys.$inferInsert): Promise<ApiKeyRecord> {
  const [row] = await db.insert(apiKeys).values(values).returning(record);
  return row;
}

const liveByHash = preparedOnce((db) =>
  db
    .select({ id: apiKeys.id, communityId: apiKeys.communityId, scopes: apiKeys.scopes, lastUsedAt: apiKeys.lastUsedAt })
    .from(apiKeys)
    .where(and(eq(apiKeys.keyHash, sql.placeholder('keyHash')), isNull(apiKeys.revokedAt)))
    .limit(1)
    .prepare('platform_api_key_by_hash'),
); // prepared once per database: this lookup runs on every Platform API request

/** The unrevoked key with this SHA-256, if any (one index lookup). */
export async function findLiveByHash(db: Executor, keyHash: string): Promise<LiveKey | undefined> {
  const [row] = await liveByHash(db).execute({ keyHash });
  return row;
}

/** Every key of a tribe, revoked ones included, newest first. */
export async function listByCommunity(db: Executor, communityId: string): Promise<ApiKeyRecord[]> {
  return db.select(record).from(apiKeys).where(eq(apiKeys.communityId, communityId)).orderBy(desc(apiKeys.createdAt), desc(apiKeys.id));
}

export async function findInCommunity(db: Executor, communityId: string, id: string): Promise<ApiKeyRecord | undefined> {
  const [row] = await db
    .select(record)
    .from(apiKeys)
    .where(and(eq(apiKeys.communityId, communityId), eq(apiKeys.id, id)))
    .limit(1);
  return row;
}

/** Revokes a key; a key revoked already keeps its first revocation time. */
export async function revoke(db: Executor, id: string, now: Date): Promise<ApiKeyRecord> {
  const [row] = await db
    .update(apiKeys)
    .set({ revokedAt: sql`coalesce(${apiKeys.revokedAt}, ${now.toISOString()}::timestamptz)` })
    .where(eq(apiKeys.id, id))
    .returning(record);
  return row;
}

/** Sets `last_used_at` to `now` unless it was set less than a minute before `now` (so concurrent processes write once). */
export async function touchLastUsed(db: Executor, id: string, now: Date): Promise<void> {
  const minuteAgo = new Date(now.getTime() - 60_000);
  await db
    .update(apiKeys)
    .set({ lastUsedAt: now })
    .where(and(eq(apiKeys.id, id), or(isNull(apiKeys.lastUsedAt), lte(apiKeys.lastUsedAt, minuteAgo))));
}
