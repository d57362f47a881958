import { integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

export const members = pgTable('members', {
  id: uuid('id').primaryKey().defaultRandom(),
  communityId: uuid('community_id').notNull(),
  userId: uuid('user_id').notNull(),
  role: text('role').$type<Role>().notNull(),
  xp: integer('xp').notNull().default(0),
  level: integer('level').notNull().default(1),
  joinedAt: timestamp('joined_at', { withTimezone: true }).notNull().defaultNow(),
  /** The member's latest join, post, comment or reaction in the tribe: orders `me.memberships`. */
  lastActiveAt: timestamp('last_active_at', { withTimezone: true }).notNull().defaultNow(),
});

export const communityInvites = pgTable('community_invites', {
  code: text('code').primaryKey(),
  communityId: uuid('community_id').notNull(),
  createdBy: uuid('created_by'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  revokedAt: timestamp('revoked_at', { withTimezone: true }),
});

/** XP awarded to members, one row per award (`source_key` is unique: an award is never counted twice). */
export const xpAwards = pgTable('xp_awards', {
  id: uuid('id').primaryKey().defaultRandom(),
  communityId: uuid('community_id').notNull(),
  userId: uuid('user_id').notNull(),
  amount: integer('amount').notNull(),
  source: text('source').notNull(),
  sourceKey: text('source_key').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/** Mutes and bans of a user in a tribe (migration 0013): a mute ends by itself at `mutedUntil`; a ban stays until lifted. */
export const memberSanctions = pgTable('member_sanctions', {
  communityId: uuid('community_id').notNull(),
  userId: uuid('user_id').notNull(),
  mutedUntil: timestamp('muted_until', { withTimezone: true }),
  bannedAt: timestamp('banned_at', { withTimezone: true }),
});

export const ROLES = ['owner', 'admin', 'moderator', 'member'] as const;
export type Role = (typeof ROLES)[number];
export type Member = typeof members.$inferSelect;
export type MemberSanction = typeof memberSanctions.$inferSelect;
