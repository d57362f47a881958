import { boolean, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** Tribes (communities): the record every other domain refers to by `community_id`. */
export const communities = pgTable('communities', {
  id: uuid('id').primaryKey().defaultRandom(),
  handle: text('handle').notNull(),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  isPublic: boolean('is_public').notNull().default(true),
  category: text('category'),
  settings: jsonb('settings').notNull().default({}),
  /** Free-form integration data its owner or admins set (migration 0032; rules: communities.metadata.ts). */
  metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
  createdBy: uuid('created_by'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  /** Suspended by platform staff (migration 0014): read-only for everyone, Platform API keys refused. */
  suspendedAt: timestamp('suspended_at', { withTimezone: true }),
  suspensionReason: text('suspension_reason'),
  /** Featured by platform staff: first in discover. */
  featuredAt: timestamp('featured_at', { withTimezone: true }),
});

export type Community = typeof communities.$inferSelect;
