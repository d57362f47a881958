import { type AppConfig, ConfigError, loadConfig } from '../subgraphs/kernel/index.js';
import { startTracing } from '../subgraphs/kernel/tracing.js';
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
  // Before the database pool opens (its statements become spans); nothing is loaded when OTEL_* is unset.
  const tracing = await startTracing(config, options.worker ? 'svc' : 'svc-web');
  // The signals are handled from here on: /readyz answers before `listen` has returned (the subscriptions' listener
  // is still connecting), so a signal arriving during the start-up must stop it cleanly too (after the start-up).
  let service: Awaited<ReturnType<typeof createService>> | undefined;
  const starting = (async () => {
    service = await createService(config);
    await service.listen();
  })();
  // First SIGTERM or SIGINT: drain (in-flight requests finish within SHUTDOWN_GRACE_MS), exit 0. A second one, or a
  // stop that hangs past the grace period, exits at once with 1.
  // The same signal again within a second is the same stop, not a second one: a terminal's Ctrl-C reaches `npm start`
  // and the server (one process group), and npm forwards its copy to the server.
  let stopping = false;
  let firstSignalAt = 0;
  const shutdown = async (signal: string) => {
    if (stopping && Date.now() - firstSignalAt < 1_000) return;
    if (stopping) {
      if (service) service.deps.log.warn({ signal }, 'second signal: exiting now');
      else console.error(`second ${signal}: exiting now`);
      process.exit(1);
    }
    stopping = true;
    firstSignalAt = Date.now();
    await starting.catch(() => undefined); // a failed start-up is reported by `start`
    if (!service) return;
    const log = service.deps.log;
    log.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down');
    setTimeout(() => {
      log.error('shutdown did not finish in time: exiting now');
      process.exit(1);
    }, config.shutdownGraceMs + 1_500).unref();
    try {
      await service.stop();
      await tracing.stop(); // the spans not exported yet
    } catch (error) {
      log.error({ err: error }, 'error while shutting down');
      process.exit(1);
    }
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  await starting;
}

/** Runs an entry point's `main`, exiting 1 with the error when it fails to start. */
export function start(main: () => Promise<void>): void {
  main().catch((error) => {
    // A refusal an operator acts on (the data directory in use) is its message alone, without a stack.
    console.error((error as { code?: string }).code === 'DATA_DIR_LOCKED' ? (error as Error).message : error);
    process.exit(1);
  });
}
