// Synchronous verify and sign on node:crypto. Edge runtimes use ./web-crypto.ts instead.
import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  anySignatureMatches,
  buildTestHeaders,
  formatSignatureHeader,
  parseEvent,
  prepareSign,
  prepareVerification,
  signatureMismatch,
} from './core.js';
import type { SignOptions, TestHeadersOptions, VerifyOptions, WebhookEvent, WebhookHeaders } from './types.js';

/** HMAC of `${t}.` + payload without joining them into a new buffer. */
function signatureOf(secret: string, timestamp: number, payload: string | Uint8Array): Buffer {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(payload).digest();
}

const fromHex = (hex: string): Uint8Array => Buffer.from(hex, 'hex');

/** Runs every check but the body's JSON shape; returns the raw payload for parsing. */
function checkSignature(options: VerifyOptions): string | Uint8Array {
  const { payload, timestamp, signatures } = prepareVerification(options);
  const expected = signatureOf(options.secret, timestamp, payload);
  if (!anySignatureMatches(expected, signatures, timingSafeEqual, fromHex)) throw signatureMismatch();
  return payload;
}

/**
 * Verifies one delivery and returns its parsed body.
 *
 * Checks, in order: the payload is raw, `x-svc-signature` is present and has `t` and `v1`,
 * `|now - t|` is within `toleranceSeconds` (300), one `v1` equals HMAC-SHA256(secret, `t.rawBody`)
 * (constant-time), and the body is a JSON object.
 *
 * @throws {WebhookVerificationError} with a `code` saying which check failed.
 * @throws {TypeError} when the options themselves are wrong (no secret, bad tolerance).
 */
export function verify<T = Record<string, unknown>>(options: VerifyOptions): WebhookEvent<T> {
  return parseEvent<T>(checkSignature(options));
}

/**
 * The same checks as `verify` except the last: the body is not parsed. For receivers that keep or
 * queue the raw body as it came and parse it later (or with their own JSON parser).
 *
 * @throws {WebhookVerificationError} with a `code` saying which check failed.
 * @throws {TypeError} when the options themselves are wrong (no secret, bad tolerance).
 */
export function verifySignature(options: VerifyOptions): void {
  checkSignature(options);
}

/**
 * Returns the `x-svc-signature` value the service would send for this body and timestamp:
 * `t=<timestamp>,v1=<lowercase hex HMAC-SHA256>`.
 */
export function sign(options: SignOptions): string {
  const { bytes, timestamp } = prepareSign(options);
  return formatSignatureHeader(timestamp, signatureOf(options.secret, timestamp, bytes).toString('hex'));
}

/**
 * The three headers of a delivery of `payload`, signed with `secret`, for testing your handler:
 * send `payload` byte for byte as the body with these headers.
 */
export function generateTestHeaders(options: TestHeadersOptions): WebhookHeaders {
  const { bytes } = prepareSign(options);
  return buildTestHeaders(options, bytes, sign(options));
}
