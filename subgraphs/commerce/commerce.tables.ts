import { integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** Orders of a tribe: money in integer cents with an ISO 4217 currency. */
export const orders = pgTable('orders', {
  id: uuid('id').primaryKey().defaultRandom(),
  communityId: uuid('community_id').notNull(),
  buyerId: uuid('buyer_id'),
  /** What was bought, e.g. `course`, `event`, `challenge`, `membership`. */
  productType: text('product_type').notNull(),
  productId: uuid('product_id'),
  amountCents: integer('amount_cents').notNull(),
  currency: text('currency').notNull().default('BRL'),
  status: text('status').$type<OrderStatus>().notNull().default('pending'),
  paidAt: timestamp('paid_at', { withTimezone: true }),
  /** Refunded so far (integer cents, at most `amountCents`; only grows): migration 0017. */
  refundedCents: integer('refunded_cents').notNull().default(0),
  /** Who took the payment: `manual` or `stripe`; null until paid. */
  paymentProvider: text('payment_provider'),
  refundedAt: timestamp('refunded_at', { withTimezone: true }),
  /** A refund the owner must make (a paid registration that got no seat); cleared once fully refunded. */
  refundRequestedAt: timestamp('refund_requested_at', { withTimezone: true }),
  refundRequestReason: text('refund_request_reason'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export const ORDER_STATUSES = ['pending', 'paid', 'failed', 'partially_refunded', 'refunded'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];
export type Order = typeof orders.$inferSelect;
