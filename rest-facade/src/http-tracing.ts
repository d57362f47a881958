import type { RequestHandler } from 'express';
import { endSpan, extractContext, startSpan, withSpan } from '../../subgraphs/kernel/tracing.js';
import { routeOf, surfaceOf } from './http-metrics.js';

/**
 * The server span of every HTTP answer (install it first, and only when tracing is on: `tracingOn()`): a child of the
 * caller's `traceparent` when it sends one (the gateway calling a subgraph process, or a client's own trace), active
 * while the request is served, so the gateway, subgraph and SQL spans of the request are its descendants. Named
 * `<METHOD> <route template>` once the route is known; status ERROR for a 5xx answer.
 */
export function httpTracing(): RequestHandler {
  return (req, res, next) => {
    const path = req.originalUrl.split('?')[0];
    const span = startSpan(`${req.method} ${path}`, {
      kind: 'server',
      parent: extractContext(req.headers),
      attributes: { 'http.request.method': req.method, 'url.path': path, 'svc.surface': surfaceOf(path) },
    });
    if (!span) return next();
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const route = routeOf(req);
      span.updateName(`${req.method} ${route}`);
      span.setAttributes({ 'http.route': route, 'http.response.status_code': res.statusCode });
      if (req.requestId ?? req.headers['x-request-id']) span.setAttribute('svc.request_id', String(req.requestId ?? req.headers['x-request-id']));
      if (res.statusCode >= 500) span.setStatus({ code: 2 });
      if (!res.writableFinished) span.setAttribute('svc.aborted', true);
      endSpan(span);
    };
    res.once('finish', end);
    res.once('close', end);
    withSpan(span, next);
  };
}
