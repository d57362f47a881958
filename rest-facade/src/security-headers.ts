import type { RequestHandler } from 'express';
import helmet, { type HelmetOptions } from 'helmet';
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
 * Security headers on every response, errors and 404s included (helmet, set for a JSON API: nosniff, no
 * Referer, a deny-all CSP, no framing, HSTS when served over HTTPS) and `Cache-Control: no-store`, which a
 * route serving a public document (`/openapi.json`) overrides.
 */
export function securityHeaders(config: AppConfig): RequestHandler {
  const json = helmet(options(config, JSON_CSP));
  const landingPage = helmet(options(config, LANDING_PAGE_CSP));
  return (req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    const html = req.method === 'GET' && req.path === '/graphql' && req.accepts(['application/json', 'text/html']) === 'text/html';
    (html ? landingPage : json)(req, res, next);
  };
}
