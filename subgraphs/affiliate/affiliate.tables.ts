import { pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** One affiliate code per member per tribe. */
export const affiliateCodes = pgTable('affiliate_codes', {
  id: uuid('id').primaryKey().defaultRandom(),
  communityId: uuid('community_id').notNull(),
  userId: uuid('user_id').notNull(),
  code: text('code').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/** A click recorded by `POST /affiliate/track`. Nothing about the visitor is stored. */
export const affiliateClicks = pgTable('affiliate_clicks', {
  id: uuid('id').primaryKey().defaultRandom(),
  codeId: uuid('code_id').notNull(),
  communityId: uuid('community_id').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

export type AffiliateCode = typeof affiliateCodes.$inferSelect;
