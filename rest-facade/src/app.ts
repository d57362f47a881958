import { expressMiddleware } from '@as-integrations/express5';
import cookieParser from 'cookie-parser';
import express, { type ErrorRequestHandler, type Express } from 'express';
import type { Graph } from '../../gateway/src/graph.js';
import type { AppDeps } from '../../subgraphs/kernel/index.js';
import { flatErrors, applicationRouter } from './application/router.js';
import { sessionAuth } from './auth.js';
import { HttpError, toHttpError } from './errors.js';
import { contextOf, requestLogging } from './http.js';
import { resourceRouter } from './resource/router.js';

/** Errors before GraphQL execution (malformed JSON, oversized body) in the GraphQL envelope. */
const graphqlErrors: ErrorRequestHandler = (error, req, res, _next) => {
  const e = toHttpError(error);
  if (e.status >= 500) req.log?.error({ err: error }, 'unexpected error');
  res.status(e.status).json({ errors: [{ message: e.message, extensions: { code: e.code, status: e.status } }] });
};

const RESOURCE_PATH = /^\/(auth|communities)(\/|$)/;

/**
 * The one HTTP app: health checks, `/graphql` (gateway), the resource API and the Application REST routes,
 * each surface with its own error envelope.
 */
export function createHttpApp(app: AppDeps, graph: Graph): Express {
  const http = express();
  http.disable('x-powered-by');
  http.set('trust proxy', false);
  http.set('query parser', 'simple');
  http.use(requestLogging(app.log));
  http.use(cookieParser());

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

  const resource = resourceRouter(app, graph.execute);
  http.use('/v1', (req, res, next) => (RESOURCE_PATH.test(req.path) ? resource(req, res, next) : next()));

  const graphqlRouter = express.Router();
  graphqlRouter.use(
    express.json({ limit: app.config.bodyLimitBytes }),
    sessionAuth(app),
    expressMiddleware(graph.server, { context: async ({ req }) => contextOf(app, req) }),
  );
  graphqlRouter.use(graphqlErrors);
  http.use('/graphql', graphqlRouter);

  http.use(applicationRouter(app, graph.execute));
  http.use((_req, _res, next) => next(new HttpError(404, 'not_found', 'No such route.')));
  http.use(flatErrors);
  return http;
}
