// The transactional outbox, below every domain: domains record events in it, the webhook fan-out reads it.
// Only this module touches the `outbox_events` table.
export { emitEvent, isSubscribable, lockUnprocessedEvents, markEventsProcessed } from './outbox.service.js';
export { INTERNAL_EVENTS, SUBSCRIBABLE_EVENTS } from './outbox.tables.js';
export type { InternalEventType, OutboxEvent, OutboxEventType } from './outbox.tables.js';
