import type { Request, RequestHandler } from 'express';
import { httpDuration, statusClass } from '../../subgraphs/kernel/metrics.js';

/** The surface a path belongs to (the `surface` label of `svc_http_request_duration_seconds`). */
export function surfaceOf(path: string): string {
  if (path.startsWith('/graphql')) return 'graphql';
  if (path.startsWith('/v1/')) return /^\/v1\/(auth|communities)(\/|$|\?)/.test(path) ? 'resource' : 'platform';
  if (path.startsWith('/docs') || path.startsWith('/openapi')) return 'docs';
  if (path.startsWith('/console')) return 'console';
  if (path.startsWith('/healthz') || path.startsWith('/readyz')) return 'health';
  return 'application';
}

/** A router mounted under a parameter (`/communities/:handle/webhooks`): its `baseUrl` holds the value, not the name. */
const MOUNT_PARAMETER = /^((?:\/v1)?\/communities\/)[^/]+(\/webhooks)/;

/**
 * The route template that answered (`/v1/tribes/:tribeId/posts`), never the raw URL: Express's matched route under
 * its mount path; a router that answers without a route (Apollo's `/graphql`) is its mount path; nothing matched
 * (404) is `unmatched`.
 */
export function routeOf(req: Request): string {
  // Unset once the request has left every router: Express's final handler answered (a subgraph process's 404).
  const base = (req.baseUrl ?? '').replace(MOUNT_PARAMETER, '$1:handle$2');
  const route = req.route as { path?: unknown } | undefined;
  if (route?.path !== undefined) return base + String(route.path);
  return base || 'unmatched';
}

/** Observes every answer in `svc_http_request_duration_seconds` (surface, route template, method, status class). */
export function httpMetrics(): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const path = req.originalUrl;
    res.once('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      httpDuration.observe({ surface: surfaceOf(path), route: routeOf(req), method: req.method, status_class: statusClass(res.statusCode) }, seconds);
    });
    next();
  };
}
