import type { RequestContext } from './context.js';
import { forbidden, unauthorized } from './errors.js';

/** Every valid scope (spec 2.3). `community:read` is reserved: no endpoint requires it. */
export const SCOPES = ['members:read', 'posts:read', 'events:read', 'orders:read', 'community:read'] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * The authorization gate of every Platform API read: the request must carry an API key (set by the
 * Platform API after authentication), and that key must hold `scope` (`null`: any key, as for `/v1/me`).
 * Returns the key's tribe: Platform reads take their tribe from the key, never from input.
 */
export function requireScope(ctx: RequestContext, scope: Scope | null): string {
  const key = ctx.apiKey;
  if (!key) throw unauthorized('This needs an API key: Authorization: Bearer <key>.');
  if (scope && !key.scopes.includes(scope)) throw forbidden(`This API key lacks the ${scope} scope.`);
  return key.communityId;
}
