import { integer, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** The provider's ids of an order's payment (session, payment intent, charge), recorded when it is paid (migration 0017). */
export const orderPaymentRefs = pgTable(
  'order_payment_refs',
  {
    provider: text('provider').notNull(),
    ref: text('ref').notNull(),
    orderId: uuid('order_id').notNull(),
  },
  (t) => [primaryKey({ columns: [t.provider, t.ref] })],
);

/** Where a refund stands; only `succeeded` counts towards the order's refunded amount. */
export const REFUND_STATUSES = ['pending', 'succeeded', 'failed', 'canceled'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];

/** One refund of an order, by its provider id (Stripe's `re_...`, or ours for the manual provider): counted once. */
export const orderRefunds = pgTable('order_refunds', {
  id: uuid('id').primaryKey().defaultRandom(),
  orderId: uuid('order_id').notNull(),
  communityId: uuid('community_id').notNull(),
  provider: text('provider').notNull(),
  refundId: text('refund_id').notNull(),
  /** Integer cents of the order's currency. */
  amountCents: integer('amount_cents').notNull(),
  status: text('status').$type<RefundStatus>().notNull(),
  reason: text('reason'),
  createdBy: uuid('created_by'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export type OrderRefund = typeof orderRefunds.$inferSelect;
