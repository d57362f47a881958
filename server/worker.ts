import { startWorker, type Worker } from '../jobs/src/worker.js';
import { serveMetrics } from '../subgraphs/kernel/metrics.js';
import { createLogger } from '../subgraphs/kernel/logging.js';
import { startTracing } from '../subgraphs/kernel/tracing.js';
import { openDeps } from './deps.js';
import { configOrExit, start } from './run.js';

/** The longest a stop on SIGTERM or SIGINT may take before the process exits anyway. */
const SHUTDOWN_LIMIT_MS = 9_000;

/**
 * A worker-only process (`node dist/server/worker.js`) for the split deployment: the Agenda jobs on the
 * configured database, no public port (only `METRICS_PORT` when set). Several may run at once; SIGTERM and SIGINT stop it cleanly.
 */
async function main(): Promise<void> {
  const config = configOrExit();
  const log = createLogger(config.logLevel).child({ role: 'worker' });
  // Before the database pool opens; nothing is loaded when OTEL_* is unset.
  const tracing = await startTracing(config, 'svc-worker');
  const opened = await openDeps(config, { log });
  // The signals are handled from here on: the worker takes jobs as soon as it starts, so a SIGTERM arriving before
  // its start-up has finished must stop it cleanly too (it waits for the start-up, then stops).
  let worker: Worker | undefined;
  let metrics: Awaited<ReturnType<typeof serveMetrics>> | undefined;
  const starting = (async () => {
    worker = await startWorker(opened.deps);
    // The worker has no public port: `METRICS_PORT` (when set) is its only listener.
    metrics = config.metrics.port === undefined ? undefined : await serveMetrics({ port: config.metrics.port, host: config.metrics.host });
    if (metrics) log.info({ metricsPort: metrics.port }, 'worker metrics listening');
  })();
  const shutdown = async (signal: string) => {
    log.info({ signal }, 'worker shutting down');
    // Whatever the database does meanwhile, the process is gone within SHUTDOWN_LIMIT_MS (what it had not
    // recorded is sent again by another worker: deliveries are at least once).
    setTimeout(() => {
      log.error({ limitMs: SHUTDOWN_LIMIT_MS }, 'worker did not stop in time: exiting');
      process.exit(1);
    }, SHUTDOWN_LIMIT_MS).unref();
    try {
      await starting.catch(() => undefined); // a failed start-up is reported by main
      await worker?.stop();
      await opened.close();
      await metrics?.close();
      await tracing.stop(); // the spans not exported yet
    } catch (error) {
      log.error({ err: error }, 'worker shutdown failed');
      process.exit(1);
    }
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  await starting;
}

start(main);
