import type { Executor } from '../../db/src/index.js';
import { currentTraceparent } from '../kernel/tracing.js';
import * as repo from './outbox.repository.js';
import { SUBSCRIBABLE_EVENTS, type InternalEventType, type OutboxEvent, type OutboxEventType } from './outbox.tables.js';

const SUBSCRIBABLE = new Set<string>(SUBSCRIBABLE_EVENTS);
/** True for an event name a webhook endpoint can subscribe to. */
export const isSubscribable = (type: string): type is OutboxEventType => SUBSCRIBABLE.has(type);

/**
 * Records an event inside `tx`; it is delivered only if the transaction commits. With tracing on, the event keeps the
 * writing request's trace context, which the fan-out and delivery spans link to.
 */
export async function emitEvent(tx: Executor, communityId: string, type: OutboxEventType | InternalEventType, data: Record<string, unknown>): Promise<void> {
  const traceContext = currentTraceparent(); // null when tracing is off: the insert is the same as without tracing
  await repo.insert(tx, traceContext ? { communityId, type, data, traceContext } : { communityId, type, data });
}

/**
 * Locks up to `limit` unprocessed outbox events, oldest first, skipping rows another worker holds.
 * Call inside the transaction that also acts on them and marks them processed (`markEventsProcessed`).
 */
export function lockUnprocessedEvents(tx: Executor, limit: number): Promise<OutboxEvent[]> {
  return repo.lockUnprocessed(tx, limit);
}

/** How many events wait for the webhook fan-out, and how old the oldest is (for `svc_outbox_*` metrics). */
export function outboxBacklog(tx: Executor): Promise<{ waiting: number; oldestAgeSeconds: number }> {
  return repo.backlog(tx);
}

/** Marks events processed at `at`, inside the transaction that locked them. */
export function markEventsProcessed(tx: Executor, ids: string[], at: Date): Promise<void> {
  return repo.markProcessed(tx, ids, at);
}

/**
 * Up to `limit` outbox events the notifications consumer has not taken yet (every type, webhook and internal), oldest
 * first; empty while another consumer runs, or with `wait`, read once it has committed (an event it did not see is
 * then taken, not left to the next poll). Call inside the transaction that turns them into notifications and marks
 * them (`markEventsNotified`). Independent of the webhook fan-out's processed marker.
 */
export function claimUnnotifiedEvents(tx: Executor, limit: number, wait = false): Promise<OutboxEvent[]> {
  return repo.claimUnnotified(tx, limit, wait);
}

/** Marks events taken by the notifications consumer at `at`, inside the transaction that claimed them. */
export function markEventsNotified(tx: Executor, ids: string[], at: Date): Promise<void> {
  return repo.markNotified(tx, ids, at);
}
