// The service process of test/faults/document-memory.test.ts and bench/documents.bench.ts (not a test itself): the
// whole service (server/service.ts) configured from its environment, listening on an ephemeral port, answering
// `memory` over IPC with its resident memory settled (two full GCs, an idle second, another GC: what the process
// keeps, not the garbage of the last requests) and its peak since the previous answer. Run with --expose-gc.
import { pino } from 'pino';
import { createService } from '../../server/service.js';
import { loadConfig } from '../../subgraphs/kernel/index.js';

const service = await createService(loadConfig(process.env), { log: pino({ level: 'silent' }) });
const port = await service.listen(0, '127.0.0.1');
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let peak = 0;
setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 100).unref();

process.on('message', async (message: { type: string }) => {
  if (message.type === 'memory') {
    const peakSinceLast = Math.max(peak, process.memoryUsage.rss());
    gc();
    gc();
    await sleep(1000);
    gc();
    await sleep(500);
    const { rss, heapUsed } = process.memoryUsage();
    peak = 0;
    process.send!({ type: 'memory', rss, heapUsed, peak: peakSinceLast });
  } else if (message.type === 'stop') {
    await service.stop();
    process.exit(0);
  }
});
process.send!({ type: 'ready', port });
