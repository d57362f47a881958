import { boolean, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

export const webhookEndpoints = pgTable('webhook_endpoints', {
  id: uuid('id').primaryKey().defaultRandom(),
  communityId: uuid('community_id').notNull(),
  url: text('url').notNull(),
  events: text('events').array().notNull(),
  description: text('description'),
  enabled: boolean('enabled').notNull().default(true),
  secret: text('secret').notNull(),
  createdBy: uuid('created_by'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export const webhookDeliveries = pgTable('webhook_deliveries', {
  id: uuid('id').primaryKey(),
  endpointId: uuid('endpoint_id').notNull(),
  communityId: uuid('community_id').notNull(),
  eventId: uuid('event_id'),
  event: text('event').notNull(),
  payload: text('payload').notNull(),
  status: text('status').$type<DeliveryStatus>().notNull().default('pending'),
  attempts: integer('attempts').notNull().default(0),
  responseStatus: integer('response_status'),
  responseTimeMs: integer('response_time_ms'),
  lastError: text('last_error'),
  nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }),
  deliveredAt: timestamp('delivered_at', { withTimezone: true }),
  claimId: uuid('claim_id'),
  claimedUntil: timestamp('claimed_until', { withTimezone: true }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  /** The `traceparent` of the request that wrote the event (its outbox row's), or null: each attempt's span links to it. */
  traceContext: text('trace_context'),
});

export const DELIVERY_STATUSES = ['pending', 'success', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
export type WebhookEndpoint = typeof webhookEndpoints.$inferSelect;
export type WebhookDelivery = typeof webhookDeliveries.$inferSelect;
