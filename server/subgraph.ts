import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { buildSubgraph, SUBGRAPH_NAMES, type SubgraphName } from '../subgraphs/index.js';
import { toSubgraphError } from '../subgraphs/kernel/graphql-errors.js';
import { operationTypePlugin } from '../subgraphs/kernel/operation.js';
import {
  type ApiKeyCaller,
  type AppConfig,
  type Caller,
  type RequestContext,
  CALLER_HEADER,
  CLIENT_ADDRESS_HEADER,
  INTERNAL_SECRET_HEADER,
  loadConfig,
  safeEqual,
} from '../subgraphs/kernel/index.js';
import { openDeps } from './deps.js';

/**
 * The caller the gateway passed along (only read after the internal secret matched):
 * `{userId?, sessionId?, apiKey?: {id, communityId, scopes}}`.
 */
function callerFrom(header: string | undefined): { caller: Caller | null; apiKey: ApiKeyCaller | null } {
  const none = { caller: null, apiKey: null };
  if (!header) return none;
  try {
    const parsed = JSON.parse(header) as { userId?: unknown; sessionId?: unknown; apiKey?: { id?: unknown; communityId?: unknown; scopes?: unknown } };
    const key = parsed.apiKey;
    const apiKey =
      key && typeof key.id === 'string' && typeof key.communityId === 'string' && Array.isArray(key.scopes) && key.scopes.every((s) => typeof s === 'string')
        ? { id: key.id, communityId: key.communityId, scopes: key.scopes as string[] }
        : null;
    const sessionId = typeof parsed.sessionId === 'string' ? { sessionId: parsed.sessionId } : {};
    return { caller: typeof parsed.userId === 'string' ? { userId: parsed.userId, ...sessionId } : null, apiKey };
  } catch {
    return none;
  }
}

/**
 * Serves one subgraph alone over HTTP for the distributed deployment. Only the gateway may call it:
 * every request must carry the shared internal secret (checked in constant time), else 401.
 */
export async function serveSubgraph(name: SubgraphName, config: AppConfig, port = config.port): Promise<{ port: number; stop(): Promise<void> }> {
  if (!config.internalSecret) throw new Error('INTERNAL_SECRET is required to serve a subgraph alone');
  const log = pino({ level: config.logLevel }).child({ subgraph: name });
  const opened = await openDeps(config, { log });
  const app = opened.deps;
  const server = new ApolloServer<RequestContext>({
    schema: buildSubgraph(name),
    includeStacktraceInErrorResponses: false,
    plugins: [ApolloServerPluginInlineTraceDisabled(), operationTypePlugin],
    logger: log,
    formatError: (formatted, error) => {
      const mapped = toSubgraphError(error as any, log, '');
      return { message: mapped.message, path: formatted.path, extensions: mapped.extensions };
    },
  });
  await server.start();
  const http = express();
  http.disable('x-powered-by');
  http.use('/graphql', (req, res, next) => {
    const secret = req.headers[INTERNAL_SECRET_HEADER];
    if (typeof secret !== 'string' || !safeEqual(secret, config.internalSecret!)) {
      res.status(401).json({ errors: [{ message: 'Only the gateway may call this subgraph.', extensions: { code: 'UNAUTHENTICATED' } }] });
      return;
    }
    next();
  });
  http.use(
    '/graphql',
    express.json({ limit: config.bodyLimitBytes }),
    expressMiddleware(server, {
      context: async ({ req }) => ({
        app,
        ...callerFrom(req.headers[CALLER_HEADER] as string | undefined),
        requestId: String(req.headers['x-request-id'] ?? ''),
        clientAddress: typeof req.headers[CLIENT_ADDRESS_HEADER] === 'string' ? req.headers[CLIENT_ADDRESS_HEADER] : undefined,
      }),
    }),
  );
  const listener = await new Promise<Server>((resolve, reject) => {
    const s = http.listen(port, config.host, () => resolve(s)).on('error', reject);
  });
  const actual = (listener.address() as AddressInfo).port;
  log.info({ port: actual }, 'subgraph listening');
  return {
    port: actual,
    async stop() {
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
  serveSubgraph(name, loadConfig()).catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
