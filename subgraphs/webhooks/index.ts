export {
  listEndpoints,
  getEndpoint,
  createEndpoint,
  updateEndpoint,
  deleteEndpoint,
  listDeliveries,
  testEndpoint,
  resendDelivery,
  subscribableEvents,
  DESCRIPTION_MAX,
  URL_RULES,
} from './webhooks.service.js';
export type { TribeRef, CreateEndpointInput, UpdateEndpointInput, PingOutcome, WebhookDelivery, WebhookEndpoint } from './webhooks.service.js';
export { createWebhookRuntime, closeWebhooks, interruptAttempts, PER_ORIGIN_CONCURRENCY } from './runtime.js';
export type { WebhookRuntime, WebhookRuntimeOptions } from './runtime.js';
export { attempt, describeFailure, deliveryBody, RESPONSE_BODY_CAP_BYTES, PING_MESSAGE } from './attempt.js';
export type { AttemptResult } from './attempt.js';
export { afterAttempt, RETRY_DELAYS_MS, MAX_ATTEMPTS } from './retry.js';
export { fanOut, drain } from './jobs.js';
export type { DrainResult } from './jobs.js';
export { generateSecret, signatureHeader } from './signer.js';
export { AddressPolicy, BlockedError, nonPublicReason, systemResolver } from './ssrf.js';
export type { Resolver, ResolvedAddress } from './ssrf.js';
