export { emitEvent, events, SUBSCRIBABLE_EVENTS } from './outbox.js';
export type { EventType } from './outbox.js';
