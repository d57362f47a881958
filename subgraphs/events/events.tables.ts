import { integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** Calendar events of a tribe (`tribe_events`: the table `events` is the transactional outbox). */
export const tribeEvents = pgTable('tribe_events', {
  id: uuid('id').primaryKey().defaultRandom(),
  communityId: uuid('community_id').notNull(),
  title: text('title').notNull(),
  description: text('description').notNull().default(''),
  eventType: text('event_type').$type<EventType>().notNull().default('online'),
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

export const EVENT_TYPES = ['online', 'in_person'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
export type TribeEvent = typeof tribeEvents.$inferSelect;
