import { pgTable, timestamp, uuid } from 'drizzle-orm/pg-core';

/** Per user: every notification updated up to `sentThrough` was in a digest already (or predates the first digest). */
export const digestState = pgTable('digest_state', {
  userId: uuid('user_id').primaryKey(),
  sentThrough: timestamp('sent_through', { withTimezone: true }).notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
});
