import { Router, type ErrorRequestHandler, type Request, type RequestHandler, type Response } from 'express';
import type { OperationRunner, OperationVariables, TypedDocumentString } from '../../../gateway/src/graph.js';
import type { ApiKeyCaller, AppDeps, RequestContext } from '../../../subgraphs/kernel/index.js';
import { rateLimitRefusals } from '../../../subgraphs/kernel/metrics.js';
import { authenticateApiKey, suspendedKeyRefusal } from '../../../subgraphs/platform/index.js';
import { bearerToken } from '../auth.js';
import { HttpError, toHttpError, unwrap } from '../errors.js';
import { refuseBadText } from '../input.js';
import { requestLog } from '../http.js';
import { PlatformDocs } from './documents.js';
import { RATE_LIMIT_WINDOW_SECONDS, createKeyRateLimiter } from './rate-limit.js';
import { eventObject, keyIdentityObject, listObject, memberObject, orderObject, postObject } from './shapes.js';

/** The error types of the Platform API by HTTP status (spec 7.1). A wrong method is a missing operation. */
const ERROR_TYPES: Record<number, string> = {
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'not_found',
  429: 'rate_limited',
  // Not in spec 7.1's table, whose clients must handle unknown types: the database is down, retry after Retry-After.
  503: 'service_unavailable',
};

/**
 * Sends a JSON body as is: no ETag (so no 304 the contract does not describe, and no hash of every body), and
 * nothing else the contract does not name.
 */
function sendJson(res: Response, status: number, body: unknown): void {
  res.status(status).type('application/json; charset=utf-8').end(JSON.stringify(body));
}

/** Platform API error envelope: `{"error": {"type", "message"}}`, with the headers each status promises. */
export const platformErrors: ErrorRequestHandler = (error, req, res, _next) => {
  const e = toHttpError(error);
  const type = ERROR_TYPES[e.status];
  if (!type && e.status < 500) {
    // Spec 7.1 emits four types only: any other client error (such as a path Express cannot decode) names nothing that exists.
    sendJson(res, 404, { error: { type: 'not_found', message: 'Not found.' } });
    return;
  }
  if (!type) {
    requestLog(req)?.error({ err: error }, 'unexpected error');
    sendJson(res, 500, { error: { type: 'internal_error', message: 'Internal server error.' } });
    return;
  }
  if (e.status === 401) res.set('WWW-Authenticate', 'Bearer');
  if (e.status === 405) res.set('Allow', 'GET');
  if (e.status === 429) res.set('Retry-After', String(RATE_LIMIT_WINDOW_SECONDS));
  res.set(e.headers);
  sendJson(res, e.status, { error: { type, message: e.message } });
};

const INT = /^[+-]?\d+$/;

/** A paging query parameter as an integer (held within GraphQL's Int); anything else is absent, and the service clamps. */
function pagingParam(req: Request, name: string): number | undefined {
  const raw = req.query[name];
  if (typeof raw !== 'string' || !INT.test(raw.trim())) return undefined;
  return Math.max(-2_147_483_648, Math.min(2_147_483_647, Number(raw.trim())));
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      /** The authenticated key of a Platform API request. */
      apiKey?: ApiKeyCaller;
    }
  }
}

/**
 * The Platform API v1 (spec 4.1, 5.1, 7.1): read-only, key-authenticated. Every request goes: route (404),
 * method (405), authentication (401), rate limit per key (429), a tribe suspended by platform staff (403), then the fixed GraphQL document, whose service
 * checks the scope (403) and reads the key's tribe only. No CORS headers are ever sent.
 */
export function platformRouter(app: AppDeps, run: OperationRunner): { router: Router; close(): Promise<void> } {
  const limiter = createKeyRateLimiter(app.config.rateLimit, app.log);
  const perMinute = app.config.rateLimit.perMinute;
  const r = Router({ caseSensitive: true });

  const guard: RequestHandler = async (req, res, next) => {
    try {
      if (req.method !== 'GET') throw new HttpError(405, 'method_not_allowed', 'The Platform API is read-only: use GET.');
      const token = bearerToken(req, 200); // the only place a Platform key is read from
      const key = token ? await authenticateApiKey(app, token) : null;
      if (!key) throw new HttpError(401, 'unauthorized', 'Send a valid API key: Authorization: Bearer <key>.');
      if (!(await limiter.take(key.id))) {
        rateLimitRefusals.inc({ limit: 'platform_api_key' });
        throw new HttpError(
          429,
          'rate_limited',
          `Too many requests: at most ${perMinute} per ${RATE_LIMIT_WINDOW_SECONDS} seconds per key. Retry after ${RATE_LIMIT_WINDOW_SECONDS} seconds.`,
        );
      }
      // A valid key over its limit gets 429 before any 403 (spec 7.1), and a refused request costs no lookup.
      const suspended = await suspendedKeyRefusal(app, key.communityId);
      if (suspended) throw new HttpError(403, 'forbidden', suspended);
      res.locals.apiKey = key;
      next();
    } catch (error) {
      next(error);
    }
  };

  /** One GET endpoint: runs its document as the key and shapes the data. */
  const endpoint =
    <R, V>(doc: TypedDocumentString<R, V>, vars: (req: Request) => OperationVariables<V>, shape: (data: R) => unknown): RequestHandler =>
    async (req, res, next) => {
      try {
        const ctx: RequestContext = { app, caller: null, requestId: req.requestId, apiKey: res.locals.apiKey! };
        sendJson(res, 200, shape(unwrap(await run(ctx, doc, vars(req)))));
      } catch (error) {
        next(error);
      }
    };
  const paging = (req: Request) => ({ page: pagingParam(req, 'page'), pageSize: pagingParam(req, 'pageSize') });

  r.all('/me', guard, endpoint(PlatformDocs.me, () => ({}), (d) => keyIdentityObject(d.platformMe)));
  r.all('/members', guard, endpoint(PlatformDocs.members, paging, (d) => listObject(d.platformMembers, memberObject)));
  r.all('/members/:username', guard, refuseBadText({ query: false }), endpoint(PlatformDocs.member, (req) => ({ username: String(req.params.username) }), (d) => memberObject(d.platformMember)));
  r.all('/posts', guard, endpoint(PlatformDocs.posts, paging, (d) => listObject(d.platformPosts, postObject)));
  r.all('/events', guard, endpoint(PlatformDocs.events, paging, (d) => listObject(d.platformEvents, eventObject)));
  r.all('/orders', guard, endpoint(PlatformDocs.orders, paging, (d) => listObject(d.platformOrders, orderObject)));
  r.use((_req, _res, next) => next(new HttpError(404, 'not_found', 'No such Platform API endpoint.')));
  r.use(platformErrors);
  return { router: r, close: () => limiter.close() };
}
