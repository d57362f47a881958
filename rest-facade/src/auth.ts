import cookieParser from 'cookie-parser';
import type { CookieOptions, Request, RequestHandler, Response } from 'express';
import type { Authenticate } from '../../gateway/src/subscriptions.js';
import { resolveIdpToken, resolveSession, verifyAccessToken } from '../../subgraphs/identity/index.js';
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
 * Authenticates a GraphQL WebSocket connection like `/graphql` over HTTP: `connectionParams.authorization` =
 * `Bearer <resource API access token>` when given (and then only it), else the web app's cookies of the upgrade
 * request. Cookies count only when the upgrade comes from this host (an `Origin` naming another host is a page of
 * another site riding on the user's cookies) or from a client that sends no `Origin` (not a browser).
 */
export function webSocketAuth(app: AppDeps): Authenticate {
  return async ({ headers }, params) => {
    const authorization = params?.authorization;
    if (authorization !== undefined) {
      const token = typeof authorization === 'string' ? bearerToken({ headers: { authorization } } as Request) : null;
      const userId = token ? await verifyAccessToken(app, token) : null;
      return userId ? { userId } : null;
    }
    if (headers.origin !== undefined && !sameHost(headers.origin, headers.host)) return null;
    const req = { headers } as unknown as Request;
    parseCookies(req, {} as Response, () => undefined);
    return callerFromCookies(app, req.cookies);
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

/** Sets `req.caller` from a resource-API access token (JWT); other credentials are ignored. */
export function accessTokenAuth(app: AppDeps): RequestHandler {
  return async (req, _res, next) => {
    try {
      const token = bearerToken(req);
      const userId = token ? await verifyAccessToken(app, token) : null;
      req.caller = userId ? { userId } : null;
      next();
    } catch (error) {
      next(error);
    }
  };
}
