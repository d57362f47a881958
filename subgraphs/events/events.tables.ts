import { integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** Calendar events of a tribe (`tribe_events`). */
export const tribeEvents = pgTable('tribe_events', {
  id: uuid('id').primaryKey().defaultRandom(),
  communityId: uuid('community_id').notNull(),
  title: text('title').notNull(),
  description: text('description').notNull().default(''),
  eventType: text('event_type').$type<EventFormat>().notNull().default('online'),
  location: text('location'),
  startsAt: timestamp('starts_at', { withTimezone: true }).notNull(),
  endsAt: timestamp('ends_at', { withTimezone: true }).notNull(),
  maxAttendees: integer('max_attendees'),
  /** Integer cents; 0 is free. */
  priceCents: integer('price_cents').notNull().default(0),
  /** ISO 4217. */
  currency: text('currency').notNull().default('BRL'),
  createdBy: uuid('created_by'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/** How an event is held (the API's `event_type`). */
export const EVENT_FORMATS = ['online', 'in_person'] as const;
export type EventFormat = (typeof EVENT_FORMATS)[number];
export type TribeEvent = typeof tribeEvents.$inferSelect;

/**
 * A member's seat at an event, with its ticket. Free events: confirmed at registration. Paid events: written
 * only when the order is paid (`confirmed`, or `refund_required` when the event filled up meanwhile).
 */
export const eventRegistrations = pgTable('event_registrations', {
  id: uuid('id').primaryKey().defaultRandom(),
  eventId: uuid('event_id').notNull(),
  communityId: uuid('community_id').notNull(),
  userId: uuid('user_id').notNull(),
  status: text('status').$type<RegistrationStatus>().notNull().default('confirmed'),
  /** 16 random bytes in base64url (22 characters); unique. */
  ticketCode: text('ticket_code').notNull(),
  /** The paid order that bought it (paid events). */
  orderId: uuid('order_id'),
  checkedInAt: timestamp('checked_in_at', { withTimezone: true }),
  checkedInBy: uuid('checked_in_by'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

export const REGISTRATION_STATUSES = ['confirmed', 'refund_required'] as const;
export type RegistrationStatus = (typeof REGISTRATION_STATUSES)[number];
export type EventRegistration = typeof eventRegistrations.$inferSelect;

/** Filter of the event list: not yet ended, ended, or every event. */
export const EVENT_LIST_STATUSES = ['upcoming', 'past', 'all'] as const;
export type EventListStatus = (typeof EVENT_LIST_STATUSES)[number];
