// The daily email digest of unread notifications and its one-click unsubscribe (RFC 8058): a use case over identity,
// members, engagement and mail. Only this module touches `digest_state`.
export { sendDigests, unsubscribe, readUnsubscribeToken, unsubscribeUrl, KIND_LABELS, DIGEST_MAX_ITEMS, FIRST_DIGEST_WINDOW_MS } from './digest.service.js';
export type { DigestResult } from './digest.service.js';
export { signUnsubscribe, verifyUnsubscribe } from './unsubscribe.js';
export type { UnsubscribeClaim } from './unsubscribe.js';
