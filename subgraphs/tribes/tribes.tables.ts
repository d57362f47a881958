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
  createdBy: uuid('created_by'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export type Community = typeof communities.$inferSelect;
