export { platformEvents, eventById } from './events.service.js';
export type { TribeEvent } from './events.service.js';
export { EVENT_TYPES } from './events.tables.js';
