import { integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** What a report or a moderation action is about. */
export const TARGET_TYPES = ['post', 'comment', 'user', 'message'] as const;
export type TargetType = (typeof TARGET_TYPES)[number];

/** Why a member reports something (the GraphQL enum `ReportReason` spells them in upper case). */
export const REPORT_REASONS = ['spam', 'harassment', 'hate', 'nsfw', 'misinformation', 'other'] as const;
export type ReportReason = (typeof REPORT_REASONS)[number];

/** Every action the tribe audit log records (`resolveReports` actions and their undos). */
export const AUDIT_ACTIONS = ['dismiss', 'remove_content', 'restore_content', 'warn', 'mute', 'unmute', 'ban', 'unban'] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const moderationReports = pgTable('moderation_reports', {
  id: uuid('id').primaryKey().defaultRandom(),
  communityId: uuid('community_id').notNull(),
  reporterId: uuid('reporter_id'),
  targetType: text('target_type').$type<TargetType>().notNull(),
  targetId: uuid('target_id').notNull(),
  subjectUserId: uuid('subject_user_id'),
  reason: text('reason').$type<ReportReason>().notNull(),
  note: text('note'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  resolvedAt: timestamp('resolved_at', { withTimezone: true }),
  resolvedBy: uuid('resolved_by'),
  resolution: text('resolution'),
});

/** One queue item per reported (or directly acted on) target of a tribe. */
export const moderationItems = pgTable('moderation_items', {
  id: uuid('id').primaryKey().defaultRandom(),
  communityId: uuid('community_id').notNull(),
  targetType: text('target_type').$type<TargetType>().notNull(),
  targetId: uuid('target_id').notNull(),
  subjectUserId: uuid('subject_user_id'),
  snapshot: text('snapshot'),
  status: text('status').$type<'open' | 'resolved'>().notNull(),
  lastReportAt: timestamp('last_report_at', { withTimezone: true }),
  resolvedAt: timestamp('resolved_at', { withTimezone: true }),
  resolvedBy: uuid('resolved_by'),
  action: text('action').$type<AuditAction>(),
  actionReason: text('action_reason'),
});

export const moderationWarnings = pgTable('moderation_warnings', {
  id: uuid('id').primaryKey().defaultRandom(),
  communityId: uuid('community_id').notNull(),
  userId: uuid('user_id').notNull(),
  warnedBy: uuid('warned_by'),
  reason: text('reason'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
});

/** Append-only (a trigger of migration 0013 refuses UPDATE, DELETE and TRUNCATE). */
export const moderationAuditLog = pgTable('moderation_audit_log', {
  id: uuid('id').primaryKey().defaultRandom(),
  communityId: uuid('community_id').notNull(),
  actorId: uuid('actor_id'),
  action: text('action').$type<AuditAction>().notNull(),
  targetType: text('target_type').$type<TargetType>().notNull(),
  targetId: uuid('target_id').notNull(),
  reason: text('reason'),
  durationHours: integer('duration_hours'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
});

export type Report = typeof moderationReports.$inferSelect;
export type ModerationItem = typeof moderationItems.$inferSelect;
export type ModerationWarning = typeof moderationWarnings.$inferSelect;
export type AuditEntry = typeof moderationAuditLog.$inferSelect;
