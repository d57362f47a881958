import type { Executor } from '../../db/src/index.js';
import * as repo from './outbox.repository.js';
import { SUBSCRIBABLE_EVENTS, type InternalEventType, type OutboxEvent, type OutboxEventType } from './outbox.tables.js';

const SUBSCRIBABLE = new Set<string>(SUBSCRIBABLE_EVENTS);
/** True for an event name a webhook endpoint can subscribe to. */
export const isSubscribable = (type: string): type is OutboxEventType => SUBSCRIBABLE.has(type);

/** Records an event inside `tx`; it is delivered only if the transaction commits. */
export async function emitEvent(tx: Executor, communityId: string, type: OutboxEventType | InternalEventType, data: Record<string, unknown>): Promise<void> {
  await repo.insert(tx, { communityId, type, data });
}

/**
 * Locks up to `limit` unprocessed outbox events, oldest first, skipping rows another worker holds.
 * Call inside the transaction that also acts on them and marks them processed (`markEventsProcessed`).
 */
export function lockUnprocessedEvents(tx: Executor, limit: number): Promise<OutboxEvent[]> {
  return repo.lockUnprocessed(tx, limit);
}

/** Marks events processed at `at`, inside the transaction that locked them. */
export function markEventsProcessed(tx: Executor, ids: string[], at: Date): Promise<void> {
  return repo.markProcessed(tx, ids, at);
}

/**
 * Up to `limit` outbox events the notifications consumer has not taken yet (every type, webhook and internal), oldest
 * first; empty while another consumer runs. Call inside the transaction that turns them into notifications and marks
 * them (`markEventsNotified`). Independent of the webhook fan-out's processed marker.
 */
export function claimUnnotifiedEvents(tx: Executor, limit: number): Promise<OutboxEvent[]> {
  return repo.claimUnnotified(tx, limit);
}

/** Marks events taken by the notifications consumer at `at`, inside the transaction that claimed them. */
export function markEventsNotified(tx: Executor, ids: string[], at: Date): Promise<void> {
  return repo.markNotified(tx, ids, at);
}
