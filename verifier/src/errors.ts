/**
 * Why a delivery was refused. Stable strings: safe to switch on and to return to the sender.
 *
 * - `missing_header`: the `x-svc-signature` header is absent or empty.
 * - `malformed_header`: the header has no usable `t=` or no `v1=` entry.
 * - `timestamp_out_of_range`: `|now - t|` is larger than the tolerance (300 s by default).
 * - `signature_mismatch`: no `v1=` entry equals the HMAC of `t.rawBody` under the secret.
 * - `payload_not_raw`: the payload is not raw bytes or text (for example parsed JSON),
 *   or it is correctly signed but is not a JSON object.
 */
export type WebhookVerificationErrorCode =
  | 'missing_header'
  | 'malformed_header'
  | 'timestamp_out_of_range'
  | 'signature_mismatch'
  | 'payload_not_raw';

/** Thrown (or rejected) when a delivery must not be trusted. `message` says how to fix it. */
export class WebhookVerificationError extends Error {
  readonly code: WebhookVerificationErrorCode;

  constructor(code: WebhookVerificationErrorCode, message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
    this.code = code;
  }
}
