// The service process of bench/memory.bench.ts (not a benchmark itself): the whole service on DATABASE_URL, the
// Platform API limiter and the GraphQL cost limit on with limits no load reaches, listening on an ephemeral port, answering `stats` over IPC
// with its resident memory (as it stands, its peak since the last `stats`, just after a full GC, and settled after
// an idle second), V8 heap and malloc arenas. Run with --expose-gc.
import { readFileSync } from 'node:fs';
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
  // The GraphQL cost budgets out of the way too (as bench/lib.ts's startBenchService): the mix sends a quarter of its
  // requests as homeFeed from one user, and the default budget answered a quarter of the whole load 429.
  GRAPHQL_COST_MAX_USER: '1000000000',
  GRAPHQL_COST_RESTORE_USER: '1000000000',
  NODE_ENV: 'production',
});
const service = await createService(config, { log: pino({ level: 'silent' }) });
const port = await service.listen(0, '127.0.0.1');
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// The highest RSS seen since the last `stats` (read every 100 ms while the load runs).
let peak = 0;
setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 100).unref();

/**
 * Resident bytes of malloc's arenas (/proc/self/smaps): the main arena (`[heap]`) and the threads' arenas, which
 * glibc maps anonymously at 64 MB-aligned addresses in the mmap area near the libraries (V8 places its pages at
 * random addresses below 0x400000000000).
 */
function mallocResident(): number {
  let text: string;
  try {
    text = readFileSync('/proc/self/smaps', 'utf8');
  } catch {
    return 0;
  }
  let total = 0;
  let malloc = false;
  for (const line of text.split('\n')) {
    const header = /^([0-9a-f]+)-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      const start = BigInt(`0x${header[1]}`);
      malloc = header[2] === '[heap]' || (header[2] === '' && start >= 0x500000000000n && start % 0x4000000n === 0n);
    } else if (malloc && line.startsWith('Rss:')) total += Number(line.split(/\s+/)[1]) * 1024;
  }
  return total;
}

process.on('message', async (message: { type: string }) => {
  if (message.type === 'stats') {
    const rss = process.memoryUsage.rss();
    const peakSinceLast = Math.max(peak, rss);
    gc();
    gc();
    const rssAfterGc = process.memoryUsage.rss();
    // Settled: a second idle (V8 unmaps the pages a GC freed on a background thread, and its memory reducer runs
    // when the process goes quiet), a full GC, another second, then the reading.
    await sleep(1000);
    gc();
    await sleep(1000);
    const settled = process.memoryUsage();
    peak = 0;
    process.send!({
      type: 'stats',
      rss,
      peak: peakSinceLast,
      rssAfterGc,
      rssSettled: settled.rss,
      heapUsed: settled.heapUsed,
      heapTotal: settled.heapTotal,
      external: settled.external,
      arrayBuffers: settled.arrayBuffers,
      malloc: mallocResident(),
    });
  } else if (message.type === 'stop') {
    await service.stop();
    process.exit(0);
  }
});
process.send!({ type: 'ready', port });
