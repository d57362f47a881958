import type { Executor } from '../../db/src/index.js';
import { type AppDeps, type RequestContext, conflict, isUuid, notFound } from '../kernel/index.js';
import { requireRole } from '../members/index.js';
import { emitEvent } from '../outbox/index.js';
import { orderById, orderEventData } from './commerce.service.js';
import * as repo from './commerce.repository.js';
import { recordOrderPaid } from './ledger.js';
import type { Order } from './commerce.tables.js';
import { requestRefund } from './refunds.service.js';

/** What an order can buy. */
export type ItemType = 'course' | 'challenge' | 'event';

export interface PendingOrderInput {
  communityId: string;
  buyerId: string;
  itemType: ItemType;
  itemId: string;
  /** Integer cents, above 0. */
  amountCents: number;
  /** ISO 4217, upper case. */
  currency: string;
}

/**
 * The buyer's pending order for the item, created when there is none. Safe under concurrency: the partial
 * unique index `orders_pending_item_key` (buyer, item) where pending lets only one exist, so callers racing
 * each other all get the same order. An existing pending order is returned as it is (its amount included).
 */
export async function ensurePendingOrder(tx: Executor, input: PendingOrderInput): Promise<{ order: Order; created: boolean }> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const inserted = await repo.insertPendingIfAbsent(tx, {
      communityId: input.communityId,
      buyerId: input.buyerId,
      productType: input.itemType,
      productId: input.itemId,
      amountCents: input.amountCents,
      currency: input.currency,
    });
    if (inserted) return { order: inserted, created: true };
    const existing = await repo.findPending(tx, input.buyerId, input.itemType, input.itemId);
    if (existing) return { order: existing, created: false };
    // The pending order was paid between the two statements: the next insert creates a new one.
  }
  throw new Error('ensurePendingOrder: no stable pending order after 3 attempts');
}

/**
 * Grants what a paid order buys (activates the enrollment, confirms the registration). Runs inside the
 * transaction that marks the order paid; throwing rolls the payment back too. It answers `{ refundRequired }`
 * (why) when it could not grant the item although the money was taken (an event filled up while the buyer paid):
 * the order is then marked for the owner to refund (`docs/events-and-payments.md`, Refunds).
 */
export type FulfilmentHandler = (tx: Executor, order: Order, paidAt: Date) => Promise<void | { refundRequired: string }>;

/**
 * Takes back what a fully refunded order bought (cancels the enrollment or the registration, freeing its seat),
 * inside the transaction that records the refund. Nothing to take back is not an error.
 */
export type RevocationHandler = (tx: Executor, order: Order, at: Date) => Promise<void>;

/** The fulfilment of every item type (`AppDeps.fulfilments`, built by `server/deps.ts` from each domain's handler). */
export type FulfilmentTable = Readonly<Record<ItemType, FulfilmentHandler>>;

/** What a full refund takes back, per item type (`AppDeps.revocations`, built by `server/deps.ts`). */
export type RevocationTable = Readonly<Record<ItemType, RevocationHandler>>;

declare module '../kernel/context.js' {
  interface AppDeps {
    /** The payment provider new checkouts use (`manualCheckout` unless `server/deps.ts` picks another). */
    checkout: CheckoutProvider;
    /** What a paid order grants, per item type: `markOrderPaid` runs it. */
    fulfilments: FulfilmentTable;
    /** What a full refund takes back, per item type: refunds run it. */
    revocations: RevocationTable;
  }
}

/**
 * Marks a pending order paid, runs its item type's fulfilment, records it in the wallet's ledger and emits
 * `payment.completed` (the money came in: provider and payment reference) and `order.paid` (the order is paid, its
 * item granted), all in `tx` (all or nothing). Idempotent: an order already paid (also one refunded since) changes
 * nothing, emits nothing and returns `changed: false`. An unknown order is `not_found`; a failed one (or one refunded
 * without a payment) is `order_not_payable` (409). `paymentId`: the provider's id of the payment (Stripe's payment
 * intent or checkout session), null for the manual provider.
 */
export async function markOrderPaid(
  app: AppDeps,
  tx: Executor,
  orderId: string,
  paidAt: Date = new Date(),
  provider: 'manual' | 'stripe' = 'manual',
  paymentId: string | null = null,
): Promise<{ order: Order; changed: boolean }> {
  if (!isUuid(orderId)) throw notFound('Order');
  const paid = await repo.markPaidIfPending(tx, orderId, paidAt, provider);
  if (!paid) {
    const existing = await repo.findOrder(tx, orderId);
    if (!existing) throw notFound('Order');
    // Paid before (and maybe refunded since): the payment told again changes nothing (Stripe would retry a 409 for days).
    if (existing.status === 'paid' || (existing.paidAt && (existing.status === 'partially_refunded' || existing.status === 'refunded'))) {
      return { order: existing, changed: false };
    }
    throw conflict('order_not_payable', `The order is ${existing.status} and cannot be paid.`);
  }
  const fulfil = Object.hasOwn(app.fulfilments, paid.productType) ? app.fulfilments[paid.productType as ItemType] : undefined;
  if (!fulfil) throw new Error(`no fulfilment is configured for orders of ${paid.productType}`);
  const outcome = await fulfil(tx, paid, paidAt);
  // The wallet's ledger: the price less the platform fee to the tribe's pending balance (docs/wallet.md).
  await recordOrderPaid(tx, { orderId: paid.id }, { feeBps: app.config.wallet.platformFeeBps, holdDays: app.config.wallet.payoutHoldDays });
  const data = await orderEventData(tx, paid);
  await emitEvent(tx, paid.communityId, 'payment.completed', { ...data, provider, paymentId, paidAt: paidAt.toISOString() });
  await emitEvent(tx, paid.communityId, 'order.paid', data);
  if (outcome?.refundRequired) return { order: await requestRefund(tx, paid, outcome.refundRequired, paidAt), changed: true };
  return { order: paid, changed: true };
}

/** What a client needs to pay an order; `provider` names the provider, the rest is the provider's own. */
export interface CheckoutInfo {
  provider: string;
  /** A hosted payment page, when the provider has one. */
  url?: string | null;
  [key: string]: unknown;
}

/** A payment provider behind one interface, so the checkout flow does not depend on which one is used. */
export interface CheckoutProvider {
  readonly name: string;
  /** Checkout information for a pending order (may call the provider; never inside a database transaction). */
  checkout(order: Order): Promise<CheckoutInfo>;
}

/**
 * The development provider: nothing to redirect to; an owner or admin of the tribe marks the order paid
 * (GraphQL `markOrderPaid`), which stands in for the provider's confirmation.
 */
export const manualCheckout: CheckoutProvider = {
  name: 'manual',
  checkout: async () => ({ provider: 'manual' }),
};

/**
 * The buyer's pending order for a paid item (the same one on every call) and what the provider's checkout
 * needs: what enroll and register answer before payment.
 */
export async function startCheckout(app: AppDeps, input: PendingOrderInput): Promise<{ order: Order; checkout: CheckoutInfo }> {
  const { order } = await app.database.db.transaction((tx) => ensurePendingOrder(tx, input));
  return { order, checkout: await app.checkout.checkout(order) };
}

/**
 * The manual provider's confirmation (the issue: an owner-only operation): the owner of the order's tribe marks a pending order paid.
 * Unknown orders are `not_found`; paying twice changes nothing the second time.
 */
export async function markOrderPaidManually(ctx: RequestContext, orderId: string): Promise<Order> {
  const found = await orderById(ctx, orderId);
  if (!found) throw notFound('Order');
  await requireRole(ctx, found.communityId, 'owner');
  return payNow(ctx, found);
}

/** Marks an order paid now, in its own transaction; the caller has checked who may. */
export async function payNow(ctx: RequestContext, found: Order): Promise<Order> {
  const { order } = await ctx.app.database.db.transaction((tx) => markOrderPaid(ctx.app, tx, found.id, ctx.app.clock()));
  return order;
}
