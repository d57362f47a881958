import { jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** Platform staff (migration 0014): a role outside tribe roles. */
export const platformStaff = pgTable('platform_staff', {
  userId: uuid('user_id').primaryKey(),
  /** `config` (PLATFORM_ADMIN_EMAILS at start-up) or `script` (`npm run admin -- grant`). */
  grantedBy: text('granted_by').notNull(),
  grantedAt: timestamp('granted_at', { withTimezone: true }).notNull().defaultNow(),
});

/** What platform staff did, append-only (a trigger refuses updates and deletes). */
export const platformAuditLog = pgTable('platform_audit_log', {
  id: uuid('id').primaryKey().defaultRandom(),
  /** Null for the operator's script. */
  actorId: uuid('actor_id'),
  action: text('action').$type<PlatformAction>().notNull(),
  targetType: text('target_type').$type<'user' | 'community'>().notNull(),
  targetId: uuid('target_id').notNull(),
  reason: text('reason'),
  details: jsonb('details').$type<Record<string, unknown>>().notNull().default({}),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

export const PLATFORM_ACTIONS = [
  'staff.grant',
  'staff.revoke',
  'user.suspend',
  'user.unsuspend',
  'community.suspend',
  'community.unsuspend',
  'community.feature',
  'community.unfeature',
] as const;
export type PlatformAction = (typeof PLATFORM_ACTIONS)[number];
export type PlatformAuditRow = typeof platformAuditLog.$inferSelect;
