import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import { orders, type Order } from './commerce.tables.js';

export async function findOrdersByIds(db: Executor, ids: readonly string[]): Promise<Order[]> {
  if (ids.length === 0) return [];
  return db.select().from(orders).where(inArray(orders.id, [...ids]));
}

/** Orders of a tribe, newest first. */
export async function listOrders(db: Executor, communityId: string, limit: number, offset: number): Promise<Order[]> {
  return db
    .select()
    .from(orders)
    .where(eq(orders.communityId, communityId))
    .orderBy(desc(orders.createdAt), desc(orders.id))
    .limit(limit)
    .offset(offset);
}

/** What a new pending order holds. */
export type PendingOrderValues = Pick<typeof orders.$inferInsert, 'communityId' | 'buyerId' | 'productType' | 'productId' | 'amountCents' | 'currency'>;

/**
 * Inserts a pending order unless the buyer has one for that item already (the partial unique index
 * `orders_pending_item_key` on buyer and item, where pending); returns the new row, or undefined.
 */
export async function insertPendingIfAbsent(db: Executor, values: PendingOrderValues): Promise<Order | undefined> {
  const [inserted] = await db
    .insert(orders)
    .values({ ...values, status: 'pending' })
    .onConflictDoNothing({ target: [orders.buyerId, orders.productType, orders.productId], where: sql`status = 'pending'` })
    .returning();
  return inserted;
}

/** The buyer's pending order for the item, if any. */
export async function findPending(db: Executor, buyerId: string, productType: string, productId: string): Promise<Order | undefined> {
  const [existing] = await db
    .select()
    .from(orders)
    .where(and(eq(orders.buyerId, buyerId), eq(orders.productType, productType), eq(orders.productId, productId), eq(orders.status, 'pending')))
    .limit(1);
  return existing;
}

/** Marks the order paid at `paidAt` if it is pending; returns the paid row, or undefined when it was not pending (or is unknown). */
export async function markPaidIfPending(db: Executor, id: string, paidAt: Date, provider: string): Promise<Order | undefined> {
  const [paid] = await db
    .update(orders)
    .set({ status: 'paid', paidAt, updatedAt: paidAt, paymentProvider: provider })
    .where(and(eq(orders.id, id), eq(orders.status, 'pending')))
    .returning();
  return paid;
}

/** One order by id, read through `db` (for example inside a transaction). */
export async function findOrder(db: Executor, id: string): Promise<Order | undefined> {
  const [row] = await db.select().from(orders).where(eq(orders.id, id)).limit(1);
  return row;
}
