// Issue 29 (memory): resident memory of the service (its own process) after 20,000 distinct small anonymous GraphQL
// documents, each sent once (a fresh alias and literal; half answered by one subgraph, half by two), beside its value
// before them (after a warm-up of 500 others), as a ratio, and the difference (goal: under 100 MB). Settled: after
// full GCs and an idle second, what the process keeps. BENCH_DOCUMENTS changes the count.
import { distinctDocument, sendDistinct, startMeasuredService, type Memory } from '../test/faults/distinct-documents.js';
import { BENCH_DATABASE_URL } from './lib.js';

const TOTAL = Number(process.env.BENCH_DOCUMENTS ?? 20_000);
const WARM_UP = 500;

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

export default async function documentsBench(): Promise<void> {
  const service = await startMeasuredService(BENCH_DATABASE_URL);
  try {
    // Documents past TOTAL for the warm-up: none of them is sent again.
    await sendDistinct(service.base, TOTAL, WARM_UP);
    const before = await service.memory();
    const rps = await sendDistinct(service.base, 0, TOTAL);
    const after = await service.memory();
    const line = (m: Memory) => `RSS ${mb(m.rss)} settled (peak ${mb(m.peak)}), heap used ${mb(m.heapUsed)}`;
    console.log(`Documents: ${TOTAL} distinct anonymous documents to /graphql (${distinctDocument(1)} ...), ${rps.toFixed(0)} req/s`);
    console.log(`  anchor  : before: ${line(before)}`);
    console.log(`  subject : after : ${line(after)}`);
    console.log(
      `  figure  : RSS settled ${(after.rss / before.rss).toFixed(3)} (+${mb(after.rss - before.rss)}), peak +${mb(after.peak - before.rss)}, heap used +${mb(after.heapUsed - before.heapUsed)} (goal: under +100 MB)`,
    );
  } finally {
    await service.stop();
  }
}
