import { and, asc, eq, gt, inArray, isNotNull, or, sql } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import { orders, type Order } from './commerce.tables.js';
import { orderPaymentRefs, orderRefunds, type OrderRefund, type RefundStatus } from './refunds.tables.js';

/** The order, locked until the transaction ends (`select ... for update`): refunds of one order are serialised. */
export async function lockOrder(tx: Executor, id: string): Promise<Order | undefined> {
  const [row] = await tx.select().from(orders).where(eq(orders.id, id)).for('update').limit(1);
  return row;
}

/** Records the provider's ids of an order's payment; ids known already are kept as they are. */
export async function insertPaymentRefs(tx: Executor, provider: string, orderId: string, refs: readonly string[]): Promise<void> {
  if (refs.length === 0) return;
  await tx
    .insert(orderPaymentRefs)
    .values(refs.map((ref) => ({ provider, ref, orderId })))
    .onConflictDoNothing();
}

/** The order whose payment the provider named by any of `refs`, if any. */
export async function orderIdByPaymentRef(db: Executor, provider: string, refs: readonly string[]): Promise<string | undefined> {
  if (refs.length === 0) return undefined;
  const [row] = await db
    .select({ orderId: orderPaymentRefs.orderId })
    .from(orderPaymentRefs)
    .where(and(eq(orderPaymentRefs.provider, provider), inArray(orderPaymentRefs.ref, [...refs])))
    .limit(1);
  return row?.orderId;
}

/** A refund by its provider id, locked until the transaction ends. */
export async function lockRefund(tx: Executor, provider: string, refundId: string): Promise<OrderRefund | undefined> {
  const [row] = await tx
    .select()
    .from(orderRefunds)
    .where(and(eq(orderRefunds.provider, provider), eq(orderRefunds.refundId, refundId)))
    .for('update')
    .limit(1);
  return row;
}

export async function insertRefund(tx: Executor, values: typeof orderRefunds.$inferInsert): Promise<OrderRefund> {
  const [row] = await tx.insert(orderRefunds).values(values).returning();
  return row;
}

export async function updateRefund(tx: Executor, id: string, values: { status: RefundStatus; amountCents: number; updatedAt: Date }): Promise<void> {
  await tx.update(orderRefunds).set(values).where(eq(orderRefunds.id, id));
}

/** The sum of an order's succeeded refunds (integer cents). */
export async function succeededTotal(tx: Executor, orderId: string): Promise<number> {
  const [row] = await tx
    .select({ total: sql<string | number>`coalesce(sum(${orderRefunds.amountCents}), 0)` })
    .from(orderRefunds)
    .where(and(eq(orderRefunds.orderId, orderId), eq(orderRefunds.status, 'succeeded')));
  return Number(row?.total ?? 0);
}

/** Sets what an order has refunded so far and its status; a full refund clears its refund request. */
export async function setRefunded(
  tx: Executor,
  id: string,
  values: { refundedCents: number; status: 'partially_refunded' | 'refunded'; at: Date },
): Promise<Order> {
  const full = values.status === 'refunded';
  const [row] = await tx
    .update(orders)
    .set({
      refundedCents: values.refundedCents,
      status: values.status,
      refundedAt: values.at,
      updatedAt: values.at,
      ...(full ? { refundRequestedAt: null, refundRequestReason: null } : {}),
    })
    .where(eq(orders.id, id))
    .returning();
  return row;
}

/** Marks an order for its owner to refund (the first request's time and reason are kept). */
export async function setRefundRequest(tx: Executor, id: string, reason: string, at: Date): Promise<Order> {
  const [row] = await tx
    .update(orders)
    .set({
      refundRequestedAt: sql`coalesce(${orders.refundRequestedAt}, ${at.toISOString()}::timestamptz)`,
      refundRequestReason: sql`coalesce(${orders.refundRequestReason}, ${reason})`,
      updatedAt: at,
    })
    .where(eq(orders.id, id))
    .returning();
  return row;
}

/**
 * A tribe's orders waiting for a refund the owner must make, oldest request first, keyset after
 * (requestedAt, id).
 */
export async function refundRequests(db: Executor, communityId: string, limit: number, after: { at: Date; id: string } | null): Promise<Order[]> {
  const keyset = after
    ? or(gt(orders.refundRequestedAt, after.at), and(eq(orders.refundRequestedAt, after.at), gt(orders.id, after.id)))
    : undefined;
  return db
    .select()
    .from(orders)
    .where(and(eq(orders.communityId, communityId), isNotNull(orders.refundRequestedAt), keyset))
    .orderBy(asc(orders.refundRequestedAt), asc(orders.id))
    .limit(limit);
}

/** The refunds of some orders, oldest first (one statement for a page of orders). */
export async function refundsOfOrders(db: Executor, orderIds: readonly string[]): Promise<OrderRefund[]> {
  if (orderIds.length === 0) return [];
  return db
    .select()
    .from(orderRefunds)
    .where(inArray(orderRefunds.orderId, [...orderIds]))
    .orderBy(asc(orderRefunds.createdAt), asc(orderRefunds.id));
}
