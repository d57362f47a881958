// Issue 29 (memory): 24,000 distinct small anonymous documents moved the server from 196 MB to about 900 MB resident,
// where it stayed: every parsed document, query plan and compiled fetch was kept. Against the real service in a
// process of its own (test/faults/measured-service.ts), distinct documents sent once each now leave what the process
// keeps (settled after full GCs) within the 100 MB for 20,000 documents, i.e. 5 KB a document; before the
// caches were bounded, 2,000 of them kept about 20 MB of heap. `npm run bench documents` sends the full 20,000.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { isolatedDatabase, TEST_DATABASE_URL } from '../support.js';
import { sendDistinct, startMeasuredService, type MeasuredService } from './distinct-documents.js';

const DOCUMENTS = 2_000;
const WARM_UP = 300;
const MB = 1024 * 1024;
/** The bound, 100 MB for 20,000 documents, per document. */
const BYTES_PER_DOCUMENT = (100 * MB) / 20_000;

const describePg = TEST_DATABASE_URL ? describe : describe.skip;

describePg('memory kept for distinct GraphQL documents', () => {
  let database: Awaited<ReturnType<typeof isolatedDatabase>>;
  let service: MeasuredService;

  beforeAll(async () => {
    database = await isolatedDatabase();
    service = await startMeasuredService(database.url!);
  }, 60_000);

  afterAll(async () => {
    await service?.stop();
    await database?.drop();
  }, 30_000);

  it(`${DOCUMENTS} distinct anonymous documents sent once each keep under 5 KB each in the server process`, async () => {
    // Warm-up (code paths, JIT, heap sizing) with other documents than those measured.
    await sendDistinct(service.base, 1_000_000, WARM_UP);
    const before = await service.memory();
    const rps = await sendDistinct(service.base, 0, DOCUMENTS);
    const after = await service.memory();
    const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
    console.log(
      `${DOCUMENTS} distinct documents (${rps.toFixed(0)} req/s): heap used ${mb(before.heapUsed)} -> ${mb(after.heapUsed)}, RSS ${mb(before.rss)} -> ${mb(after.rss)} (peak ${mb(after.peak)})`,
    );
    expect(after.heapUsed - before.heapUsed).toBeLessThan(DOCUMENTS * BYTES_PER_DOCUMENT);
    expect(after.rss - before.rss).toBeLessThan(100 * MB);
  }, 240_000);
});
