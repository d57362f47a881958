/**
 * `@svc/webhook-verifier/web`: the Web Crypto half of the package. Nothing here imports node:*,
 * so it runs on Cloudflare Workers, Vercel/Next.js edge, Deno, Bun, browsers and Node >= 19.
 */
export { verifyAsync, verifySignatureAsync, signAsync, generateTestHeadersAsync } from './web-crypto.js';
export { verifyRequest, type RequestLike, type VerifyRequestOptions } from './request.js';
export { WebhookVerificationError, type WebhookVerificationErrorCode } from './errors.js';
export { MemorySeenStore, DEFAULT_DEDUPE_TTL_SECONDS, type SeenStore, type MemorySeenStoreOptions } from './dedupe.js';
export {
  parseSignatureHeader,
  type ParsedSignatureHeader,
  SIGNATURE_HEADER,
  DELIVERY_HEADER,
  EVENT_HEADER,
  DEFAULT_TOLERANCE_SECONDS,
} from './core.js';
export type {
  KnownEventType,
  OrderPaidData,
  OrderRefundedData,
  PaymentCompletedData,
  WebhookEvent,
  WebhookHeaders,
  RawPayload,
  HeadersLike,
  HeaderRecord,
  HeadersInput,
  NowInput,
  VerifyOptions,
  SignOptions,
  TestHeadersOptions,
} from './types.js';
