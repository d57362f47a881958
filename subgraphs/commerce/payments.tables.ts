import { pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** Inbound payment-provider events already processed, by the provider's own event id (replays are no-ops). */
export const paymentProviderEvents = pgTable(
  'payment_provider_events',
  {
    provider: text('provider').notNull(),
    eventId: text('event_id').notNull(),
    eventType: text('event_type').notNull(),
    orderId: uuid('order_id'),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.provider, t.eventId] })],
);

export type PaymentProviderEvent = typeof paymentProviderEvents.$inferSelect;
