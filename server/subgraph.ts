import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import express, { type Request, type Response } from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GraphQLError } from 'graphql';
import { buildSubgraph, SUBGRAPH_NAMES, type SubgraphName } from '../subgraphs/index.js';
import { toSubgraphError } from '../subgraphs/kernel/graphql-errors.js';
import { createLogger, requestIdFrom } from '../subgraphs/kernel/logging.js';
import { serveMetrics } from '../subgraphs/kernel/metrics.js';
import { operationTypePlugin } from '../subgraphs/kernel/operation.js';
import { type AppConfig, type AppDeps, type RequestContext, INTERNAL_SECRET_HEADER, acceptedSecrets, loadConfig, safeEqual } from '../subgraphs/kernel/index.js';
import { AssertionRefused, CALLER_ASSERTION_HEADER, assertionVerifier, callerAssertionKey, type AssertedCaller } from '../subgraphs/kernel/caller-assertion.js';
import { callerFromCredentials } from '../rest-facade/src/auth.js';
import { httpMetrics } from '../rest-facade/src/http-metrics.js';
import { httpTracing } from '../rest-facade/src/http-tracing.js';
import { stableShapes } from '../rest-facade/src/stable-shapes.js';
import { startTracing, tracingOn } from '../subgraphs/kernel/tracing.js';
import { openDeps } from './deps.js';

/**
 * Who calls this subgraph (only asked after the internal secret matched): the caller the project's gateway signed
 * for this subgraph (`x-svc-caller-assertion`; a bad one throws `AssertionRefused`), or else the client's own
 * credential that another gateway forwarded (`Authorization: Bearer`, or the session cookies), resolved as `/graphql`
 * resolves it, with the connection's peer (that gateway) as the client address. A plain `x-svc-caller` is never read.
 */
async function callerOf(app: AppDeps, verify: (token: string) => Promise<AssertedCaller>, req: Request): Promise<AssertedCaller> {
  const assertion = req.headers[CALLER_ASSERTION_HEADER];
  if (assertion !== undefined) return verify(String(assertion));
  return { caller: await callerFromCredentials(app, req.headers), apiKey: null, clientAddress: req.socket.remoteAddress };
}

const unauthenticated = (res: Response, message: string) => res.status(401).json({ errors: [{ message, extensions: { code: 'UNAUTHENTICATED' } }] });

/**
 * Serves one subgraph alone over HTTP for the distributed deployment. Only a gateway may call it: every request must
 * carry the shared internal secret (checked in constant time; `INTERNAL_SECRET_PREVIOUS` too during a rotation), else
 * 401; and a caller assertion that does not verify (unsigned, expired, wrongly signed, for another subgraph) is 401 too,
 * never an anonymous request.
 */
export async function serveSubgraph(name: SubgraphName, config: AppConfig, port = config.port): Promise<{ port: number; metricsPort?: number; stop(): Promise<void> }> {
  if (!config.internalSecret) throw new Error('INTERNAL_SECRET is required to serve a subgraph alone');
  const internalSecrets = acceptedSecrets(config.internalSecret, config.internalSecretPrevious);
  const log = createLogger(config.logLevel).child({ subgraph: name });
  const opened = await openDeps(config, { log });
  const app = opened.deps;
  // An error is mapped (and an unexpected one logged) where the request's context, and so its id, is known; the
  // answer's `formatError`, which Apollo Server gives no context, reads the mapping.
  const mappedErrors = new WeakMap<object, GraphQLError>();
  const errorListener = {
    async didEncounterErrors({ errors, contextValue }: { errors: readonly GraphQLError[]; contextValue: RequestContext }) {
      for (const error of errors) mappedErrors.set(error, toSubgraphError(error, log, contextValue.requestId));
    },
  };
  const server = new ApolloServer<RequestContext>({
    schema: buildSubgraph(name),
    includeStacktraceInErrorResponses: false,
    plugins: [ApolloServerPluginInlineTraceDisabled(), operationTypePlugin, { requestDidStart: async () => errorListener }],
    logger: log,
    formatError: (formatted, error) => {
      const mapped = mappedErrors.get(error as object) ?? toSubgraphError(error as GraphQLError, log, '');
      return { message: mapped.message, path: formatted.path, extensions: mapped.extensions };
    },
  });
  await server.start();
  const http = express();
  stableShapes(http); // one chain of hidden classes for every request and response (rest-facade/src/stable-shapes.ts)
  http.disable('x-powered-by');
  // The server span of each call, a child of the gateway's fetch span (its `traceparent`), when tracing is on.
  if (tracingOn()) http.use(httpTracing());
  http.use(httpMetrics());
  // The gateway's request id (x-request-id): on the answer and on every line logged while serving it.
  http.use((req, res, next) => {
    const id = requestIdFrom(req.headers['x-request-id']);
    req.headers['x-request-id'] = id;
    res.setHeader('x-request-id', id);
    next();
  });
  http.use('/graphql', (req, res, next) => {
    const secret = req.headers[INTERNAL_SECRET_HEADER];
    // `INTERNAL_SECRET`, or `INTERNAL_SECRET_PREVIOUS` during a rotation; both compared, each in constant time.
    const matches = typeof secret === 'string' ? internalSecrets.map((one) => safeEqual(secret, one)) : [];
    if (!matches.includes(true)) {
      unauthenticated(res, 'Only the gateway may call this subgraph.');
      return;
    }
    next();
  });
  const verify = assertionVerifier(await Promise.all(internalSecrets.map(callerAssertionKey)), name);
  http.use('/graphql', async (req, res, next) => {
    try {
      res.locals.caller = await callerOf(app, verify, req);
      next();
    } catch (error) {
      if (error instanceof AssertionRefused) unauthenticated(res, error.message);
      else next(error);
    }
  });
  http.use(
    '/graphql',
    express.json({ limit: config.bodyLimitBytes }),
    expressMiddleware(server, {
      context: async ({ req, res }) => ({ app, ...(res.locals.caller as AssertedCaller), requestId: String(req.headers['x-request-id'] ?? '') }),
    }),
  );
  const listener = await new Promise<Server>((resolve, reject) => {
    const s = http.listen(port, config.host, () => resolve(s)).on('error', reject);
  });
  const actual = (listener.address() as AddressInfo).port;
  const metrics = config.metrics.port === undefined ? undefined : await serveMetrics({ port: config.metrics.port, host: config.metrics.host });
  log.info({ port: actual, metricsPort: metrics?.port }, 'subgraph listening');
  return {
    port: actual,
    metricsPort: metrics?.port,
    async stop() {
      await metrics?.close();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
      listener.closeAllConnections();
      await server.stop();
      await opened.close();
    },
  };
}

const isMain = process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'));
if (isMain) {
  const name = process.argv[2] as SubgraphName;
  if (!SUBGRAPH_NAMES.includes(name)) {
    console.error(`usage: node dist/server/subgraph.js <${SUBGRAPH_NAMES.join('|')}>`);
    process.exit(1);
  }
  const config = loadConfig();
  startTracing(config, `svc-subgraph-${name}`)
    .then(async (tracing) => {
      await serveSubgraph(name, config);
      // The spans not exported yet go out before the process ends on SIGTERM or SIGINT (only when tracing is on).
      if (tracing.enabled) {
        for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void tracing.stop().finally(() => process.exit(0)));
      }
    })
    .catch((error) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    });
}
