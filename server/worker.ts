import { pino } from 'pino';
import { startWorker } from '../jobs/src/worker.js';
import { openDeps } from './deps.js';
import { configOrExit, start } from './run.js';

/** The longest a stop on SIGTERM or SIGINT may take before the process exits anyway. */
const SHUTDOWN_LIMIT_MS = 9_000;

/**
 * A worker-only process (`node dist/server/worker.js`) for the split deployment: the Agenda jobs on the
 * configured database, no HTTP port. Several may run at once; SIGTERM and SIGINT stop it cleanly.
 */
async function main(): Promise<void> {
  const config = configOrExit();
  const log = pino({ level: config.logLevel }).child({ role: 'worker' });
  const opened = await openDeps(config, { log });
  const worker = await startWorker(opened.deps);
  const shutdown = async (signal: string) => {
    log.info({ signal }, 'worker shutting down');
    // Whatever the database does meanwhile, the process is gone within SHUTDOWN_LIMIT_MS (what it had not
    // recorded is sent again by another worker: deliveries are at least once).
    setTimeout(() => {
      log.error({ limitMs: SHUTDOWN_LIMIT_MS }, 'worker did not stop in time: exiting');
      process.exit(1);
    }, SHUTDOWN_LIMIT_MS).unref();
    try {
      await worker.stop();
      await opened.close();
    } catch (error) {
      log.error({ err: error }, 'worker shutdown failed');
      process.exit(1);
    }
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
}

start(main);
