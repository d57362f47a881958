// verifyAsync and signAsync on Web Crypto (globalThis.crypto.subtle) only: runs on
// Cloudflare Workers, Deno, Bun, browsers and Node >= 19 (Node 18 with --experimental-global-webcrypto).
import {
  anySignatureMatches,
  buildTestHeaders,
  bytesToHex,
  constantTimeEqual,
  formatSignatureHeader,
  parseEvent,
  prepareSign,
  prepareVerification,
  signatureMismatch,
  signedContent,
} from './core.js';
import type { SignOptions, TestHeadersOptions, VerifyOptions, WebhookEvent, WebhookHeaders } from './types.js';

const encoder = new TextEncoder();
// One endpoint usually has one secret: keep its imported key.
let cachedKey: { secret: string; key: Promise<unknown> } | undefined;

/** The slice of SubtleCrypto used here, declared locally so no DOM or Node typings are needed. */
interface HmacSubtle {
  importKey(
    format: 'raw',
    key: Uint8Array,
    algorithm: { name: 'HMAC'; hash: 'SHA-256' },
    extractable: false,
    usages: ['sign'],
  ): Promise<unknown>;
  sign(algorithm: 'HMAC', key: unknown, data: Uint8Array): Promise<ArrayBuffer>;
}

function subtle(): HmacSubtle {
  const s = (globalThis as unknown as { crypto?: { subtle?: HmacSubtle } }).crypto?.subtle;
  if (!s) {
    throw new Error(
      'Web Crypto (globalThis.crypto.subtle) is not available here; on Node 18 start node with ' +
        '--experimental-global-webcrypto or use the synchronous verify() from the main entry',
    );
  }
  return s;
}

function hmacKey(secret: string): Promise<unknown> {
  if (cachedKey?.secret !== secret) {
    const key = subtle().importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    cachedKey = { secret, key };
  }
  return cachedKey.key;
}

async function hmac(secret: string, content: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await subtle().sign('HMAC', await hmacKey(secret), content));
}

async function checkSignature(options: VerifyOptions): Promise<string | Uint8Array> {
  const { payload, timestamp, signatures } = prepareVerification(options);
  const expected = await hmac(options.secret, signedContent(timestamp, payload));
  if (!anySignatureMatches(expected, signatures, constantTimeEqual)) throw signatureMismatch();
  return payload;
}

/**
 * Same checks and result as `verify`, using only Web Crypto. Rejects with a
 * `WebhookVerificationError` (or a `TypeError` for wrong options).
 */
export async function verifyAsync<T = Record<string, unknown>>(options: VerifyOptions): Promise<WebhookEvent<T>> {
  return parseEvent<T>(await checkSignature(options));
}

/** Same as `verifySignature` (every check but the body's JSON shape), using only Web Crypto. */
export async function verifySignatureAsync(options: VerifyOptions): Promise<void> {
  await checkSignature(options);
}

/** Same as `sign`, using only Web Crypto. */
export async function signAsync(options: SignOptions): Promise<string> {
  const { bytes, timestamp } = prepareSign(options);
  return formatSignatureHeader(timestamp, bytesToHex(await hmac(options.secret, signedContent(timestamp, bytes))));
}

/** Same as `generateTestHeaders`, using only Web Crypto. */
export async function generateTestHeadersAsync(options: TestHeadersOptions): Promise<WebhookHeaders> {
  const { bytes } = prepareSign(options);
  return buildTestHeaders(options, bytes, await signAsync(options));
}
