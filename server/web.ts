import { runWebProcess, start } from './run.js';

/**
 * The web process of the split deployment (`node dist/server/web.js`): gateway, REST facade and health checks on
 * one port, never the background worker (whatever `WORKER_ENABLED` says); `server/worker.ts` runs the jobs.
 */
start(() => runWebProcess({ worker: false }));
