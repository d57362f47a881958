import { integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

export const challenges = pgTable('challenges', {
  id: uuid('id').primaryKey().defaultRandom(),
  communityId: uuid('community_id').notNull(),
  title: text('title').notNull(),
  description: text('description').notNull().default(''),
  durationDays: integer('duration_days').notNull(),
  challengeType: text('challenge_type').$type<ChallengeType>().notNull(),
  accessType: text('access_type').$type<AccessType>().notNull(),
  /** Integer cents; above 0 exactly when `accessType` is `paid`. */
  priceCents: integer('price_cents').notNull().default(0),
  currency: text('currency').notNull().default('BRL'),
  /** XP awarded once when an enrollment has checked in on every day. */
  xpReward: integer('xp_reward').notNull().default(0),
  createdBy: uuid('created_by'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export const challengeEnrollments = pgTable('challenge_enrollments', {
  id: uuid('id').primaryKey().defaultRandom(),
  challengeId: uuid('challenge_id').notNull(),
  communityId: uuid('community_id').notNull(),
  userId: uuid('user_id').notNull(),
  status: text('status').$type<ChallengeEnrollmentStatus>().notNull().default('active'),
  orderId: uuid('order_id'),
  /** Day N opens at startedAt + (N - 1) × 24 h. */
  startedAt: timestamp('started_at', { withTimezone: true }).notNull(),
  completedDays: integer('completed_days').notNull().default(0),
  /** Consecutive checked-in days ending at `lastCheckinDay`. */
  streakRun: integer('streak_run').notNull().default(0),
  /** The highest day number checked in. */
  lastCheckinDay: integer('last_checkin_day'),
  lastCheckinAt: timestamp('last_checkin_at', { withTimezone: true }),
  xpEarned: integer('xp_earned').notNull().default(0),
  completedAt: timestamp('completed_at', { withTimezone: true }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

export const challengeCheckins = pgTable('challenge_checkins', {
  id: uuid('id').primaryKey().defaultRandom(),
  enrollmentId: uuid('enrollment_id').notNull(),
  challengeId: uuid('challenge_id').notNull(),
  userId: uuid('user_id').notNull(),
  dayNumber: integer('day_number').notNull(),
  content: text('content').notNull(),
  tags: text('tags').array().notNull().default([]),
  xpAwarded: integer('xp_awarded').notNull().default(0),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

export const CHALLENGE_TYPES = ['daily', 'weekly', 'custom'] as const;
export type ChallengeType = (typeof CHALLENGE_TYPES)[number];
export const ACCESS_TYPES = ['free', 'paid', 'members_only'] as const;
export type AccessType = (typeof ACCESS_TYPES)[number];
export type ChallengeEnrollmentStatus = 'active' | 'completed';
export type Challenge = typeof challenges.$inferSelect;
export type ChallengeEnrollment = typeof challengeEnrollments.$inferSelect;
export type ChallengeCheckin = typeof challengeCheckins.$inferSelect;
