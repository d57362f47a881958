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
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export const ORDER_STATUSES = ['pending', 'paid', 'failed', 'refunded'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];
export type Order = typeof orders.$inferSelect;
