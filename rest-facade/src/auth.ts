import type { CookieOptions, Request, RequestHandler } from 'express';
import { resolveIdpToken, resolveSession, verifyAccessToken } from '../../subgraphs/identity/index.js';
import type { AppDeps } from '../../subgraphs/kernel/index.js';
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

/** Sets `req.caller` from `svc_session`, or else from an identity-provider `__session` JWT. Never rejects. */
export function sessionAuth(app: AppDeps): RequestHandler {
  return async (req, _res, next) => {
    try {
      const first = req.cookies?.[SESSION_COOKIE];
      const idp = req.cookies?.[IDP_COOKIE];
      const session = typeof first === 'string' ? await resolveSession(app, first) : null;
      const idpUser = !session && typeof idp === 'string' ? await resolveIdpToken(app, idp) : null;
      req.caller = session ?? (idpUser ? { userId: idpUser } : null);
      next();
    } catch (error) {
      next(error);
    }
  };
}

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
