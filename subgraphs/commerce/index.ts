export { platformOrders, orderById } from './commerce.service.js';
export type { Order, OrderStatus } from './commerce.service.js';
export { ORDER_STATUSES } from './commerce.tables.js';
export {
  ensurePendingOrder,
  startCheckout,
  markOrderPaid,
  markOrderPaidManually,
  manualCheckout,
} from './checkout.js';
export type { ItemType, PendingOrderInput, FulfilmentHandler, FulfilmentTable, RevocationHandler, RevocationTable, CheckoutInfo, CheckoutProvider } from './checkout.js';
export { refundOrder, refundRequests, refundsOf } from './refunds.service.js';
export type { OrderRefund, RefundStatus } from './refunds.service.js';
export { STRIPE_REFUND_EVENTS } from './stripe-refunds.js';
export { toCents, fromCents, priceSchema, currencySchema, refinePriceToCurrency, DEFAULT_CURRENCY, MAX_PRICE_CENTS } from './money.js';
export { receiveStripeEvent, markTribeOrderPaid, STRIPE_PAYING_EVENTS } from './payments.service.js';
export type { WebhookReceipt } from './payments.service.js';
export { verifyStripeSignature, STRIPE_TOLERANCE_SECONDS } from './stripe.js';
export type { StripeSignatureFailure, StripeSignatureInput } from './stripe.js';
// Platform statistics (platform-admin's platformStats): one set-based statement.
export { paidOrdersByCurrency } from './stats.repository.js';
