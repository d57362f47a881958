import DataLoader from 'dataloader';
import type { RequestContext } from './context.js';
import { requestScoped } from './context.js';
import { isUuid } from './validate.js';

/**
 * The per-request DataLoader of rows by id (null for a missing one), batching every lookup of a request
 * into one `fetch`. Ids that are not UUIDs never reach SQL: they are simply missing.
 */
export function idLoader<T extends { id: string }>(
  ctx: RequestContext,
  key: string,
  fetch: (ids: string[]) => Promise<T[]>,
): DataLoader<string, T | null> {
  return requestScoped(ctx, key, () =>
    new DataLoader<string, T | null>(async (ids) => {
      const wanted = ids.filter(isUuid);
      const rows = wanted.length ? await fetch(wanted) : [];
      const byId = new Map(rows.map((r) => [r.id, r]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
  );
}

/**
 * The per-request DataLoader of the signed-in caller's own row per key (their enrollment in a course, their
 * registration for an event), null when there is none or nobody is signed in. `keyOf` names a row's key.
 */
export function viewerLoader<T>(
  ctx: RequestContext,
  key: string,
  fetch: (userId: string, keys: readonly string[]) => Promise<T[]>,
  keyOf: (row: T) => string,
): DataLoader<string, T | null> {
  return requestScoped(ctx, key, () =>
    new DataLoader<string, T | null>(async (keys) => {
      const rows = ctx.caller ? await fetch(ctx.caller.userId, keys) : [];
      const byKey = new Map(rows.map((r) => [keyOf(r), r]));
      return keys.map((k) => byKey.get(k) ?? null);
    }),
  );
}

/** The per-request DataLoader of a count per id (0 when `fetch` has none for it). */
export function countLoader(ctx: RequestContext, key: string, fetch: (ids: readonly string[]) => Promise<Map<string, number>>): DataLoader<string, number> {
  return requestScoped(ctx, key, () =>
    new DataLoader<string, number>(async (ids) => {
      const counts = await fetch(ids);
      return ids.map((id) => counts.get(id) ?? 0);
    }),
  );
}
