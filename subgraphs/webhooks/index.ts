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
} from './webhooks.service.js';
export type { TribeRef, CreateEndpointInput, UpdateEndpointInput, PingOutcome, WebhookDelivery, WebhookEndpoint } from './webhooks.service.js';
export {
  attachWebhooks,
  closeWebhooks,
  interruptAttempts,
  fanOut,
  drain,
  attempt,
  afterAttempt,
  describeFailure,
  deliveryBody,
  RETRY_DELAYS_MS,
  MAX_ATTEMPTS,
  PER_ORIGIN_CONCURRENCY,
  RESPONSE_BODY_CAP_BYTES,
  PING_MESSAGE,
} from './delivery.js';
export type { AttemptResult, DrainResult, WebhookRuntimeOptions } from './delivery.js';
export { generateSecret, signatureHeader } from './signer.js';
export { AddressPolicy, BlockedError, nonPublicReason, systemResolver } from './ssrf.js';
export type { Resolver, ResolvedAddress } from './ssrf.js';
