import { randomUUID } from 'node:crypto';
import DataLoader from 'dataloader';
import { z } from 'zod';
import type { Logger } from 'pino';
import type { Executor } from '../../db/src/index.js';
import {
  type AppDeps,
  type Connection,
  type RequestContext,
  conflict,
  invalid,
  isTimeAndId,
  isUuid,
  notFound,
  pageRequest,
  parseInput,
  requireUser,
  requestScoped,
  toConnection,
  requestLogger,
} from '../kernel/index.js';
import { requireRole, viewerRole } from '../members/index.js';
import { emitEvent } from '../outbox/index.js';
import { findOrder } from './commerce.repository.js';
import { orderEventData, orderFields } from './commerce.service.js';
import type { Order } from './commerce.tables.js';
import { recordOrderRefund } from './ledger.js';
import * as repo from './refunds.repository.js';
import type { OrderRefund, RefundStatus } from './refunds.tables.js';

export type { OrderRefund, RefundStatus } from './refunds.tables.js';

/** Statuses an order may be refunded from. */
const REFUNDABLE = new Set(['paid', 'partially_refunded', 'refunded']);

/** How far a refund's status has come: it only moves forward (an older event told late changes nothing). */
const STAGE: Record<RefundStatus, number> = { pending: 0, succeeded: 1, failed: 2, canceled: 2 };

/** One refund as the provider tells it, already converted to the order's integer cents. */
export interface ProviderRefund {
  provider: 'stripe' | 'manual';
  refundId: string;
  amountCents: number;
  status: RefundStatus;
  reason?: string | null;
  createdBy?: string | null;
}

/**
 * Raises an order's refunded total to `candidate` (capped at the order's amount; a total never goes down), inside `tx`
 * with the order locked. When it grows: the order becomes `partially_refunded` or `refunded`, the ledger reverses the
 * refunded share, `order.refunded` is emitted, and a full refund takes back what the order bought
 * (`AppDeps.revocations`) and clears the owner's refund request. `key` names this increase (a refund id) for the
 * ledger. Returns the order and whether it changed.
 */
async function raiseRefundedTotal(app: AppDeps, tx: Executor, order: Order, candidate: number, key: string, at: Date): Promise<{ order: Order; changed: boolean }> {
  const total = Math.min(order.amountCents, Math.max(order.refundedCents, candidate));
  if (total <= order.refundedCents) return { order, changed: false };
  const increase = total - order.refundedCents;
  const status = total === order.amountCents ? 'refunded' : 'partially_refunded';
  const updated = await repo.setRefunded(tx, order.id, { refundedCents: total, status, at });
  // The wallet: the tribe and the platform fee give back their shares of this increase (idempotent per key).
  await recordOrderRefund(tx, { orderId: order.id, refundId: key, amount: increase }, at);
  if (status === 'refunded') {
    const itemType = updated.productType as keyof typeof app.revocations;
    if (Object.hasOwn(app.revocations, itemType)) await app.revocations[itemType](tx, updated, at);
  }
  await emitEvent(tx, order.communityId, 'order.refunded', {
    ...(await orderEventData(tx, order)),
    amountRefunded: increase,
    totalRefunded: total,
    status,
  });
  return { order: updated, changed: true };
}

/**
 * Applies one refund told by its provider, inside `tx`, to an order it locks: the refund is recorded by its provider
 * id (the same refund told again, or told late with an older status, changes nothing: a status only moves forward),
 * and the order's refunded total becomes the sum of its succeeded refunds (capped at the order's amount, never lower
 * than before). The order must have been paid (`order_not_refundable` otherwise).
 */
export async function applyRefund(app: AppDeps, tx: Executor, orderId: string, refund: ProviderRefund, at: Date, log: Logger = app.log): Promise<{ order: Order; changed: boolean }> {
  const order = await repo.lockOrder(tx, orderId);
  if (!order) throw notFound('Order');
  if (!REFUNDABLE.has(order.status)) throw conflict('order_not_refundable', `The order is ${order.status}: only a paid order can be refunded.`);
  const known = await repo.lockRefund(tx, refund.provider, refund.refundId);
  if (!known) {
    await repo.insertRefund(tx, {
      orderId: order.id,
      communityId: order.communityId,
      provider: refund.provider,
      refundId: refund.refundId,
      amountCents: refund.amountCents,
      status: refund.status,
      reason: refund.reason ?? null,
      createdBy: refund.createdBy ?? null,
      createdAt: at,
      updatedAt: at,
    });
  } else if (known.orderId !== order.id) {
    throw invalid('unknown_order', 'This refund was recorded for another order.');
  } else if (STAGE[refund.status] > STAGE[known.status]) {
    if (known.status === 'succeeded') {
      // A refund that failed after succeeding: the total is not lowered (what it revoked stays revoked); staff look.
      log.warn({ orderId: order.id, refundId: refund.refundId, status: refund.status }, 'a succeeded refund changed status');
    }
    await repo.updateRefund(tx, known.id, { status: refund.status, amountCents: refund.amountCents, updatedAt: at });
  }
  return raiseRefundedTotal(app, tx, order, await repo.succeededTotal(tx, order.id), refund.refundId, at);
}

/**
 * Applies a provider's summary of an order's refunds (Stripe's `charge.refunded`: `amount_refunded`, the total so far):
 * the refunded total becomes at least that, so a summary of refunds already applied changes nothing, and refunds it
 * counts but that were not told one by one are not lost.
 */
export async function applyRefundedTotal(app: AppDeps, tx: Executor, orderId: string, totalCents: number, key: string, at: Date): Promise<{ order: Order; changed: boolean }> {
  const order = await repo.lockOrder(tx, orderId);
  if (!order) throw notFound('Order');
  if (!REFUNDABLE.has(order.status)) throw conflict('order_not_refundable', `The order is ${order.status}: only a paid order can be refunded.`);
  const byId = await repo.succeededTotal(tx, order.id);
  return raiseRefundedTotal(app, tx, order, Math.max(byId, totalCents), key, at);
}

/**
 * Marks a paid order for its owner to refund (a paid event registration that got no seat), inside the payment's
 * transaction, and tells the owner (`order.refund_required`, an internal event the notifications turn into a
 * `refund_required` notification). The owner refunds it with `refundOrder` (manual provider) or in Stripe's dashboard,
 * whose refund event completes it; a full refund clears the mark.
 */
export async function requestRefund(tx: Executor, order: Order, reason: string, at: Date): Promise<Order> {
  const marked = await repo.setRefundRequest(tx, order.id, reason, at);
  await emitEvent(tx, order.communityId, 'order.refund_required', { ...orderFields(order), reason });
  return marked;
}

/** Records the provider's ids of an order's payment (a later refund event names the payment, not our order). */
export function recordPaymentRefs(tx: Executor, provider: string, orderId: string, refs: readonly unknown[]): Promise<void> {
  const ids = [...new Set(refs.filter((r): r is string => typeof r === 'string' && r.length > 0 && r.length <= 255))];
  return repo.insertPaymentRefs(tx, provider, orderId, ids);
}

/** The order whose payment the provider named by any of `refs`. */
export function orderIdByPaymentRef(db: Executor, provider: string, refs: readonly unknown[]): Promise<string | undefined> {
  const ids = refs.filter((r): r is string => typeof r === 'string' && r.length > 0 && r.length <= 255);
  return repo.orderIdByPaymentRef(db, provider, ids);
}

// ---- the web app (GraphQL) ----

const amountInput = z.number().int('must be a whole number of cents').positive('must be above 0').nullish();
const reasonInput = z.string().trim().max(500, 'at most 500 characters').nullish();

/**
 * `refundOrder`: the owner of the order's tribe refunds a paid order on the manual provider (the money goes back
 * outside the platform; this records it). `amount` in integer cents, absent for all that is left to refund. Refusals:
 * a caller with no role in the order's tribe (or an unknown order) `not_found`; not the owner `forbidden`;
 * `invalid_amount` (not above 0), `amount_exceeds_refundable`, `order_not_refundable` (not paid or partially refunded),
 * `refund_through_provider` (paid through Stripe: refund it there; its refund event updates the order).
 */
export async function refundOrder(ctx: RequestContext, raw: { orderId: string; amount?: number | null; reason?: string | null }): Promise<Order> {
  const userId = requireUser(ctx);
  const input = {
    orderId: raw.orderId,
    amount: parseInput(z.object({ amount: amountInput }), { amount: raw.amount }, 'invalid_amount').amount,
    reason: parseInput(z.object({ reason: reasonInput }), { reason: raw.reason }, 'invalid_reason').reason,
  };
  if (!isUuid(input.orderId)) throw notFound('Order');
  const db = ctx.app.database.db;
  const found = await findOrder(db, input.orderId);
  if (!found || !(await viewerRole(ctx, found.communityId))) throw notFound('Order');
  await requireRole(ctx, found.communityId, 'owner');
  const reason = input.reason || null;
  const at = ctx.app.clock();
  return db.transaction(async (tx) => {
    const order = await repo.lockOrder(tx, found.id);
    if (!order) throw notFound('Order');
    if (order.status !== 'paid' && order.status !== 'partially_refunded') {
      throw invalid('order_not_refundable', `The order is ${order.status}: only a paid or partially refunded order can be refunded.`);
    }
    if (order.paymentProvider === 'stripe') {
      throw invalid('refund_through_provider', 'This order was paid through Stripe: refund it in Stripe; its refund event updates the order.');
    }
    const left = order.amountCents - order.refundedCents;
    if (left <= 0) throw invalid('order_not_refundable', 'Nothing is left to refund on this order.');
    const amount = input.amount ?? left;
    if (amount > left) throw invalid('amount_exceeds_refundable', `amount: at most ${left} cents are left to refund.`);
    const { order: refunded } = await applyRefund(
      ctx.app,
      tx,
      order.id,
      { provider: 'manual', refundId: `mre_${randomUUID()}`, amountCents: amount, status: 'succeeded', reason, createdBy: userId },
      at,
      requestLogger(ctx),
    );
    return refunded;
  });
}

/**
 * `refundRequests`: the tribe's orders waiting for a refund the owner must make (oldest request first, Relay cursors);
 * owner only.
 */
export async function refundRequests(ctx: RequestContext, communityId: string, args: { first?: number | null; after?: string | null }): Promise<Connection<Order>> {
  if (!isUuid(communityId)) throw notFound('Community');
  await requireRole(ctx, communityId, 'owner');
  const list = `refundRequests:${communityId}`;
  const page = pageRequest(ctx, list, args, isTimeAndId);
  const after = page.after ? { at: new Date(page.after[0]), id: page.after[1] } : null;
  const rows = await repo.refundRequests(ctx.app.database.db, communityId, page.limit + 1, after);
  return toConnection(ctx, list, rows, page.limit, (o) => [o.refundRequestedAt!.toISOString(), o.id]);
}

/** An order's refunds, oldest first (batched per request). Shown to whoever may see the order. */
export function refundsOf(ctx: RequestContext, orderId: string): Promise<OrderRefund[]> {
  const loader = requestScoped(
    ctx,
    'commerce.refundsOf',
    () =>
      new DataLoader<string, OrderRefund[]>(async (ids) => {
        const rows = await repo.refundsOfOrders(ctx.app.database.db, ids);
        return ids.map((id) => rows.filter((r) => r.orderId === id));
      }),
  );
  return loader.load(orderId);
}
