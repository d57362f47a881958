import cookieParser from 'cookie-parser';
import type { CookieOptions, Request, RequestHandler, Response } from 'express';
import type { IncomingHttpHeaders } from 'node:http';
import type { Authenticate } from '../../gateway/src/subscriptions.js';
import {
  accessTokenCaller,
  authenticatePersonalApiKey,
  credentialOf,
  requirePersonalKeyScope,
  resolveIdpToken,
  resolveSession,
  verifyAccessToken,
  type PersonalKeyCaller,
} from '../../subgraphs/identity/index.js';
import type { AppDeps, Caller } from '../../subgraphs/kernel/index.js';
import { HttpError } from './errors.js';

export const SESSION_COOKIE = 'svc_session';
export const IDP_COOKIE = '__session';

/** Cookie attributes of the first-party session. */
export const sessionCookie = (app: AppDeps): CookieOptions => ({
  httpOnly: true,
  sameSite: 'lax',
  secure: app.config.cookieSecure,
  path: '/',
  maxAge: app.config.sessionTtlHours * 3_600_000,
});

/** The caller of the web app's cookies: `svc_session`, or else an identity-provider `__session` JWT; null for neither. */
export async function callerFromCookies(app: AppDeps, cookies: Record<string, unknown> | undefined): Promise<Caller | null> {
  const first = cookies?.[SESSION_COOKIE];
  const idp = cookies?.[IDP_COOKIE];
  const session = typeof first === 'string' ? await resolveSession(app, first) : null;
  const idpUser = !session && typeof idp === 'string' ? await resolveIdpToken(app, idp) : null;
  return session ?? (idpUser ? { userId: idpUser } : null);
}

/** Sets `req.caller` from `svc_session`, or else from an identity-provider `__session` JWT. Never rejects. */
export function sessionAuth(app: AppDeps): RequestHandler {
  return async (req, _res, next) => {
    try {
      req.caller = await callerFromCookies(app, req.cookies);
      next();
    } catch (error) {
      next(error);
    }
  };
}

const parseCookies = cookieParser();

/**
 * The caller of a request's own credential, as `/graphql` over HTTP takes it: `Authorization: Bearer <resource API
 * access token>` when the header is sent (and then only it: another scheme or a bad token is anonymous), else the web
 * app's cookies (`svc_session`, then `__session`). Null for neither. A remote subgraph resolves a credential that
 * another gateway forwarded with this same function (`server/subgraph.ts`).
 */
export async function callerFromCredentials(app: AppDeps, headers: IncomingHttpHeaders, cookies?: Record<string, unknown>): Promise<Caller | null> {
  if (headers.authorization !== undefined) {
    const token = bearerToken({ headers } as Request);
    const userId = token ? await verifyAccessToken(app, token) : null;
    return userId ? { userId } : null;
  }
  if (cookies) return callerFromCookies(app, cookies);
  if (typeof headers.cookie !== 'string') return null;
  const req = { headers } as unknown as Request;
  parseCookies(req, {} as Response, () => undefined);
  return callerFromCookies(app, req.cookies);
}

/** Sets `req.caller` from `callerFromCredentials` (bearer access token, else the cookies `cookie-parser` read). Never rejects. */
export function credentialAuth(app: AppDeps): RequestHandler {
  return async (req, _res, next) => {
    try {
      req.caller = await callerFromCredentials(app, req.headers, req.cookies);
      next();
    } catch (error) {
      next(error);
    }
  };
}

/**
 * Authenticates a GraphQL WebSocket connection like `/graphql` over HTTP: `connectionParams.authorization` =
 * `Bearer <resource API access token>` when given (and then only it), else the web app's cookies of the upgrade
 * request. Cookies count only when the upgrade comes from this host (an `Origin` naming another host is a page of
 * another site riding on the user's cookies) or from a client that sends no `Origin` (not a browser). The socket's
 * credential is its session (`svc_session`) or its access token's refresh-token family: ending it (`POST /auth/logout`,
 * a revoked family) closes the socket.
 */
export function webSocketAuth(app: AppDeps): Authenticate {
  return async ({ headers }, params) => {
    const authorization = params?.authorization;
    if (authorization !== undefined) {
      const token = typeof authorization === 'string' ? bearerToken({ headers: { authorization } } as Request) : null;
      const found = token ? await accessTokenCaller(app, token) : null;
      return found ? { userId: found.userId, credential: credentialOf.family(found.familyId) } : null;
    }
    if (headers.origin !== undefined && !sameHost(headers.origin, headers.host)) return null;
    const req = { headers } as unknown as Request;
    parseCookies(req, {} as Response, () => undefined);
    const caller = await callerFromCookies(app, req.cookies);
    return caller?.sessionId ? { ...caller, credential: credentialOf.session(caller.sessionId) } : caller;
  };
}

/** Whether an `Origin` header names this host (`Host`, port included); a malformed or `null` origin does not. */
export const sameHost = (origin: string, host: string | undefined) => {
  try {
    return host !== undefined && new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
};

/**
 * The credential of `Authorization: Bearer <token>` (the scheme name in any letter case, RFC 7235; the token
 * in token68 characters, at most `maxLength`), or null. Both token-authenticated surfaces read it here.
 */
export function bearerToken(req: Request, maxLength = 4096): string | null {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer ([A-Za-z0-9._~+/=-]+)$/i.exec(header);
  return match && match[1].length <= maxLength ? match[1] : null;
}

/** 401 `unauthorized` with `message` unless an earlier step set `req.caller`. */
export const requireCaller =
  (message: string): RequestHandler =>
  (req, _res, next) =>
    next(req.caller ? undefined : new HttpError(401, 'unauthorized', message));

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** The personal API key a resource API request was authenticated with (`resourceAuth`), if it was. */
      personalKey?: PersonalKeyCaller;
    }
  }
}

/**
 * The caller of a resource API bearer credential (spec 5.3): a personal API key `svc_pk_...` (its user, and the key
 * for its scopes), else an access token (JWT) from `/v1/auth/login`. Null for neither.
 */
export async function resourceCaller(app: AppDeps, token: string): Promise<{ caller: Caller; personalKey?: PersonalKeyCaller } | null> {
  if (token.startsWith('svc_pk_')) {
    const key = await authenticatePersonalApiKey(app, token);
    return key ? { caller: { userId: key.userId }, personalKey: key } : null;
  }
  const userId = await verifyAccessToken(app, token);
  return userId ? { caller: { userId } } : null;
}

/**
 * Sets `req.caller` (and `req.personalKey`) from the resource API's bearer credential: an access token or a personal
 * API key (`resourceCaller`); other credentials (cookies, Platform API keys) are ignored.
 */
export function resourceAuth(app: AppDeps): RequestHandler {
  return async (req, _res, next) => {
    try {
      const token = bearerToken(req);
      const found = token ? await resourceCaller(app, token) : null;
      req.caller = found?.caller ?? null;
      req.personalKey = found?.personalKey;
      next();
    } catch (error) {
      next(error);
    }
  };
}

/** 403 `insufficient_scope` when the request was made with a personal key lacking its method's scope (read or write). */
export const requireKeyScope: RequestHandler = (req, _res, next) => {
  try {
    if (req.personalKey) requirePersonalKeyScope(req.personalKey, req.method);
    next();
  } catch (error) {
    next(error);
  }
};
