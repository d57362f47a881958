import { inArray, sql } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import { outboxEvents, type OutboxEvent } from './outbox.tables.js';

export async function insert(tx: Executor, values: typeof outboxEvents.$inferInsert): Promise<void> {
  await tx.insert(outboxEvents).values(values);
}

const rowsOf = (result: unknown): Record<string, unknown>[] => (result as { rows: Record<string, unknown>[] }).rows;
const asDate = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));

/** Locks up to `limit` unprocessed events, oldest first, skipping rows another worker holds. */
export async function lockUnprocessed(tx: Executor, limit: number): Promise<OutboxEvent[]> {
  const result = await tx.execute(sql`
    select id, community_id, type, data, created_at from outbox_events
     where processed_at is null
     order by created_at, id
     limit ${limit}
     for update skip locked`);
  return rowsOf(result).map((r) => ({
    id: String(r.id),
    communityId: r.community_id == null ? null : String(r.community_id),
    type: String(r.type),
    data: (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as Record<string, unknown>,
    createdAt: asDate(r.created_at),
  }));
}

export async function markProcessed(tx: Executor, ids: string[], at: Date): Promise<void> {
  if (ids.length === 0) return;
  await tx.update(outboxEvents).set({ processedAt: at }).where(inArray(outboxEvents.id, ids));
}
