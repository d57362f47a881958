import { ConfigError, loadConfig } from '../../subgraphs/kernel/index.js';
import { createService } from './service.js';

/** `npm start`: the whole service in one process on one port. */
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
  const service = await createService(config);
  await service.listen();
  const shutdown = async (signal: string) => {
    service.deps.log.info({ signal }, 'shutting down');
    await service.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
