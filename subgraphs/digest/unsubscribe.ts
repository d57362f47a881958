// The one-click unsubscribe token (RFC 8058 links): which user and which notification kinds, signed with HMAC-SHA256
// under a key derived from the app's secret (JWT_SECRET). It does not expire: a link in an old mail keeps working.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { NOTIFICATION_KINDS, type NotificationKind } from '../engagement/index.js';
import { isUuid } from '../kernel/index.js';

/** What an unsubscribe token turns off: these kinds' EMAIL preference for this user. */
export interface UnsubscribeClaim {
  userId: string;
  kinds: NotificationKind[];
}

const KINDS = new Set<string>(NOTIFICATION_KINDS);
const keyOf = (secret: string): Buffer => createHmac('sha256', secret).update('svc mail unsubscribe v1').digest();
const sign = (secret: string, payload: string): Buffer => createHmac('sha256', keyOf(secret)).update(payload).digest();

/** `<base64url(userId:kind,kind)>.<base64url(HMAC)>`: URL-safe as it is. */
export function signUnsubscribe(secret: string, claim: UnsubscribeClaim): string {
  if (claim.kinds.length === 0) throw new Error('an unsubscribe token names at least one kind');
  const payload = `${claim.userId}:${[...new Set(claim.kinds)].sort().join(',')}`;
  return `${Buffer.from(payload).toString('base64url')}.${sign(secret, payload).toString('base64url')}`;
}

/**
 * The claim of a token signed with `secret` (or any of `secret`, during a rotation), or null (tampered, malformed,
 * another secret). Constant-time check.
 */
export function verifyUnsubscribe(secret: string | readonly string[], token: unknown): UnsubscribeClaim | null {
  if (typeof token !== 'string' || token.length > 600) return null;
  const match = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return null;
  const payload = Buffer.from(match[1], 'base64url').toString('utf8');
  const given = Buffer.from(match[2], 'base64url');
  let matched = false;
  for (const one of typeof secret === 'string' ? [secret] : secret) {
    const expected = sign(one, payload);
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  if (!matched) return null;
  const [userId, list] = payload.split(':');
  const kinds = (list ?? '').split(',');
  if (!isUuid(userId) || kinds.length === 0 || !kinds.every((k) => KINDS.has(k))) return null;
  return { userId, kinds: kinds as NotificationKind[] };
}
