// The transactional outbox, below every domain: domains record events in it, the webhook fan-out and the
// notifications consumer read it (each with its own marker).
// Only this module touches the `outbox_events` table.
export { claimUnnotifiedEvents, emitEvent, isSubscribable, lockUnprocessedEvents, markEventsNotified, markEventsProcessed, outboxBacklog } from './outbox.service.js';
export { INTERNAL_EVENTS, OUTBOX_CHANNEL, SUBSCRIBABLE_EVENTS } from './outbox.tables.js';
export type { InternalEventType, OutboxEvent, OutboxEventType } from './outbox.tables.js';
