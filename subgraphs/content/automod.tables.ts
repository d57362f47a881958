import { boolean, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** A tribe's automod settings (migration 0015); a tribe without a row has `DEFAULT_MODERATION_SETTINGS`. */
export const communityModerationSettings = pgTable('community_moderation_settings', {
  communityId: uuid('community_id').primaryKey(),
  blockedWords: text('blocked_words').array().notNull().default([]),
  blockedDomains: text('blocked_domains').array().notNull().default([]),
  newMemberPostLimit: integer('new_member_post_limit').notNull().default(3),
  requireApproval: boolean('require_approval').notNull().default(false),
  updatedBy: uuid('updated_by'),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export type ModerationSettingsRow = typeof communityModerationSettings.$inferSelect;
