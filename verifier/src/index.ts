/**
 * `@svc/webhook-verifier`: everything, for Node. `verify`, `sign` and `expressWebhook` use
 * node:crypto; edge runtimes import `@svc/webhook-verifier/web` instead.
 */
export * from './web.js';
export { verify, verifySignature, sign, generateTestHeaders } from './node.js';
export {
  expressWebhook,
  type ExpressWebhookOptions,
  type WebhookRequest,
  type WebhookResponse,
  type NextFunction,
  type WebhookMiddleware,
} from './middleware.js';
