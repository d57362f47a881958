import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino, type Logger } from 'pino';
import { migrate, openDatabase } from '../../db/src/index.js';
import { startWorker, type Worker } from '../../jobs/src/worker.js';
import { closeHttpApp, createHttpApp } from '../../rest-facade/src/app.js';
import { type AppConfig, type AppDeps, type Clock, systemClock } from '../../subgraphs/kernel/index.js';
import { attachWebhooks, closeWebhooks, type WebhookRuntimeOptions } from '../../subgraphs/webhooks/index.js';
import { createGraph, type Graph } from './graph.js';

export interface Service {
  deps: AppDeps;
  graph: Graph;
  http: ReturnType<typeof createHttpApp>;
  /** Present after `listen`. */
  server?: Server;
  /** The background worker, when `WORKER_ENABLED`. */
  worker?: Worker;
  listen(port?: number, host?: string): Promise<number>;
  stop(): Promise<void>;
}

export interface ServiceOptions {
  clock?: Clock;
  log?: Logger;
  /** Webhook delivery options (tests inject a DNS resolver). */
  webhooks?: WebhookRuntimeOptions;
}

/** Opens the database, applies migrations, builds the gateway and the HTTP app. Does not listen yet. */
export async function createService(config: AppConfig, options: ServiceOptions = {}): Promise<Service> {
  const log = options.log ?? pino({ level: config.logLevel });
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolSize: config.databasePoolSize });
  try {
    const applied = await migrate(database);
    if (applied.length) log.info({ applied }, 'migrations applied');
    if (config.jwtSecretGenerated) log.warn('JWT_SECRET is not set: access tokens are signed with a random per-process key');
    const deps: AppDeps = { database, config, clock: options.clock ?? systemClock, log };
    attachWebhooks(deps, options.webhooks);
    const graph = await createGraph(deps);
    const http = createHttpApp(deps, graph);
    const worker = config.worker.enabled ? await startWorker(deps) : undefined;
    const service: Service = {
      deps,
      graph,
      http,
      worker,
      async listen(port = config.port, host = config.host) {
        service.server = await new Promise<Server>((resolve, reject) => {
          const s = http.listen(port, host, () => resolve(s)).on('error', reject);
        });
        const actual = (service.server.address() as AddressInfo).port;
        log.info({ port: actual, database: database.kind }, 'listening');
        return actual;
      },
      async stop() {
        await new Promise<void>((resolve) => (service.server ? service.server.close(() => resolve()) : resolve()));
        service.server?.closeAllConnections?.();
        await closeHttpApp(http);
        await worker?.stop();
        await closeWebhooks(deps);
        await graph.stop();
        await database.close();
      },
    };
    return service;
  } catch (error) {
    await database.close();
    throw error;
  }
}
