import { type AppConfig, ConfigError, loadConfig } from '../subgraphs/kernel/index.js';
import { createService } from './service.js';

/** The validated configuration of this process, or exit 1 with every bad variable named. */
export function configOrExit(): AppConfig {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
}

/**
 * Runs the web side on one port until SIGTERM or SIGINT: `npm start` (`server/main.ts`, the worker too when
 * `WORKER_ENABLED`) and the web process of the split deployment (`server/web.ts`, never a worker).
 */
export async function runWebProcess(options: { worker: boolean }): Promise<void> {
  const loaded = configOrExit();
  const config = options.worker ? loaded : Object.freeze({ ...loaded, worker: Object.freeze({ ...loaded.worker, enabled: false }) });
  const service = await createService(config);
  await service.listen();
  // First SIGTERM or SIGINT: drain (in-flight requests finish within SHUTDOWN_GRACE_MS), exit 0. A second one, or a
  // stop that hangs past the grace period, exits at once with 1.
  let stopping = false;
  const shutdown = async (signal: string) => {
    const log = service.deps.log;
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down');
    setTimeout(() => {
      log.error('shutdown did not finish in time: exiting now');
      process.exit(1);
    }, config.shutdownGraceMs + 1_500).unref();
    try {
      await service.stop();
    } catch (error) {
      log.error({ err: error }, 'error while shutting down');
      process.exit(1);
    }
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

/** Runs an entry point's `main`, exiting 1 with the error when it fails to start. */
export function start(main: () => Promise<void>): void {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
