/** Event names the service sends today. New names may appear; treat unknown ones as ignorable. */
export type KnownEventType =
  | 'member.joined'
  | 'member.left'
  | 'member.removed'
  | 'order.paid'
  | 'order.refunded'
  | 'payment.completed'
  | 'post.created'
  | 'win.approved'
  | 'event.created'
  | 'ping';

/**
 * A verified delivery body. `id` is the delivery id (equal to `x-svc-delivery`, stable across
 * retries: the deduplication key); `created` is unix seconds at enqueue. Data fields are slim
 * and extensible: treat them as optional.
 */
export interface WebhookEvent<T = Record<string, unknown>> {
  id: string;
  type: KnownEventType | (string & {});
  created: number;
  data: T;
}

/** `data` of `order.paid`. Amounts are integers in the smallest unit of `currency` (cents). */
export interface OrderPaidData {
  orderId: string;
  /** Null when the buyer's account was deleted. */
  userId: string | null;
  /** The order's amount. */
  amount: number;
  currency: string;
  productType: string;
  productId: string | null;
  handle: string | null;
}

/**
 * `data` of `order.refunded`: the `order.paid` fields plus this refund. One delivery per increase of the refunded
 * total; `totalRefunded` never goes down and never exceeds `amount`.
 */
export interface OrderRefundedData extends OrderPaidData {
  /** What this refund gave back. */
  amountRefunded: number;
  /** Everything refunded on the order so far. */
  totalRefunded: number;
  /** `refunded` once `totalRefunded` equals `amount` (what the order bought is then taken back). */
  status: 'partially_refunded' | 'refunded';
}

/**
 * `data` of `payment.completed`: the `order.paid` fields plus the payment. Sent once per order that becomes paid, in
 * the same transaction as `order.paid` (the money side of it: reconcile with the provider's records).
 */
export interface PaymentCompletedData extends OrderPaidData {
  /** `stripe` or `manual`. */
  provider: string;
  /** The provider's id of the payment (Stripe's payment intent or checkout session); null for the manual provider. */
  paymentId: string | null;
  /** When the order was paid (ISO 8601). */
  paidAt: string;
}

/** The raw request body exactly as received. Parsed JSON is refused. */
export type RawPayload = string | Uint8Array | ArrayBuffer;

/** Anything with a case-insensitive `get`, such as a Fetch `Headers`. */
export interface HeadersLike {
  get(name: string): string | null;
}

/** A plain header object (Node's `req.headers` or your own); keys in any case. */
export type HeaderRecord = Readonly<Record<string, string | readonly string[] | undefined>>;

export type HeadersInput = HeadersLike | HeaderRecord;

/** The current time: a Date, unix seconds, or a function returning either. */
export type NowInput = Date | number | (() => Date | number);

/** Options shared by every verifying function. */
export interface VerifyOptions {
  /** The raw request body: string, Buffer, Uint8Array or ArrayBuffer. Never parsed JSON. */
  payload: RawPayload;
  /** The request headers: a plain object (any key case, string or string[] values) or Fetch `Headers`. */
  headers: HeadersInput;
  /** The endpoint's signing secret, `whsec_...`, used whole as the HMAC key. */
  secret: string;
  /** Largest allowed `|now - t|` in seconds. Default 300. `Infinity` disables the check (not advised). */
  toleranceSeconds?: number;
  /** Override the clock, for tests. */
  now?: NowInput;
}

/** Options for producing a signature header. */
export interface SignOptions {
  /** The exact body you will send. */
  payload: RawPayload;
  /** The signing secret, `whsec_...`. */
  secret: string;
  /** The `t` to sign: unix seconds or a Date. Default: now. */
  timestamp?: number | Date;
}

/** Options for {@link generateTestHeaders}. */
export interface TestHeadersOptions extends SignOptions {
  /** `x-svc-delivery`. Default: the body's `id`, else `evt_test`. */
  id?: string;
  /** `x-svc-event`. Default: the body's `type`, else `ping`. */
  event?: string;
}

/** The three headers the service sends with every delivery. (A type, not an interface, so it fits `HeadersInput`.) */
export type WebhookHeaders = {
  'x-svc-signature': string;
  'x-svc-delivery': string;
  'x-svc-event': string;
};
