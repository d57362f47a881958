// The service process of bench/realtime.bench.ts (not a benchmark itself): the whole service on DATABASE_URL,
// listening on an ephemeral port, answering `stats` over IPC with its memory after a full GC, its WebSocket clients,
// routed subscriptions and SQL statements sent. Run with --expose-gc.
import { pino } from 'pino';
import { createService } from '../server/service.js';
import { loadConfig } from '../subgraphs/kernel/index.js';

const config = loadConfig({
  DATABASE_URL: process.env.DATABASE_URL,
  JWT_SECRET: process.env.JWT_SECRET,
  LOG_LEVEL: 'silent',
  COOKIE_SECURE: 'false',
  DATABASE_POOL_SIZE: '10',
  // bench/notify-latency.bench.ts runs it as `npm start` does, with the worker; bench/realtime.bench.ts runs the job itself.
  WORKER_ENABLED: process.env.WORKER_ENABLED ?? 'false',
  NODE_ENV: 'production',
});
const service = await createService(config, { log: pino({ level: 'silent' }) });
const port = await service.listen(0, '127.0.0.1');
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
process.on('message', async (message: { type: string }) => {
  if (message.type === 'stats') {
    gc();
    gc();
    const { heapUsed, external, rss } = process.memoryUsage();
    process.send!({
      type: 'stats',
      heapUsed,
      external,
      rss,
      clients: service.realtime!.clients,
      subscriptions: service.realtime!.subscriptions,
      statements: service.deps.database.stats.statements,
    });
  } else if (message.type === 'stop') {
    await service.stop();
    process.exit(0);
  }
});
process.send!({ type: 'ready', port });
