import { pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** A member's win: pending until a moderator or above approves it. */
export const wins = pgTable('wins', {
  id: uuid('id').primaryKey().defaultRandom(),
  communityId: uuid('community_id').notNull(),
  authorId: uuid('author_id'),
  title: text('title').notNull(),
  content: text('content').notNull().default(''),
  status: text('status').$type<WinStatus>().notNull().default('pending'),
  approvedBy: uuid('approved_by'),
  approvedAt: timestamp('approved_at', { withTimezone: true }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

export const WIN_STATUSES = ['pending', 'approved'] as const;
export type WinStatus = (typeof WIN_STATUSES)[number];
export type Win = typeof wins.$inferSelect;
