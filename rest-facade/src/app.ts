import { expressMiddleware } from '@as-integrations/express5';
import cookieParser from 'cookie-parser';
import { readFileSync } from 'node:fs';
import express, { type ErrorRequestHandler, type Express } from 'express';
import type { Graph } from '../../gateway/src/graph.js';
import { persistedOperations } from '../../gateway/src/persisted.js';
import type { AppDeps } from '../../subgraphs/kernel/index.js';
import { SERVICE_UNAVAILABLE } from '../../subgraphs/kernel/graphql-errors.js';
import { mediaRouter } from './application/media.js';
import { APPLICATION_OPENAPI } from './application/openapi.js';
import { identityWebhooksRouter } from './application/identity-webhooks.js';
import { paymentsRouter } from './application/payments.js';
import { unsubscribeRouter } from './application/unsubscribe.js';
import { flatErrors, applicationRouter } from './application/router.js';
import { credentialAuth } from './auth.js';
import { cookieWriteGuard } from './cookie-writes.js';
import { HttpError, toHttpError } from './errors.js';
import { httpMetrics } from './http-metrics.js';
import { httpTracing } from './http-tracing.js';
import { tracingOn } from '../../subgraphs/kernel/tracing.js';
import { requestLog, requestLogging } from './http.js';
import { graphqlContext, graphqlFastPath } from './graphql-fast.js';
import { jsonOnly } from './input.js';
import { platformRouter } from './platform/router.js';
import { docsRouter, graphqlExplorer } from './portal/docs.js';
import { consoleRouter } from './portal/console.js';
import { RESOURCE_OPENAPI } from './resource/openapi.js';
import { resourceErrors, resourceRouter } from './resource/router.js';
import { securityHeaders } from './security-headers.js';
import { stableShapes } from './stable-shapes.js';

/** Errors before GraphQL execution (malformed JSON, oversized body) in the GraphQL envelope. */
const graphqlErrors: ErrorRequestHandler = (error, req, res, _next) => {
  const e = toHttpError(error);
  if (e.status >= 500) requestLog(req)?.error({ err: error }, 'unexpected error');
  const code = e.status === 503 ? SERVICE_UNAVAILABLE : e.code;
  res.status(e.status).set(e.headers).json({ errors: [{ message: e.message, extensions: { code, status: e.status } }] });
};

const RESOURCE_PATH = /^\/(auth|communities)(\/|$)/;

/**
 * Writes that take no session cookie, or guard themselves in their own envelope: `/v1` (the Platform and resource
 * APIs, bearer tokens; `/v1/media` takes the cookie only without a foreign `Origin`, see `media.ts`), `/webhooks`
 * (inbound provider webhooks, signed), `/unsubscribe` (mail's one-click form, RFC 8058, a signed token) and
 * `/graphql` (JSON only and Apollo's CSRF prevention). `test/cookie-writes.test.ts` walks the routes against it.
 */
const COOKIELESS_WRITES = /^\/(v1|webhooks|unsubscribe|graphql)(\/|$)/;
/** Uploads of the web app: `multipart/form-data`. */
const UPLOADS = /^\/media\/?$/;

/** The Platform API contract (OpenAPI 3.1), served as committed. */
const OPENAPI = readFileSync(new URL('../openapi.json', import.meta.url), 'utf8');
/** The resource API's document (OpenAPI 3.1, rest-facade/src/resource/openapi.ts). */
const RESOURCE_OPENAPI_JSON = JSON.stringify(RESOURCE_OPENAPI);
/** The Application API's document (OpenAPI 3.1, rest-facade/src/application/openapi.ts). */
const APPLICATION_OPENAPI_JSON = JSON.stringify(APPLICATION_OPENAPI);

const closers = new WeakMap<Express, () => Promise<void>>();

/** Releases what the HTTP app holds open besides the database (the rate limiter's Redis connection). */
export async function closeHttpApp(http: Express): Promise<void> {
  await closers.get(http)?.();
}

/**
 * The one HTTP app: health checks, `/graphql` (gateway), the Platform API, the resource API and the
 * Application REST routes, each surface with its own error envelope.
 */
export function createHttpApp(app: AppDeps, graph: Graph): Express {
  const http = express();
  stableShapes(http); // one chain of hidden classes for every request and response (see there)
  http.disable('x-powered-by');
  http.set('trust proxy', false);
  http.set('query parser', 'simple');
  if (tracingOn()) http.use(httpTracing()); // the request's server span, parent of everything below (OTEL_* set)
  http.use(securityHeaders(app.config)); // first: every answer carries them, errors and 404s included
  http.use(httpMetrics()); // svc_http_request_duration_seconds, by route template
  http.use(requestLogging(app.log));
  http.use(cookieParser());
  // Every cookie-authenticated write, whichever router serves it: 403 `forbidden_origin` from a page of another site,
  // 415 `unsupported_media_type` for a body other than JSON (multipart for uploads), before any route runs.
  http.use(cookieWriteGuard({ exempt: COOKIELESS_WRITES, multipart: UPLOADS }));

  http.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  http.get('/readyz', async (_req, res) => {
    try {
      await app.database.ping();
      res.json({ status: 'ready' });
    } catch {
      res.status(503).json({ status: 'unavailable' });
    }
  });

  http.get('/openapi.json', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').type('application/json').send(OPENAPI); // public, changes only with a deploy
  });
  http.get('/openapi/resource.json', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').type('application/json').send(RESOURCE_OPENAPI_JSON);
  });
  http.get('/openapi/application.json', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').type('application/json').send(APPLICATION_OPENAPI_JSON);
  });

  // Uploads and media files (streamed multipart, before any body parser): /media for the web app (flat errors), and
  // /v1/media for resource API clients (their envelope).
  http.use('/v1/media', mediaRouter(app, resourceErrors));
  http.use('/media', mediaRouter(app, flatErrors));

  // /v1/auth* and /v1/communities* are the resource API; every other /v1 path is the Platform API (typed 404 included).
  const resource = resourceRouter(app, graph.execute);
  const platform = platformRouter(app, graph.execute);
  closers.set(http, platform.close);
  http.use('/v1', (req, res, next) => (RESOURCE_PATH.test(req.path) ? resource(req, res, next) : platform.router(req, res, next)));

  // The reference pages (/docs, /docs/webhooks, their assets) and GraphiQL for a browser's GET /graphql.
  http.use(docsRouter(app));
  http.get('/graphql', graphqlExplorer(app));

  const graphqlRouter = express.Router();
  graphqlRouter.use(
    jsonOnly, // a text/plain or form POST is 415 here, before Apollo's CSRF check reads it as a simple request
    express.json({ limit: app.config.bodyLimitBytes }),
    persistedOperations(app.config.graphql), // GRAPHQL_PERSISTED_ONLY: manifest operations only, refused before parsing
    credentialAuth(app), // a bearer access token when sent, else the session cookies (as over WebSocket)
    graphqlFastPath(app, graph), // a query text planned before as a local route: without Apollo Server's pipeline
    expressMiddleware(graph.server, { context: async ({ req, res }) => graphqlContext(app, req, res) }),
  );
  graphqlRouter.use(graphqlErrors);
  http.use('/graphql', graphqlRouter);

  // Before the Application router and its JSON parser: the payment webhook is verified over its raw body.
  http.use(paymentsRouter(app));
  // The identity provider's webhook likewise (Standard Webhooks signatures over the raw body).
  http.use(identityWebhooksRouter(app));
  // Mail's one-click unsubscribe (RFC 8058): a form-encoded POST from mail clients, and a confirmation page.
  http.use(unsubscribeRouter(app));
  // The creator console (HTML pages under their own CSP) and its assets: GET only, before the JSON routes.
  http.use(consoleRouter(app, graph.execute));
  http.use(applicationRouter(app, graph.execute));
  http.use((_req, _res, next) => next(new HttpError(404, 'not_found', 'No such route.')));
  http.use(flatErrors);
  return http;
}
