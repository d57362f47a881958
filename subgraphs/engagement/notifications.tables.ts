import { boolean, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** The notification kinds (the GraphQL enum `NotificationKind` spells them in upper case). */
export const NOTIFICATION_KINDS = [
  'reply',
  'mention',
  'reaction',
  'event_created',
  'event_reminder',
  'role_changed',
  'win_approved',
  'course_completed',
  'message',
  'moderation_warning',
  'refund_required',
] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

/** Where a notification goes: in the web app, or in the daily email digest. */
export const CHANNELS = ['in_app', 'email'] as const;
export type Channel = (typeof CHANNELS)[number];

/**
 * The defaults where a user changed nothing: every kind in the app; by email only what asks for an answer or is time
 * bound (a reply, a mention, a message, tomorrow's event), and a moderator's warning.
 */
export const DEFAULT_PREFERENCES: Readonly<Record<NotificationKind, Readonly<Record<Channel, boolean>>>> = Object.freeze({
  reply: { in_app: true, email: true },
  mention: { in_app: true, email: true },
  reaction: { in_app: true, email: false },
  event_created: { in_app: true, email: false },
  event_reminder: { in_app: true, email: true },
  role_changed: { in_app: true, email: false },
  win_approved: { in_app: true, email: false },
  course_completed: { in_app: true, email: false },
  message: { in_app: true, email: true },
  moderation_warning: { in_app: true, email: true },
  refund_required: { in_app: true, email: true },
});

/**
 * Kinds that reach the user whatever they chose: a moderator's warning, or a refund the owner owes a buyer, is not
 * marketing, so a muted tribe or an IN_APP preference turned off does not stop it (its EMAIL preference still applies to the digest).
 */
export const ALWAYS_DELIVERED_KINDS: readonly NotificationKind[] = ['moderation_warning', 'refund_required'];

/** How many of the latest actors a notification keeps (its `actorCount` counts them all). */
export const LATEST_ACTORS = 5;

/** One notification of one recipient (see db/migrations/0010_notifications.sql). */
export const notifications = pgTable('notifications', {
  id: uuid('id').primaryKey().defaultRandom(),
  userId: uuid('user_id').notNull(),
  kind: text('kind').$type<NotificationKind>().notNull(),
  communityId: uuid('community_id'),
  /** The latest actors first, at most `LATEST_ACTORS`. */
  actorIds: uuid('actor_ids').array().notNull().default([]),
  actorCount: integer('actor_count').notNull().default(0),
  postId: uuid('post_id'),
  commentId: uuid('comment_id'),
  eventId: uuid('event_id'),
  winId: uuid('win_id'),
  courseId: uuid('course_id'),
  conversationId: uuid('conversation_id'),
  /** Small facts for the text (a role, a reaction kind, an event title); never content the recipient could not read. */
  data: jsonb('data').$type<Record<string, unknown>>().notNull().default({}),
  aggregateKey: text('aggregate_key'),
  dedupeKey: text('dedupe_key'),
  readAt: timestamp('read_at', { withTimezone: true }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});
export type Notification = typeof notifications.$inferSelect;

/** A user's change to a default of `DEFAULT_PREFERENCES`. */
export const notificationPreferences = pgTable(
  'notification_preferences',
  {
    userId: uuid('user_id').notNull(),
    kind: text('kind').$type<NotificationKind>().notNull(),
    channel: text('channel').$type<Channel>().notNull(),
    enabled: boolean('enabled').notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.kind, t.channel] })],
);

/** A tribe a user hears nothing from. */
export const notificationMutes = pgTable(
  'notification_mutes',
  {
    userId: uuid('user_id').notNull(),
    communityId: uuid('community_id').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.communityId] })],
);

/** Who a fan-out reaches: every member of the tribe, or the confirmed registrants of an event. */
export type FanoutAudience = 'tribe' | 'event_registrants';

/** A notification to a whole audience, written a chunk of recipients at a time. */
export const notificationFanouts = pgTable('notification_fanouts', {
  id: uuid('id').primaryKey().defaultRandom(),
  audience: text('audience').$type<FanoutAudience>().notNull(),
  kind: text('kind').$type<NotificationKind>().notNull(),
  communityId: uuid('community_id').notNull(),
  actorId: uuid('actor_id'),
  eventId: uuid('event_id'),
  dedupeKey: text('dedupe_key').notNull(),
  data: jsonb('data').$type<Record<string, unknown>>().notNull().default({}),
  afterUserId: uuid('after_user_id'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  doneAt: timestamp('done_at', { withTimezone: true }),
});
export type NotificationFanout = typeof notificationFanouts.$inferSelect;
