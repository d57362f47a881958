import type { Executor } from '../../db/src/index.js';
import { DomainError, type RequestContext, idLoader, isUuid, notFound } from '../kernel/index.js';
import * as repo from './tribes.repository.js';
import type { Community } from './tribes.tables.js';

export type { Community } from './tribes.tables.js';

const byIdLoader = (ctx: RequestContext) =>
  idLoader<Community>(ctx, 'communities.byId', (ids) => repo.findByIds(ctx.app.database.db, ids));

/** A community by id (batched per request), or null. */
export const findCommunity = (ctx: RequestContext, id: string): Promise<Community | null> => byIdLoader(ctx).load(id);

/**
 * `not_found` for a tribe looked up by `id` or `handle`, saying what was looked up:
 * `Community not found: no tribe with handle "foo"` (the value cut to 64 characters).
 */
export const communityNotFound = (by: 'id' | 'handle', value: unknown) =>
  new DomainError('not_found', 'not_found', `Community not found: no tribe with ${by} ${JSON.stringify(String(value).slice(0, 64))}.`);

/** A community by id, or `not_found`. Tribe metadata is visible to everyone; content is not. */
export async function getCommunity(ctx: RequestContext, id: string): Promise<Community> {
  const community = await findCommunity(ctx, id);
  if (!community) throw communityNotFound('id', id);
  return community;
}

/** A community read through `db` (for example inside a transaction) outside any request; null when missing. */
export async function findCommunityWith(db: Executor, id: string): Promise<Community | null> {
  if (!isUuid(id)) return null;
  const [row] = await repo.findByIds(db, [id]);
  return row ?? null;
}

/** A community by handle (case-insensitive), or `not_found`. */
export async function getCommunityByHandle(ctx: RequestContext, handle: string): Promise<Community> {
  const community = typeof handle === 'string' && handle.length <= 64 ? await repo.findByHandle(ctx.app.database.db, handle) : undefined;
  if (!community) throw communityNotFound('handle', handle);
  byIdLoader(ctx).prime(community.id, community);
  return community;
}

/** Replaces what this request's lookups return for `id`: the updated row, or nothing (deleted). */
export function refreshCommunity(ctx: RequestContext, id: string, updated?: Community): void {
  const loader = byIdLoader(ctx).clear(id);
  if (updated) loader.prime(id, updated);
}

/**
 * Suspends (`reason`) or reinstates (null) a tribe, or features it (`featured`): platform staff decide, the caller
 * checks that. Written through `db` (a transaction, to record it with the audit row). Returns the tribe after the change
 * (this request's lookups see it), or `not_found`.
 */
export async function setCommunityPlatformState(
  ctx: RequestContext,
  id: string,
  change: { suspensionReason: string | null } | { featured: boolean },
  db: Executor = ctx.app.database.db,
): Promise<Community> {
  const now = ctx.app.clock();
  const patch =
    'featured' in change
      ? { featuredAt: change.featured ? now : null }
      : { suspendedAt: change.suspensionReason === null ? null : now, suspensionReason: change.suspensionReason };
  const row = isUuid(id) ? await repo.setPlatformState(db, id, patch) : undefined;
  if (!row) throw notFound('Community');
  refreshCommunity(ctx, id, row);
  return row;
}

/** The number of tribes. */
export const countCommunities = (db: Executor): Promise<number> => repo.countAll(db);
