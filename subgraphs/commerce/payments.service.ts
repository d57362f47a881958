import { z } from 'zod';
import type { Logger } from 'pino';
import { getCommunityByHandle } from '../communities/index.js';
import { type AppDeps, DomainError, type RequestContext, acceptedSecrets, invalid, isUuid, notFound } from '../kernel/index.js';
import { requireRole } from '../members/index.js';
import { markOrderPaid, payNow } from './checkout.js';
import { findOrdersByIds } from './commerce.repository.js';
import { orderById } from './commerce.service.js';
import type { Order } from './commerce.tables.js';
import * as repo from './payments.repository.js';
import { recordPaymentRefs } from './refunds.service.js';
import { verifyStripeSignature } from './stripe.js';
import { fractionDigits } from './money.js';
import { receiveStripeRefund, STRIPE_REFUND_EVENTS } from './stripe-refunds.js';

/**
 * Stripe event types that pay an order named by `data.object.metadata.order_id`. A completed checkout session
 * pays only when its `payment_status` is `paid` (or absent); an asynchronous method (boleto) pays with
 * `checkout.session.async_payment_succeeded`.
 */
export const STRIPE_PAYING_EVENTS = ['checkout.session.completed', 'checkout.session.async_payment_succeeded', 'payment_intent.succeeded'] as const;

const stripeEvent = z.object({
  id: z.string().min(1).max(255),
  type: z.string().min(1).max(255),
  data: z.object({ object: z.record(z.string(), z.unknown()) }),
});

/** What the provider is answered on success (Stripe reads only the status). */
export interface WebhookReceipt {
  received: true;
}

const invalidPayload = () => invalid('invalid_payload', 'The body is not a Stripe event: {id, type, data: {object}}.');
const unknownOrder = () => invalid('unknown_order', 'data.object.metadata.order_id names no order.');

/**
 * Refuses a payment whose currency or amount differs from the order's. The amount is Stripe's smallest currency
 * unit, converted from the order's hundredths by the currency's decimals (zero, two or three).
 */
function checkAmount(order: Order, object: Record<string, unknown>): void {
  const currency = object.currency;
  if (typeof currency !== 'string' || currency.toUpperCase() !== order.currency) {
    throw invalid('amount_mismatch', `The payment must be in the order's currency (${order.currency}).`);
  }
  const amount = object.amount_total ?? object.amount_received ?? object.amount;
  // Stripe counts in the currency's smallest unit (yen: 1, dinar: 1/1000); orders in hundredths.
  const digits = fractionDigits(order.currency);
  const matches =
    typeof amount === 'number' &&
    Number.isInteger(amount) &&
    (digits >= 2 ? amount === order.amountCents * 10 ** (digits - 2) : amount * 10 ** (2 - digits) === order.amountCents);
  if (!matches) {
    throw invalid('amount_mismatch', `The payment must be for the order's amount (${order.amountCents} hundredths of ${order.currency}).`);
  }
}

/** Stripe's id of the payment: the payment intent (named by a checkout session, or the object itself), else the object's id. */
function stripePaymentId(object: Record<string, unknown>): string | null {
  if (typeof object.payment_intent === 'string' && object.payment_intent) return object.payment_intent.slice(0, 255);
  return typeof object.id === 'string' && object.id ? object.id.slice(0, 255) : null;
}

/**
 * Handles one inbound Stripe-format webhook (`POST /webhooks/payments/stripe`). Order of checks: the secret is
 * configured (else 503 `payments_not_configured`), the signature over the RAW body is valid and fresh (else 400
 * `invalid_signature`), the body is an event (400 `invalid_payload`). Paying events name our order in
 * `data.object.metadata.order_id` (400 `missing_order_id`, `unknown_order`, `amount_mismatch`); in ONE
 * transaction the provider event id is recorded, the order is marked paid, its item granted and `payment.completed`
 * and `order.paid` emitted. Refund events (`STRIPE_REFUND_EVENTS`) go to `receiveStripeRefund`. A provider event id seen before changes
 * nothing and is answered like the first time; other event types are acknowledged and ignored. Every refusal changes
 * nothing.
 */
export async function receiveStripeEvent(app: AppDeps, rawBody: Buffer, signatureHeader: string | undefined, log: Logger = app.log): Promise<WebhookReceipt> {
  const secret = app.config.payments.stripeWebhookSecret;
  if (!secret) throw new DomainError('unavailable', 'payments_not_configured', 'STRIPE_WEBHOOK_SECRET is not set.');
  const now = app.clock();
  const secrets = acceptedSecrets(secret, app.config.payments.stripeWebhookSecretPrevious);
  const failure = verifyStripeSignature({ header: signatureHeader, payload: rawBody, secret: secrets, now });
  if (failure) {
    log.warn({ reason: failure }, 'stripe webhook refused: bad signature');
    throw invalid('invalid_signature', 'The Stripe-Signature header does not match the body, or its timestamp is not within 300 seconds.');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw invalidPayload();
  }
  const result = stripeEvent.safeParse(parsed);
  if (!result.success) throw invalidPayload();
  const event = result.data;
  const object = event.data.object;
  if ((STRIPE_REFUND_EVENTS as readonly string[]).includes(event.type)) {
    await receiveStripeRefund(app, { id: event.id, type: event.type, object }, now, log);
    return { received: true };
  }
  if (!(STRIPE_PAYING_EVENTS as readonly string[]).includes(event.type)) return { received: true };
  // A session completed with a delayed method is not paid yet: its async_payment_succeeded event pays it.
  if (event.type === 'checkout.session.completed' && object.payment_status !== undefined && object.payment_status !== 'paid') {
    return { received: true };
  }
  const metadata = object.metadata as Record<string, unknown> | null | undefined;
  const orderId = metadata && typeof metadata === 'object' ? metadata.order_id : undefined;
  if (orderId === undefined || orderId === null || orderId === '') {
    throw invalid('missing_order_id', 'data.object.metadata.order_id is required.');
  }
  if (!isUuid(orderId)) throw unknownOrder();
  try {
    await app.database.db.transaction(async (tx) => {
      const [order] = await findOrdersByIds(tx, [orderId]);
      if (!order) throw unknownOrder();
      const first = await repo.recordProviderEvent(tx, { provider: 'stripe', eventId: event.id, eventType: event.type, orderId: order.id, receivedAt: now });
      if (!first) return; // a replay: processed before, nothing changes
      checkAmount(order, object);
      await markOrderPaid(app, tx, order.id, now, 'stripe', stripePaymentId(object));
      // A refund event names the payment (intent, charge), not our order: remember them.
      await recordPaymentRefs(tx, 'stripe', order.id, [object.id, object.payment_intent, object.latest_charge, object.charge]);
    });
  } catch (error) {
    if (error instanceof DomainError && error.code === 'not_found') throw unknownOrder();
    throw error;
  }
  return { received: true };
}

/**
 * The manual provider's confirmation on the Application API: the owner of the tribe `handle` marks one
 * of the tribe's orders paid. An order of another tribe is `not_found`; paying twice changes nothing.
 */
export async function markTribeOrderPaid(ctx: RequestContext, handle: string, orderId: string): Promise<Order> {
  const community = await getCommunityByHandle(ctx, handle);
  await requireRole(ctx, community.id, 'owner');
  const order = await orderById(ctx, orderId);
  if (!order || order.communityId !== community.id) throw notFound('Order');
  return payNow(ctx, order);
}
