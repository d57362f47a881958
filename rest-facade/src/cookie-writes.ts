import type { RequestHandler } from 'express';
import { sameHost } from './auth.js';
import { HttpError } from './errors.js';

/** The methods that change state; GET, HEAD and OPTIONS change nothing on any route. */
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface CookieWriteGuardOptions {
  /** Paths whose writes take no cookie (bearer tokens, signed requests) or guard themselves: passed through. */
  exempt: RegExp;
  /** Paths whose writes are uploads: `multipart/form-data` is accepted there besides JSON. */
  multipart: RegExp;
}

/**
 * The one guard of the cookie-authenticated writes (the web app's Application API), mounted once before all their
 * routers: a POST, PUT, PATCH or DELETE is refused before any of them reads a body or a cookie when
 * - its `Origin` names another site (another host or port, `null`, or not a URL), or it sends no `Origin` and
 *   `Sec-Fetch-Site: cross-site`: 403 `forbidden_origin` (a page of another site riding on the user's cookies);
 * - it carries a body that is not `application/json` (`multipart/form-data` on upload paths): 415
 *   `unsupported_media_type` (a form is what a page of another site can send without asking the browser first).
 * A request without `Origin` (not a browser, or a same-origin request of an older browser) passes the first check.
 */
export function cookieWriteGuard(options: CookieWriteGuardOptions): RequestHandler {
  return (req, _res, next) => {
    if (!STATE_CHANGING.has(req.method) || options.exempt.test(req.path)) return next();
    const origin = req.headers.origin;
    const foreign = origin !== undefined ? !sameHost(origin, req.headers.host) : req.headers['sec-fetch-site'] === 'cross-site';
    if (foreign) return next(new HttpError(403, 'forbidden_origin', 'This request comes from a page of another site.'));
    const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
    if (hasBody && !req.is('application/json') && !(options.multipart.test(req.path) && req.is('multipart/form-data'))) {
      return next(new HttpError(415, 'unsupported_media_type', 'Send JSON with content-type application/json.'));
    }
    next();
  };
}
