import { pino } from 'pino';
import { migrate, openDatabase } from '../../db/src/index.js';
import { type AppDeps, ConfigError, loadConfig, systemClock } from '../../subgraphs/kernel/index.js';
import { attachWebhooks, closeWebhooks } from '../../subgraphs/webhooks/index.js';
import { startWorker } from './worker.js';

/** The longest a stop on SIGTERM or SIGINT may take before the process exits anyway. */
const SHUTDOWN_LIMIT_MS = 9_000;

/**
 * A worker-only process (`node dist/jobs/src/main.js`) for the split deployment: the Agenda jobs on the
 * configured database, no HTTP port. Several may run at once; SIGTERM and SIGINT stop it cleanly.
 */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const log = pino({ level: config.logLevel }).child({ role: 'worker' });
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolSize: config.databasePoolSize });
  await migrate(database);
  const app: AppDeps = { database, config, clock: systemClock, log };
  attachWebhooks(app);
  const worker = await startWorker(app);
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
      await closeWebhooks(app);
      await database.close();
    } catch (error) {
      log.error({ err: error }, 'worker shutdown failed');
      process.exit(1);
    }
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
