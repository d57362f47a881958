export {
  platformEvents,
  eventById,
  getEvent,
  listEvents,
  createEvent,
  register,
  checkIn,
  fulfilEventOrder,
  revokeEventOrder,
  eventsStartingBetween,
  registrantIdsPage,
} from './events.service.js';
export type { TribeEvent, EventRegistration, RegisterResult } from './events.service.js';
export { EVENT_FORMATS, EVENT_LIST_STATUSES, REGISTRATION_STATUSES } from './events.tables.js';
