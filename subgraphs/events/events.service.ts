import DataLoader from 'dataloader';
import {
  type RequestContext,
  isUuid,
  platformPaging,
  requestScoped,
  toPlatformPage,
  type PlatformPage,
} from '../kernel/index.js';
import { requireScope } from '../platform/index.js';
import * as repo from './events.repository.js';
import type { TribeEvent } from './events.tables.js';

export type { TribeEvent } from './events.tables.js';

/** Platform API (`events:read`): events of the key's tribe, latest start first. */
export async function platformEvents(
  ctx: RequestContext,
  raw: { page?: number | null; pageSize?: number | null },
): Promise<PlatformPage<TribeEvent>> {
  const communityId = requireScope(ctx, 'events:read');
  const p = platformPaging(raw.page, raw.pageSize);
  return toPlatformPage(await repo.listByCommunity(ctx.app.database.db, communityId, p.pageSize, p.offset), p);
}

/** An event by id without an access check, for entity references from other subgraphs (batched per request). */
export function eventById(ctx: RequestContext, id: string): Promise<TribeEvent | null> {
  const loader = requestScoped(ctx, 'events.byId', () =>
    new DataLoader<string, TribeEvent | null>(async (ids) => {
      const rows = await repo.findByIds(ctx.app.database.db, ids.filter(isUuid));
      const byId = new Map(rows.map((r) => [r.id, r]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
  );
  return loader.load(id);
}
