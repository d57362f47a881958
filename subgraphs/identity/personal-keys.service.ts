import type { Executor } from '../../db/src/index.js';
import { type AppDeps, type RequestContext, DomainError, invalid, isUuid, notFound, randomToken, requireUser, safeEqual, sha256 } from '../kernel/index.js';
import * as repo from './personal-keys.repository.js';
import type { PersonalApiKey } from './personal-keys.tables.js';

export type { PersonalApiKey } from './personal-keys.tables.js';

/**
 * Personal API keys (spec 5.3): a user's own keys for the resource API (`/v1/auth/me`, `/v1/communities/...`,
 * `/v1/media`), carrying that user's permissions there and nowhere else (the Platform API, GraphQL and the cookie
 * routes do not take them). `svc_pk_` plus 32 random bytes in base64url (43 characters); distinct from the tribes'
 * Platform API keys (`svc_sk_`).
 */
export const PERSONAL_KEY_PATTERN = /^svc_pk_[A-Za-z0-9_-]{43}$/;
/** The first 17 characters (`svc_pk_` and the next 10) are stored and shown, to recognise a key. */
export const PERSONAL_KEY_PREFIX_LENGTH = 17;
/** At most this many live (unrevoked) personal keys per user; revoke one to create another. */
export const PERSONAL_API_KEYS_PER_USER = 10;
/** A key's name: 1 to 60 characters (code points) after trimming. */
export const PERSONAL_KEY_NAME_MAX = 60;
/** `lastUsedAt` moves at most once per this many milliseconds per key. */
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * The scopes a personal key may be narrowed to, and what each allows on the resource API: `read` the reading methods
 * (GET, HEAD), `write` the writing ones (POST, PUT, PATCH, DELETE). A read-write key holds both (the default).
 */
export const PERSONAL_KEY_SCOPES = {
  read: 'GET and HEAD on every resource API route: read what the user can read.',
  write: 'POST, PUT, PATCH and DELETE on every resource API route: change what the user can change.',
} as const;
export type PersonalKeyScope = keyof typeof PERSONAL_KEY_SCOPES;
const SCOPE_NAMES = Object.keys(PERSONAL_KEY_SCOPES) as PersonalKeyScope[];

/** The creation answer: the only time the key text is ever shown. */
export interface CreatedPersonalApiKey extends PersonalApiKey {
  key: string;
}

/** The personal key a resource API request is made with, once authenticated. */
export interface PersonalKeyCaller {
  id: string;
  userId: string;
  scopes: string[];
}

const nameRule = `1 to ${PERSONAL_KEY_NAME_MAX} characters`;

function keyName(raw: unknown): string {
  const name = typeof raw === 'string' ? raw.trim() : '';
  const length = Array.from(name).length;
  if (length === 0 || length > PERSONAL_KEY_NAME_MAX) {
    throw invalid('invalid_name', `name: ${length === 0 ? 'required, ' : ''}${nameRule}.`, [{ field: 'name', message: nameRule }]);
  }
  return name;
}

/** Absent (null) is every scope; otherwise one or more known scopes, duplicates removed, in catalogue order. */
function keyScopes(raw: unknown): PersonalKeyScope[] {
  if (raw === undefined || raw === null) return [...SCOPE_NAMES];
  const rule = `one or more of ${SCOPE_NAMES.join(', ')}`;
  if (!Array.isArray(raw) || raw.length === 0) throw invalid('invalid_scopes', `scopes: ${rule}.`, [{ field: 'scopes', message: rule }]);
  const unknown = raw.filter((s) => typeof s !== 'string' || !SCOPE_NAMES.includes(s as PersonalKeyScope));
  if (unknown.length > 0) {
    const named = unknown.map((s) => JSON.stringify(s)).join(', ');
    throw invalid('invalid_scopes', `scopes: unknown scope ${named}; ${rule}.`, [{ field: 'scopes', message: `unknown scope ${named}; ${rule}` }]);
  }
  return SCOPE_NAMES.filter((s) => raw.includes(s));
}

/**
 * Creates a personal key for the signed-in user, optionally narrowed to `scopes` (absent: read and write). Only the
 * key's SHA-256 and its first 17 characters are stored; the returned `key` cannot be shown again. A user holds at most
 * `PERSONAL_API_KEYS_PER_USER` (10) live keys: past it, CONFLICT `personal_api_key_limit` with `details.limit`,
 * counted under the user's lock in the inserting transaction, so concurrent creations cannot pass it. Bad input writes
 * nothing.
 */
export async function createPersonalApiKey(ctx: RequestContext, raw: { name?: unknown; scopes?: unknown }): Promise<CreatedPersonalApiKey> {
  const userId = requireUser(ctx);
  const name = keyName(raw?.name);
  const scopes = keyScopes(raw?.scopes);
  const key = `svc_pk_${randomToken(32)}`;
  const max = PERSONAL_API_KEYS_PER_USER;
  const row = await ctx.app.database.db.transaction(async (tx) => {
    await repo.lockUser(tx, userId);
    if ((await repo.countLive(tx, userId)) >= max) {
      throw new DomainError('conflict', 'personal_api_key_limit', `A user has at most ${max} live personal API keys: revoke one before creating another.`, { limit: max });
    }
    const keyPrefix = key.slice(0, PERSONAL_KEY_PREFIX_LENGTH);
    return repo.insert(tx, { userId, name, keyPrefix, keyHash: sha256(key), scopes, createdAt: ctx.app.clock() });
  });
  return { ...row, key };
}

/** The signed-in user's personal keys, revoked ones included, newest first (never the key text or its hash). */
export async function listPersonalApiKeys(ctx: RequestContext): Promise<PersonalApiKey[]> {
  const userId = requireUser(ctx);
  return repo.listByUser(ctx.app.database.db, userId);
}

/**
 * Revokes one of the signed-in user's keys at once and for good: the very next request with it is refused. The row
 * stays (revokedAt set); revoking twice keeps the first time. Another user's key, or no key, is `not_found`.
 */
export async function revokePersonalApiKey(ctx: RequestContext, id: string): Promise<PersonalApiKey> {
  const userId = requireUser(ctx);
  const row = isUuid(id) ? await repo.revoke(ctx.app.database.db, userId, id, ctx.app.clock()) : undefined;
  if (!row) throw notFound('Personal API key');
  return row;
}

/** Revokes every live personal key of `userId` through `db` (an account being deleted or erased); returns how many. */
export function revokeAllPersonalApiKeys(app: AppDeps, userId: string, db: Executor = app.database.db): Promise<number> {
  return repo.revokeAllOfUser(db, userId, app.clock());
}

/**
 * The key behind a resource API bearer credential `svc_pk_...`, or null when it is malformed, unknown, revoked, or its
 * user is suspended or gone (indistinguishable to the caller). Found by its 17-character prefix (not secret), then its
 * SHA-256 compared in constant time; read from the table on every request, so a revocation or a suspension stops it
 * at the very next one. Records the use at most once a minute per key.
 */
export async function authenticatePersonalApiKey(app: AppDeps, token: string): Promise<PersonalKeyCaller | null> {
  if (!PERSONAL_KEY_PATTERN.test(token)) return null;
  const now = app.clock();
  const candidates = await repo.findLiveByPrefix(app.database.db, token.slice(0, PERSONAL_KEY_PREFIX_LENGTH), now);
  const hash = sha256(token);
  let found: repo.LivePersonalKey | undefined;
  for (const candidate of candidates) if (safeEqual(candidate.keyHash, hash)) found = candidate;
  if (!found) return null;
  if (!found.lastUsedAt || now.getTime() - found.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
    await repo.touchLastUsed(app.database.db, found.id, now);
  }
  return { id: found.id, userId: found.userId, scopes: found.scopes };
}

/** The scope a resource API request of `method` needs: `read` for GET, HEAD and OPTIONS, `write` for any other. */
export const scopeForMethod = (method: string): PersonalKeyScope => (['GET', 'HEAD', 'OPTIONS'].includes(method.toUpperCase()) ? 'read' : 'write');

/**
 * Refuses a resource API request of `method` made with a personal key that lacks its scope: FORBIDDEN
 * `insufficient_scope`, naming the scope and the rule (`details.required_scope`).
 */
export function requirePersonalKeyScope(key: PersonalKeyCaller, method: string): void {
  const needed = scopeForMethod(method);
  if (key.scopes.includes(needed)) return;
  const rule = needed === 'read' ? 'GET and HEAD need the read scope' : 'POST, PUT, PATCH and DELETE need the write scope';
  throw new DomainError('forbidden', 'insufficient_scope', `This personal API key lacks the ${needed} scope: ${rule}.`, {
    required_scope: needed,
    key_scopes: key.scopes,
  });
}

/** The scope catalogue, for the console and GraphQL. */
export const personalKeyScopes = (): Array<{ name: PersonalKeyScope; description: string }> =>
  SCOPE_NAMES.map((name) => ({ name, description: PERSONAL_KEY_SCOPES[name] }));
