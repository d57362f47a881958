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
  traceContext: r.trace_context == null ? null : String(r.trace_context),
});

/** Events not yet fanned out to webhooks, and the age in seconds of the oldest of them (0 when none). */
export async function backlog(tx: Executor): Promise<{ waiting: number; oldestAgeSeconds: number }> {
  const result = await tx.execute(sql`
    select count(*)::int as waiting, coalesce(extract(epoch from now() - min(created_at)), 0)::float8 as age
      from outbox_events where processed_at is null`);
  const row = rowsOf(result)[0] ?? {};
  return { waiting: Number(row.waiting ?? 0), oldestAgeSeconds: Math.max(0, Number(row.age ?? 0)) };
}

/** Locks up to `limit` unprocessed events, oldest first, skipping rows another worker holds. */
export async function lockUnprocessed(tx: Executor, limit: number): Promise<OutboxEvent[]> {
  const result = await tx.execute(sql`
    select id, community_id, type, data, created_at, trace_context from outbox_events
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
 * consumer lock (it is held until `tx` ends), or, with `wait`, once that consumer's transaction has ended. No row lock is taken while they are read, so the webhook fan-out, which
 * locks the same rows with `skip locked`, is only kept off them from `markNotified` to the commit.
 */
export async function claimUnnotified(tx: Executor, limit: number, wait = false): Promise<OutboxEvent[]> {
  if (wait) await tx.execute(sql`select pg_advisory_xact_lock(${NOTIFY_LOCK})`);
  else {
    const [lock] = rowsOf(await tx.execute(sql`select pg_try_advisory_xact_lock(${NOTIFY_LOCK}) as ok`));
    if (!lock?.ok) return [];
  }
  const result = await tx.execute(sql`
    select id, community_id, type, data, created_at, trace_context from outbox_events
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
