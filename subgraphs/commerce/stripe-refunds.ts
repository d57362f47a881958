import type { Logger } from 'pino';
import { type AppDeps, DomainError, invalid, isUuid } from '../kernel/index.js';
import { findOrder } from './commerce.repository.js';
import { fractionDigits } from './money.js';
import * as payments from './payments.repository.js';
import { applyRefund, applyRefundedTotal, orderIdByPaymentRef } from './refunds.service.js';
import type { RefundStatus } from './refunds.tables.js';

/**
 * Stripe event types that refund an order: a refund told one by one (`refund.created`, `refund.updated`, and the older
 * `charge.refund.updated`), and a charge's summary of its refunds (`charge.refunded`).
 */
export const STRIPE_REFUND_EVENTS = ['charge.refunded', 'refund.created', 'refund.updated', 'charge.refund.updated'] as const;

const STATUSES: Record<string, RefundStatus> = {
  pending: 'pending',
  requires_action: 'pending',
  succeeded: 'succeeded',
  failed: 'failed',
  canceled: 'canceled',
};

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

/**
 * Stripe's amount (the currency's smallest unit: yen, cents, 1/1000 dinar) in the order's hundredths, or null when it
 * is not a whole number of them (or not an integer at all).
 */
export function stripeAmountToCents(currency: string, amount: unknown): number | null {
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 0) return null;
  const digits = fractionDigits(currency);
  if (digits >= 2) {
    const factor = 10 ** (digits - 2);
    return amount % factor === 0 ? amount / factor : null;
  }
  return amount * 10 ** (2 - digits);
}

/**
 * Handles one signed refund event (the signature and the event's shape are checked by `receiveStripeEvent`). The order
 * is `data.object.metadata.order_id`, else the payment the object names (`payment_intent`, `charge`, or the charge's own
 * `id`) as recorded when the order was paid. In ONE transaction the provider event id is recorded (a replay changes
 * nothing) and the refund applied by its refund id (`refund.*`) or the charge's total (`charge.refunded`, with the
 * refunds it lists). Refusals change nothing: 400 `missing_order_id`, `unknown_order`, `amount_mismatch` (currency or
 * amount), 409 `order_not_refundable` (not paid yet: Stripe retries, and the payment event usually arrives meanwhile).
 */
export async function receiveStripeRefund(app: AppDeps, event: { id: string; type: string; object: Record<string, unknown> }, now: Date, log: Logger = app.log): Promise<void> {
  const object = event.object;
  const metadata = object.metadata && typeof object.metadata === 'object' ? (object.metadata as Record<string, unknown>) : {};
  const isCharge = event.type === 'charge.refunded';
  const refs = isCharge ? [object.id, object.payment_intent] : [object.payment_intent, object.charge];
  const named = metadata.order_id;
  if ((named === undefined || named === null || named === '') && !refs.some(str)) {
    throw invalid('missing_order_id', 'data.object.metadata.order_id, or a payment_intent or charge of a paid order, is required.');
  }
  const unknownOrder = () => invalid('unknown_order', 'The event names no order: neither metadata.order_id nor a payment recorded at payment.');
  try {
    await app.database.db.transaction(async (tx) => {
      let orderId: string | undefined;
      if (named !== undefined && named !== null && named !== '') {
        if (!isUuid(named)) throw unknownOrder();
        orderId = named;
      } else {
        orderId = await orderIdByPaymentRef(tx, 'stripe', refs);
      }
      const order = orderId ? await findOrder(tx, orderId) : undefined;
      if (!order) throw unknownOrder();
      const first = await payments.recordProviderEvent(tx, { provider: 'stripe', eventId: event.id, eventType: event.type, orderId: order.id, receivedAt: now });
      if (!first) return; // a replay: processed before, nothing changes
      const currency = str(object.currency)?.toUpperCase();
      if (currency !== order.currency) throw invalid('amount_mismatch', `The refund must be in the order's currency (${order.currency}).`);
      const cents = (amount: unknown) => {
        const value = stripeAmountToCents(order.currency, amount);
        if (value === null) throw invalid('amount_mismatch', 'The refund amount must be a whole number of the currency\'s smallest unit.');
        return value;
      };
      if (isCharge) {
        const listed = object.refunds && typeof object.refunds === 'object' ? (object.refunds as { data?: unknown }).data : undefined;
        for (const r of Array.isArray(listed) ? listed : []) {
          const refund = r as Record<string, unknown>;
          const id = str(refund.id);
          const status = STATUSES[String(refund.status ?? 'succeeded')];
          const amount = cents(refund.amount);
          if (!id || !status || amount === 0) continue;
          await applyRefund(app, tx, order.id, { provider: 'stripe', refundId: id, amountCents: amount, status, reason: str(refund.reason) ?? null }, now, log);
        }
        await applyRefundedTotal(app, tx, order.id, cents(object.amount_refunded), `${String(object.id ?? event.id)}:${String(object.amount_refunded)}`, now);
        return;
      }
      const refundId = str(object.id);
      const status = STATUSES[String(object.status ?? '')];
      if (!refundId || !status) throw invalid('invalid_payload', 'A refund event needs data.object.id and a known status.');
      const amount = cents(object.amount);
      if (amount === 0) throw invalid('amount_mismatch', 'A refund of 0 refunds nothing.');
      await applyRefund(app, tx, order.id, { provider: 'stripe', refundId, amountCents: amount, status, reason: str(object.reason) ?? null }, now, log);
    });
  } catch (error) {
    if (error instanceof DomainError && error.code === 'not_found') throw unknownOrder();
    throw error;
  }
}
