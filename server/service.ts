import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { createGraph, type Graph } from '../gateway/src/graph.js';
import { attachSubscriptions, type SubscriptionServer } from '../gateway/src/subscriptions.js';
import { startWorker, type Worker } from '../jobs/src/worker.js';
import { closeHttpApp, createHttpApp } from '../rest-facade/src/app.js';
import { webSocketAuth } from '../rest-facade/src/auth.js';
import { conversationAudience } from '../subgraphs/engagement/index.js';
import type { AppConfig, AppDeps } from '../subgraphs/kernel/index.js';
import { type MetricsServer, serveMetrics, watchRealtime } from '../subgraphs/kernel/metrics.js';
import { type DepsOptions, openDeps } from './deps.js';

export interface Service {
  deps: AppDeps;
  graph: Graph;
  http: ReturnType<typeof createHttpApp>;
  /** Present after `listen`. */
  server?: Server;
  /** GraphQL subscriptions over WebSocket on the same server's `/graphql`: present after `listen`. */
  realtime?: SubscriptionServer;
  /** The background worker, when `WORKER_ENABLED`. */
  worker?: Worker;
  /** The Prometheus endpoint on `METRICS_PORT`, when set: present after `listen`. */
  metrics?: MetricsServer;
  listen(port?: number, host?: string): Promise<number>;
  /**
   * Graceful shutdown: stops accepting connections, closes idle keep-alive ones, lets in-flight requests finish
   * for up to `SHUTDOWN_GRACE_MS` (then cuts what is left), then stops the worker and closes the database.
   */
  stop(): Promise<void>;
}

export type ServiceOptions = DepsOptions;

/**
 * The web side (gateway, REST facade, health checks) and, when `WORKER_ENABLED`, the background worker, on the
 * dependencies of `openDeps`. Does not listen yet.
 */
export async function createService(config: AppConfig, options: ServiceOptions = {}): Promise<Service> {
  const opened = await openDeps(config, options);
  const { deps } = opened;
  const { database, log } = deps;
  try {
    if (config.jwtSecretGenerated) log.warn('JWT_SECRET is not set: access tokens are signed with a random per-process key');
    const graph = await createGraph(deps);
    const http = createHttpApp(deps, graph);
    const worker = config.worker.enabled ? await startWorker(deps) : undefined;
    let draining = false;
    let unwatchRealtime = () => undefined as unknown;
    let inFlight = 0;
    const service: Service = {
      deps,
      graph,
      http,
      worker,
      async listen(port = config.port, host = config.host) {
        const limits = config.http;
        const server = createServer(
          {
            headersTimeout: limits.headersTimeoutMs,
            requestTimeout: limits.requestTimeoutMs,
            keepAliveTimeout: limits.keepAliveTimeoutMs,
            maxHeaderSize: limits.maxHeaderBytes,
            connectionsCheckingInterval: limits.checkIntervalMs,
          },
          (req, res) => {
            // While draining, a request on a kept-alive connection is still served, and its connection then closes.
            if (draining) res.setHeader('connection', 'close');
            inFlight += 1;
            res.once('close', () => (inFlight -= 1));
            http(req, res);
          },
        );
        service.server = await new Promise<Server>((resolve, reject) => {
          server.once('error', reject).listen(port, host, () => resolve(server));
        });
        service.realtime = await attachSubscriptions(service.server, {
          app: deps,
          graph,
          authenticate: webSocketAuth(deps),
          participantsOf: conversationAudience,
        });
        unwatchRealtime = watchRealtime(service.realtime); // svc_realtime_sockets_open, svc_realtime_subscriptions
        const actual = (service.server.address() as AddressInfo).port;
        if (config.metrics.port !== undefined) service.metrics = await serveMetrics({ port: config.metrics.port, host: config.metrics.host });
        log.info({ port: actual, database: database.kind, metricsPort: service.metrics?.port }, 'listening');
        return actual;
      },
      async stop() {
        draining = true;
        await service.realtime?.close(); // WebSocket clients hear 1001 (going away) and reconnect elsewhere
        unwatchRealtime();
        if (service.server?.listening) await drain(service.server, () => inFlight, config.shutdownGraceMs, log);
        await closeHttpApp(http);
        await worker?.stop();
        await graph.stop();
        await opened.close();
        await service.metrics?.close(); // last: a scrape during the drain still answers
      },
    };
    return service;
  } catch (error) {
    await opened.close();
    throw error;
  }
}

/**
 * Closes `server` gracefully: no new connections; idle keep-alive connections closed at once and each busy one as
 * soon as its response ends; once no request is in flight, or after `graceMs`, whatever is left is destroyed.
 */
async function drain(server: Server, inFlight: () => number, graceMs: number, log: Logger): Promise<void> {
  // The close callback can fire while requests are still running (Node stops counting the connections): wait on
  // our own count of requests in flight instead.
  server.close();
  const deadline = Date.now() + graceMs;
  while (inFlight() > 0 && Date.now() < deadline) {
    server.closeIdleConnections();
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  if (inFlight() > 0) log.warn({ graceMs, inFlight: inFlight() }, 'shutdown grace period over: cutting the requests still running');
  server.closeAllConnections();
}
