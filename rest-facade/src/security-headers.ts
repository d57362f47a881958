import type { RequestHandler } from 'express';
import helmet, { type HelmetOptions } from 'helmet';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppConfig } from '../../subgraphs/kernel/index.js';

/** Nothing a JSON body could load or be framed by. */
const JSON_CSP: Directives = { "default-src": ["'none'"], "frame-ancestors": ["'none'"] };

/**
 * Apollo's landing page (GET /graphql from a browser) carries its own `<meta>` policy with a per-response nonce for
 * its scripts and styles from Apollo's CDN; a header policy would intersect with it and break the page. The header
 * adds what a `<meta>` policy cannot say (frame-ancestors) and what the page never needs.
 */
const LANDING_PAGE_CSP: Directives = {
  "default-src": helmet.contentSecurityPolicy.dangerouslyDisableDefaultSrc,
  "frame-ancestors": ["'none'"],
  "base-uri": ["'none'"],
  "object-src": ["'none'"],
};

type Directives = Record<string, string[] | typeof helmet.contentSecurityPolicy.dangerouslyDisableDefaultSrc>;

const options = (config: AppConfig, directives: Directives): HelmetOptions => ({
  contentSecurityPolicy: { useDefaults: false, directives },
  referrerPolicy: { policy: 'no-referrer' },
  xFrameOptions: { action: 'deny' },
  // Only where the deployment says it is served over HTTPS (the same switch as the Secure cookie); no
  // includeSubDomains, which would bind sibling hosts this service does not own.
  strictTransportSecurity: config.cookieSecure ? { maxAge: 31_536_000, includeSubDomains: false } : false,
});

/**
 * The headers a helmet middleware sets, read once: with these options they depend on nothing of the request (no
 * nonce, no directive computed per request), so a response gets the same list without helmet's eleven middlewares
 * at each request. Helmet's only other act, removing `X-Powered-By`, is express's `x-powered-by` switch, off.
 */
function headersOf(middleware: ReturnType<typeof helmet>): ReadonlyArray<readonly [string, string]> {
  const headers: Array<[string, string]> = [];
  const recorder = { setHeader: (name: string, value: string) => void headers.push([name, value]), removeHeader: () => undefined };
  middleware({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error;
  });
  return headers;
}

/**
 * Security headers on every response, errors and 404s included (helmet, set for a JSON API: nosniff, no
 * Referer, a deny-all CSP, no framing, HSTS when served over HTTPS) and `Cache-Control: no-store`, which a
 * route serving a public document (`/openapi.json`) overrides.
 */
export function securityHeaders(config: AppConfig): RequestHandler {
  const json = headersOf(helmet(options(config, JSON_CSP)));
  const landingPage = headersOf(helmet(options(config, LANDING_PAGE_CSP)));
  return (req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    const html = req.method === 'GET' && req.path === '/graphql' && req.accepts(['application/json', 'text/html']) === 'text/html';
    for (const [name, value] of html ? landingPage : json) res.setHeader(name, value);
    next();
  };
}
