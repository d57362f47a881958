/** `@svc/webhook-verifier/express`: the Express middleware and what it needs. */
export {
  expressWebhook,
  type ExpressWebhookOptions,
  type WebhookRequest,
  type WebhookResponse,
  type NextFunction,
  type WebhookMiddleware,
} from './middleware.js';
export { MemorySeenStore, type SeenStore, type MemorySeenStoreOptions } from './dedupe.js';
export { WebhookVerificationError, type WebhookVerificationErrorCode } from './errors.js';
export type { WebhookEvent } from './types.js';
