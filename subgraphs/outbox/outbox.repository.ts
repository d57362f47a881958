import { inArray, sql } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import { outboxEvents, type OutboxEvent } from './outbox.tables.js';

export async function insert(tx: Executor, values: typeof outboxEvents.$inferInsert): Promise<void> {
  await tx.insert(outboxEvents).values(values);
}

const rowsOf = (result: unknown): Record<string, unknown>[] => (result as { rows: Record<string, unknown>[] }).rows;
const asDate = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));

const toEvent = (r: Record<string, unknown>): OutboxEvent => ({
  id: String(r.id),
  communityId: r.community_id == null ? null : String(r.community_id),
  type: String(r.type),
  data: (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as Record<string, unknown>,
  createdAt: asDate(r.created_at),
});

/** Locks up to `limit` unprocessed events, oldest first, skipping rows another worker holds. */
export async function lockUnprocessed(tx: Executor, limit: number): Promise<OutboxEvent[]> {
  const result = await tx.execute(sql`
    select id, community_id, type, data, created_at from outbox_events
     where processed_at is null
     order by created_at, id
     limit ${limit}
     for update skip locked`);
  return rowsOf(result).map(toEvent);
}

/** Arbitrary constant: the transaction-level advisory lock that lets one notifications consumer run at a time. */
const NOTIFY_LOCK = 72_430_012;

/**
 * Up to `limit` events the notifications consumer has not taken, oldest first; empty when another consumer holds the
 * consumer lock (it is held until `tx` ends). No row lock is taken while they are read, so the webhook fan-out, which
 * locks the same rows with `skip locked`, is only kept off them from `markNotified` to the commit.
 */
export async function claimUnnotified(tx: Executor, limit: number): Promise<OutboxEvent[]> {
  const [lock] = rowsOf(await tx.execute(sql`select pg_try_advisory_xact_lock(${NOTIFY_LOCK}) as ok`));
  if (!lock?.ok) return [];
  const result = await tx.execute(sql`
    select id, community_id, type, data, created_at from outbox_events
     where notified_at is null
     order by created_at, id
     limit ${limit}`);
  return rowsOf(result).map(toEvent);
}

export async function markNotified(tx: Executor, ids: string[], at: Date): Promise<void> {
  if (ids.length === 0) return;
  await tx.update(outboxEvents).set({ notifiedAt: at }).where(inArray(outboxEvents.id, ids));
}

export async function markProcessed(tx: Executor, ids: string[], at: Date): Promise<void> {
  if (ids.length === 0) return;
  await tx.update(outboxEvents).set({ processedAt: at }).where(inArray(outboxEvents.id, ids));
}
