import {
  type ApiKeyCaller,
  type AppDeps,
  type RequestContext,
  DomainError,
  invalidField,
  isUuid,
  notFound,
  randomToken,
  SCOPES,
  type Scope,
  requireScope,
  sha256,
  unauthorized,
} from '../kernel/index.js';
import { requireTribeAdmin } from '../members/index.js';
import * as repo from './api-keys.repository.js';
import type { ApiKeyRecord } from './api-keys.repository.js';

export type { ApiKeyRecord } from './api-keys.repository.js';

/** Every key is `svc_sk_` plus 32 random bytes in base64url (43 characters). */
export const API_KEY_PATTERN = /^svc_sk_[A-Za-z0-9_-]{43}$/;
const KEY_PREFIX_LENGTH = 17;
const NAME_MAX = 60;
/** `lastUsedAt` moves at most once per this many milliseconds per key. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** The creation response: the only time the key text is ever shown. */
export interface CreatedApiKey {
  id: string;
  name: string;
  key: string;
  keyPrefix: string;
  scopes: Scope[];
}

/** The identity of the key making a Platform API request (`GET /v1/me`). */
export interface ApiKeyIdentity {
  id: string;
  name: string;
  keyPrefix: string;
  scopes: string[];
  communityId: string;
}

/** Trimmed, then cut to 60 characters (code points, so no half emoji); empty is `invalid_name`. */
function keyName(raw: unknown): string {
  const trimmed = typeof raw === 'string' ? raw.trim() : '';
  if (!trimmed) throw invalidField('invalid_name', 'name', `required: 1 to ${NAME_MAX} characters after trimming (longer names are cut)`);
  return Array.from(trimmed).slice(0, NAME_MAX).join('');
}

/** Known scopes in the order first sent, duplicates removed; unknown ones are dropped; none left is `no_scopes`. */
function keyScopes(raw: unknown): Scope[] {
  const sent = Array.isArray(raw) ? raw : [];
  const kept = [...new Set(sent.filter((s): s is Scope => typeof s === 'string' && (SCOPES as readonly string[]).includes(s)))];
  if (kept.length === 0) throw invalidField('no_scopes', 'scopes', `at least one of ${SCOPES.join(', ')} (unknown scopes are dropped)`);
  return kept;
}

/**
 * Creates an API key for the tribe (owner or admin). Only the key's SHA-256 and its first 17 characters
 * are stored; the returned `key` cannot be shown again. A tribe holds at most `config.rateLimit.keysPerTribe` live keys (`API_KEYS_PER_TRIBE`, 10: the
 * Platform API's rate limit is per key, so a tribe must not multiply its budget by minting keys): past
 * it, CONFLICT `api_key_limit` with `details.limit` (revoke one first), counted under the tribe's lock in the
 * inserting transaction, so concurrent creations cannot pass it.
 */
export async function createApiKey(ctx: RequestContext, handle: string, raw: { name?: unknown; scopes?: unknown }): Promise<CreatedApiKey> {
  const { community, userId } = await requireTribeAdmin(ctx, { handle });
  const name = keyName(raw?.name);
  const scopes = keyScopes(raw?.scopes);
  const key = `svc_sk_${randomToken(32)}`;
  const keyPrefix = key.slice(0, KEY_PREFIX_LENGTH);
  const max = ctx.app.config.rateLimit.keysPerTribe;
  const row = await ctx.app.database.db.transaction(async (tx) => {
    await repo.lockTribe(tx, community.id);
    if ((await repo.countLive(tx, community.id)) >= max) {
      throw new DomainError('conflict', 'api_key_limit', `A tribe has at most ${max} live API keys: revoke one before creating another.`, { limit: max });
    }
    return repo.insert(tx, { communityId: community.id, name, keyPrefix, keyHash: sha256(key), scopes, createdBy: userId, createdAt: ctx.app.clock() });
  });
  return { id: row.id, name, key, keyPrefix, scopes };
}

/** Every key of the tribe, revoked ones included, newest first, with the scope catalogue (owner or admin). */
export async function listApiKeys(ctx: RequestContext, handle: string): Promise<{ keys: ApiKeyRecord[]; availableScopes: string[] }> {
  const { community } = await requireTribeAdmin(ctx, { handle });
  return { keys: await repo.listByCommunity(ctx.app.database.db, community.id), availableScopes: [...SCOPES] };
}

/**
 * Revokes a key of the tribe at once and for good (owner or admin); the row stays for audit.
 * A key of another tribe is `not_found`. Revoking twice keeps the first revocation time.
 */
export async function revokeApiKey(ctx: RequestContext, handle: string, id: string): Promise<ApiKeyRecord> {
  const { community } = await requireTribeAdmin(ctx, { handle });
  const db = ctx.app.database.db;
  const key = isUuid(id) ? await repo.findInCommunity(db, community.id, id) : undefined;
  if (!key) throw notFound('API key');
  return repo.revoke(db, key.id, ctx.app.clock());
}

/** When this process last wrote each key's `lastUsedAt` (epoch ms, by key id). */
export type ApiKeyUses = Map<string, number>;

declare module '../kernel/context.js' {
  interface AppDeps {
    /** The in-process memo of `noteUse`: a new, empty map per app. */
    apiKeyUses: ApiKeyUses;
  }
}

/**
 * Records that a key was used, at most once a minute per key: an in-process memo skips the statement
 * on most requests, and the conditional update keeps several processes from writing within the minute.
 */
async function noteUse(app: AppDeps, key: repo.LiveKey): Promise<void> {
  const now = app.clock();
  const written = app.apiKeyUses;
  const last = Math.max(written.get(key.id) ?? -Infinity, key.lastUsedAt?.getTime() ?? -Infinity);
  if (now.getTime() - last < LAST_USED_RESOLUTION_MS) return;
  written.set(key.id, now.getTime());
  await repo.touchLastUsed(app.database.db, key.id, now);
}

/**
 * The key behind a Platform API bearer token, or null when it is malformed, unknown or revoked (the three
 * are indistinguishable to the caller). Looked up by its SHA-256: nothing secret is compared in plain text.
 */
export async function authenticateApiKey(app: AppDeps, token: string): Promise<ApiKeyCaller | null> {
  if (!API_KEY_PATTERN.test(token)) return null;
  const key = await repo.findLiveByHash(app.database.db, sha256(token));
  if (!key) return null;
  await noteUse(app, key);
  return { id: key.id, communityId: key.communityId, scopes: key.scopes };
}

/** The key making this Platform API request (any scope). */
export async function platformMe(ctx: RequestContext): Promise<ApiKeyIdentity> {
  const communityId = requireScope(ctx, null);
  const key = await repo.findInCommunity(ctx.app.database.db, communityId, ctx.apiKey!.id);
  if (!key || key.revokedAt) throw unauthorized();
  return { id: key.id, name: key.name, keyPrefix: key.keyPrefix, scopes: key.scopes, communityId };
}
