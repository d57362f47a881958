import { desc, eq, inArray } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import { tribeEvents, type TribeEvent } from './events.tables.js';

export async function findByIds(db: Executor, ids: readonly string[]): Promise<TribeEvent[]> {
  if (ids.length === 0) return [];
  return db.select().from(tribeEvents).where(inArray(tribeEvents.id, [...ids]));
}

/** Events of a tribe, latest start first. */
export async function listByCommunity(db: Executor, communityId: string, limit: number, offset: number): Promise<TribeEvent[]> {
  return db
    .select()
    .from(tribeEvents)
    .where(eq(tribeEvents.communityId, communityId))
    .orderBy(desc(tribeEvents.startsAt), desc(tribeEvents.id))
    .limit(limit)
    .offset(offset);
}
