// The service process of bench/memory.bench.ts (not a benchmark itself): the whole service on DATABASE_URL, the
// Platform API limiter on with a limit no load reaches, listening on an ephemeral port, answering `stats` over IPC
// with its resident memory (as it stands, then after a full GC) and heap. Run with --expose-gc.
import { pino } from 'pino';
import { createService } from '../server/service.js';
import { loadConfig } from '../subgraphs/kernel/index.js';

const config = loadConfig({
  DATABASE_URL: process.env.DATABASE_URL,
  JWT_SECRET: process.env.JWT_SECRET,
  LOG_LEVEL: 'silent',
  COOKIE_SECURE: 'false',
  DATABASE_POOL_SIZE: '10',
  WORKER_ENABLED: 'false',
  RATE_LIMIT_PER_MINUTE: '1000000000',
  NODE_ENV: 'production',
});
const service = await createService(config, { log: pino({ level: 'silent' }) });
const port = await service.listen(0, '127.0.0.1');
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
process.on('message', async (message: { type: string }) => {
  if (message.type === 'stats') {
    const rss = process.memoryUsage.rss();
    gc();
    gc();
    const after = process.memoryUsage();
    process.send!({ type: 'stats', rss, rssAfterGc: after.rss, heapUsed: after.heapUsed, heapTotal: after.heapTotal, external: after.external });
  } else if (message.type === 'stop') {
    await service.stop();
    process.exit(0);
  }
});
process.send!({ type: 'ready', port });
