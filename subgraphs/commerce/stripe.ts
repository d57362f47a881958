import { createHmac, timingSafeEqual } from 'node:crypto';

/** Seconds a Stripe signature's `t` may differ from now, in either direction (Stripe's default). */
export const STRIPE_TOLERANCE_SECONDS = 300;

/** Why a signature was refused (for the log; the client only ever sees `invalid_signature`). */
export type StripeSignatureFailure = 'missing_header' | 'malformed_header' | 'timestamp_out_of_tolerance' | 'no_matching_signature';

export interface StripeSignatureInput {
  /** The `Stripe-Signature` header: `t=<unix seconds>,v1=<hex>[,v1=<hex>...]` (other schemes are ignored). */
  header: string | undefined;
  /** The raw request body, byte for byte as received (never re-serialised JSON). */
  payload: Buffer;
  /**
   * The endpoint's signing secret (`whsec_...`), used as is as the HMAC key, as Stripe does; or several (the current
   * and the previous one during a rotation): a `v1` made with any of them is accepted.
   */
  secret: string | readonly string[];
  now: Date;
  toleranceSeconds?: number;
}

/**
 * Verifies a Stripe-format webhook signature: HMAC-SHA256 with the secret over `${t}.${payload}`, compared in
 * constant time with every `v1` of the header; `t` must be within the tolerance of `now` (past or future).
 * Returns null when valid, else the reason.
 */
export function verifyStripeSignature(input: StripeSignatureInput): StripeSignatureFailure | null {
  const { header, payload, secret, now, toleranceSeconds = STRIPE_TOLERANCE_SECONDS } = input;
  if (!header) return 'missing_header';
  if (header.length > 4096) return 'malformed_header';
  let t: string | undefined;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't' && t === undefined) t = value;
    else if (key === 'v1') v1.push(value);
  }
  if (!t || !/^\d{1,12}$/.test(t) || v1.length === 0) return 'malformed_header';
  // Whole seconds, as Stripe's own libraries compare them.
  if (Math.abs(Math.floor(now.getTime() / 1000) - Number(t)) > toleranceSeconds) return 'timestamp_out_of_tolerance';
  const secrets = typeof secret === 'string' ? [secret] : secret;
  const expected = secrets.map((one) => createHmac('sha256', one).update(`${t}.`).update(payload).digest());
  let matched = false;
  for (const candidate of v1) {
    if (!/^[0-9a-fA-F]{64}$/.test(candidate)) continue;
    // Every candidate is compared with every secret's MAC (no early exit), each in constant time.
    const given = Buffer.from(candidate, 'hex');
    for (const mac of expected) if (timingSafeEqual(mac, given)) matched = true;
  }
  return matched ? null : 'no_matching_signature';
}
