/** `@svc/webhook-verifier/fetch`: `verifyRequest` for Fetch `Request`s; no node:* imports. */
export { verifyRequest, type RequestLike, type VerifyRequestOptions } from './request.js';
export { WebhookVerificationError, type WebhookVerificationErrorCode } from './errors.js';
export type { WebhookEvent } from './types.js';
