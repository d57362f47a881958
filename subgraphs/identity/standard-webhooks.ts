import { createHmac, timingSafeEqual } from 'node:crypto';

/** Seconds a message's `webhook-timestamp` may differ from now, in either direction (the Standard Webhooks default). */
export const STANDARD_WEBHOOK_TOLERANCE_SECONDS = 300;

/** Longest message id accepted (Svix's ids are about 30 characters). */
export const STANDARD_WEBHOOK_MAX_ID_LENGTH = 255;

/** Why a message was refused (the log says which; the answer is always 400 `invalid_signature`). */
export type StandardWebhookFailure = 'missing_headers' | 'malformed_headers' | 'timestamp_out_of_tolerance' | 'no_matching_signature';

/** The three signature headers of one message, as sent. */
export interface StandardWebhookHeaders {
  id: string | undefined;
  timestamp: string | undefined;
  signature: string | undefined;
}

/**
 * Reads the signature headers with `get` (case-insensitive header lookup): the Standard Webhooks names
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature`) when `webhook-signature` is present, else Svix's
 * (`svix-id`, `svix-timestamp`, `svix-signature`). The two sets are never mixed.
 */
export function standardWebhookHeaders(get: (name: string) => string | undefined): StandardWebhookHeaders {
  const prefix = get('webhook-signature') !== undefined ? 'webhook' : 'svix';
  return { id: get(`${prefix}-id`), timestamp: get(`${prefix}-timestamp`), signature: get(`${prefix}-signature`) };
}

/** The HMAC key of a `whsec_<base64>` secret (the Svix and Standard Webhooks convention: the decoded bytes). */
export function standardWebhookKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
}

export interface StandardWebhookInput {
  headers: StandardWebhookHeaders;
  /** The raw request body, byte for byte as received (never re-serialised JSON). */
  payload: Buffer;
  /** The signing secret (`whsec_...`), or several (the current and the previous one during a rotation). */
  secret: string | readonly string[];
  now: Date;
  toleranceSeconds?: number;
}

/**
 * Verifies a Standard Webhooks (Svix) signature: base64 HMAC-SHA256, keyed with the secret's decoded bytes, over
 * `${id}.${timestamp}.${payload}`, compared in constant time with every `v1,<base64>` of the space-separated
 * signature header (other versions, such as `v1a`, are ignored); the timestamp (unix seconds) must be within the
 * tolerance of `now`, past or future. Returns null when valid, else the reason.
 */
export function verifyStandardWebhook(input: StandardWebhookInput): StandardWebhookFailure | null {
  const { headers, payload, secret, now, toleranceSeconds = STANDARD_WEBHOOK_TOLERANCE_SECONDS } = input;
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature) return 'missing_headers';
  // Printable ASCII only: the id is signed, stored and logged.
  if (id.length > STANDARD_WEBHOOK_MAX_ID_LENGTH || !/^[\x21-\x7e]+$/.test(id)) return 'malformed_headers';
  if (!/^\d{1,12}$/.test(timestamp) || signature.length > 8192) return 'malformed_headers';
  if (Math.abs(Math.floor(now.getTime() / 1000) - Number(timestamp)) > toleranceSeconds) return 'timestamp_out_of_tolerance';
  const secrets = typeof secret === 'string' ? [secret] : secret;
  const expected = secrets.map((one) =>
    createHmac('sha256', standardWebhookKey(one)).update(`${id}.${timestamp}.`).update(payload).digest(),
  );
  let matched = false;
  for (const versioned of signature.split(' ')) {
    const comma = versioned.indexOf(',');
    if (comma <= 0 || versioned.slice(0, comma) !== 'v1') continue;
    const encoded = versioned.slice(comma + 1);
    if (!/^[A-Za-z0-9+/]{43}=$/.test(encoded)) continue;
    const given = Buffer.from(encoded, 'base64');
    // Every candidate is compared with every secret's MAC (no early exit), each in constant time.
    for (const mac of expected) if (timingSafeEqual(mac, given)) matched = true;
  }
  return matched ? null : 'no_matching_signature';
}
