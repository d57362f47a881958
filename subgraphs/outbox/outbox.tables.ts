import { jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** The transactional outbox: one row per event, written in the transaction of the change it announces. */
/** The channel on which a statement adding outbox events is announced, at commit (migration 0034's trigger). */
export const OUTBOX_CHANNEL = 'svc_outbox';

export const outboxEvents = pgTable('outbox_events', {
  id: uuid('id').primaryKey().defaultRandom(),
  communityId: uuid('community_id'),
  type: text('type').notNull(),
  data: jsonb('data').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  processedAt: timestamp('processed_at', { withTimezone: true }),
  /** When the notifications consumer took the event (independent of the webhook fan-out's `processedAt`). */
  notifiedAt: timestamp('notified_at', { withTimezone: true }),
  /** The W3C `traceparent` of the request that wrote the event (null when tracing is off): fan-out and delivery spans link to it. */
  traceContext: text('trace_context'),
});

/** Event names the outbox records; every one of them is a webhook event a tribe's endpoint can subscribe to. */
export const SUBSCRIBABLE_EVENTS = [
  'member.joined',
  'member.left',
  'member.removed',
  'order.paid',
  'order.refunded',
  'payment.completed',
  'post.created',
  'win.approved',
  'event.created',
] as const;
/** The name of an outbox event (`member.joined`, `order.paid`, ...): the webhook body's `type`. */
export type OutboxEventType = (typeof SUBSCRIBABLE_EVENTS)[number];

/**
 * Internal domain events: recorded in the same outbox, in the transaction of the change, for in-process consumers (the
 * notifications issue). They are not webhook event types: no endpoint can subscribe to them and fan-out skips them.
 */
export const INTERNAL_EVENTS = ['post.mentioned', 'comment.replied', 'post.reacted', 'member.role_changed', 'course.completed', 'order.refund_required'] as const;
export type InternalEventType = (typeof INTERNAL_EVENTS)[number];

/** An outbox row waiting for fan-out. */
export interface OutboxEvent {
  id: string;
  communityId: string | null;
  type: string;
  data: Record<string, unknown>;
  createdAt: Date;
  /** The writing request's `traceparent`, or null. */
  traceContext: string | null;
}
