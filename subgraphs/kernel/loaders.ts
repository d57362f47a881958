import DataLoader from 'dataloader';
import type { RequestContext } from './context.js';
import { hasRequestScoped, requestScoped } from './context.js';
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
  return requestScoped(ctx, key, () => new DataLoader<string, T | null>((ids) => rowsByIds(ids, fetch)));
}

async function rowsByIds<T extends { id: string }>(ids: readonly string[], fetch: (ids: string[]) => Promise<T[]>): Promise<Array<T | null>> {
  const wanted = ids.filter(isUuid);
  const rows = wanted.length ? await fetch(wanted) : [];
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id) ?? null);
}

/** A `__resolveReference` that can also resolve a whole `_entities` list at once (see `byIdReference`). */
export interface ReferenceResolver<T> {
  (reference: { id: string }, ctx: RequestContext): Promise<T | null>;
  many(references: ReadonlyArray<{ id?: unknown }>, ctx: RequestContext): Promise<Array<T | null>> | undefined;
}

/**
 * The `__resolveReference` of an entity read by id through the request's `idLoader` (`key`, `fetch`). Its `many`
 * answers the same rows for a whole list of references in one `fetch` (`cheaperEntities`, kernel/entities.ts, uses
 * it for `_entities`): a DataLoader `load` per reference cost about a microsecond each. It leaves the list to the
 * per-reference path (answers undefined) when the request has used this loader already, or when an id is not a
 * string; otherwise it primes the request's loader with what it read, so a later `load` of the request answers the
 * same row without reading it again.
 */
export function byIdReference<T extends { id: string }>(key: string, fetch: (ctx: RequestContext, ids: string[]) => Promise<T[]>): ReferenceResolver<T> {
  const loader = (ctx: RequestContext) => idLoader<T>(ctx, key, (ids) => fetch(ctx, ids));
  const one = (reference: { id: string }, ctx: RequestContext) => loader(ctx).load(reference.id);
  const many = (references: ReadonlyArray<{ id?: unknown }>, ctx: RequestContext) => {
    if (hasRequestScoped(ctx, key) || !references.every((r) => typeof r.id === 'string')) return undefined;
    const ids = [...new Set(references.map((r) => r.id as string))];
    const primed = loader(ctx);
    return rowsByIds(ids, (wanted) => fetch(ctx, wanted)).then((rows) => {
      const byId = new Map<string, T | null>();
      ids.forEach((id, i) => {
        byId.set(id, rows[i]!);
        primed.prime(id, rows[i]!);
      });
      return references.map((r) => byId.get(r.id as string)!);
    });
  };
  return Object.assign(one, { many });
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
