import type { Logger } from 'pino';
import type { Database } from '../../db/src/index.js';
import type { AppConfig } from './config.js';
import { unauthorized } from './errors.js';

/** Who is calling: a signed-in user, or nobody. */
export interface Caller {
  userId: string;
  /** The first-party session (`svc_session`) the request came with, when it did: the one `changePassword` keeps. */
  sessionId?: string;
}

/**
 * The Platform API key a request is made with: it authenticates a key of one tribe, not a user.
 * Set only by the Platform API (`/v1`) after the key was checked; absent everywhere else.
 */
export interface ApiKeyCaller {
  id: string;
  communityId: string;
  scopes: string[];
}

/** A source of the current time, injectable so tests drive schedules without fake timers. */
export type Clock = () => Date;
export const systemClock: Clock = () => new Date();

/**
 * Process-wide dependencies, built once at start-up by `server/deps.ts` (the only code that knows every part).
 * These four are every domain's; a domain that needs a part of its own declares it on this interface, beside the
 * code that uses it (`declare module '../kernel/context.js'`): `webhooks` (subgraphs/webhooks/runtime.ts), `checkout`
 * and `fulfilments` (commerce/checkout.ts), `idpKey` (identity.service.ts), `apiKeyUses` (platform/api-keys.service.ts).
 */
export interface AppDeps {
  database: Database;
  config: AppConfig;
  clock: Clock;
  log: Logger;
}

/** What every service method receives: the app and the caller of this request. */
export interface RequestContext {
  app: AppDeps;
  caller: Caller | null;
  requestId: string;
  /** The API key of a Platform API request; absent (or null) on every other surface. */
  apiKey?: ApiKeyCaller | null;
  /**
   * The GraphQL operation type of this request, set once the operation is known (`operationTypePlugin`): writes run
   * as mutations on every surface, so a tribe gate refuses writes to a suspended tribe by it.
   */
  operation?: 'query' | 'mutation' | 'subscription';
  /**
   * The client's IP address as the HTTP server saw it (`trust proxy` is off: the connection's peer), passed on to
   * remote subgraphs in the caller assertion; absent for work no client asked for. Sign-in throttling keys on it.
   */
  clientAddress?: string;
}

const perRequest = new WeakMap<object, Map<string, unknown>>();

/** A per-request memo (DataLoaders live here), keyed by name; gone when the request is. */
export function requestScoped<T>(ctx: RequestContext, key: string, create: () => T): T {
  let slot = perRequest.get(ctx);
  if (!slot) {
    slot = new Map();
    perRequest.set(ctx, slot);
  }
  if (!slot.has(key)) slot.set(key, create());
  return slot.get(key) as T;
}

/** Whether this request has created its `requestScoped` value of `key`. */
export function hasRequestScoped(ctx: RequestContext, key: string): boolean {
  return perRequest.get(ctx)?.has(key) ?? false;
}

/** The caller's user id, or an `unauthorized` error. */
export function requireUser(ctx: RequestContext): string {
  if (!ctx.caller) throw unauthorized();
  return ctx.caller.userId;
}

/**
 * Header of the gateway-to-subgraph hop when subgraphs run remote: the shared secret, proving a gateway. The caller
 * travels beside it as a signed assertion (`CALLER_ASSERTION_HEADER`, `caller-assertion.ts`), or as the client's own
 * credential forwarded by another gateway.
 */
export const INTERNAL_SECRET_HEADER = 'x-svc-internal-secret';
