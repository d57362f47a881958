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
