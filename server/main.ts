import { runWebProcess, start } from './run.js';

/**
 * `npm start` (`node dist/server/main.js`): the whole service in one process on one port: gateway, REST facade,
 * health checks and, when `WORKER_ENABLED` (the default), the background worker. PGlite when `DATABASE_URL` is unset.
 */
start(() => runWebProcess({ worker: true }));
