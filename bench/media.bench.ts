// Issue 14, uploads: (1) upload throughput of 10 MB images through POST /media (busboy, type sniffing, sharp
// re-encoding into WebP and a thumbnail, the store, the rows), in MB/s, beside a plain fs.writeFile of the same bytes
// in the same run, as a ratio; (2) the process's resident memory (RSS) before, at its peak during, and after 20
// concurrent 100 MB lesson_video uploads: it must stay flat (the uploads are streamed, never held whole). The client
// streams each body from a generator of 64 KB chunks, so it holds no upload in memory either.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { startBenchService } from './lib.js';

const IMAGE_UPLOADS = 6;
const VIDEO_UPLOADS = 20;
const VIDEO_MB = 100;
const MB = 1024 * 1024;

/** A PNG of random pixels just under 10 MB (random pixels do not compress). */
async function tenMegabyteImage(): Promise<Buffer> {
  const side = 1800;
  return sharp(randomBytes(side * side * 3), { raw: { width: side, height: side, channels: 3 } }).png({ compressionLevel: 1 }).toBuffer();
}

/** POST /media as multipart/form-data, the file part streamed from `chunks`; resolves to the status and body. */
function upload(base: string, cookie: string, fields: Record<string, string>, size: number, chunks: () => Iterable<Buffer>): Promise<{ status: number; body: string }> {
  const boundary = `----bench${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    Object.entries(fields)
      .map(([k, v]) => `--${boundary}\r\ncontent-disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
      .join('') + `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="f"\r\ncontent-type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const req = request(`${base}/media`, {
      method: 'POST',
      headers: { cookie, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + size + tail.length) },
    });
    req.on('response', (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString() }));
    });
    req.on('error', reject);
    const it = chunks()[Symbol.iterator]();
    const pump = () => {
      for (;;) {
        const next = it.next();
        if (next.done) {
          req.end(tail);
          return;
        }
        if (!req.write(next.value)) {
          req.once('drain', pump);
          return;
        }
      }
    };
    req.write(head);
    pump();
  });
}

/** A fake MP4 of `size` bytes: an `ftyp isom` box, then filler, 64 KB at a time (the same chunk reused). */
function* videoChunks(size: number): Iterable<Buffer> {
  const chunk = Buffer.alloc(64 * 1024, 7);
  Buffer.from('\0\0\0\x20ftypisom\0\0\x02\0isomiso2avc1mp41', 'latin1').copy(chunk);
  yield chunk;
  const filler = Buffer.alloc(64 * 1024, 7);
  for (let sent = chunk.length; sent < size; sent += filler.length) yield sent + filler.length <= size ? filler : filler.subarray(0, size - sent);
}

const rssMb = () => process.memoryUsage().rss / MB;

export default async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-media-bench-'));
  const { service, base } = await startBenchService({
    MEDIA_DIR: dir,
    WORKER_ENABLED: 'false', // nothing transcodes the fake videos
    HTTP_REQUEST_TIMEOUT_MS: '600000',
    POSTING_RATE_LIMIT_PER_MINUTE: '1000000',
  });
  try {
    const u = randomBytes(5).toString('hex');
    const signup = await fetch(`${base}/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `bench_${u}@example.com`, password: 'correct horse battery', username: `b_${u}`, displayName: 'Bench' }),
    });
    const cookie = String(signup.headers.get('set-cookie')).split(';')[0];
    const created = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify({ query: 'mutation($i: CreateCommunityInput!){ createCommunity(input: $i){ id } }', variables: { i: { name: `Bench ${u}`, handle: `bench-${u}` } } }),
    });
    const tribeId = ((await created.json()) as { data: { createCommunity: { id: string } } }).data.createCommunity.id;

    // (1) Throughput of 10 MB images, against fs.writeFile of the same bytes.
    const image = await tenMegabyteImage();
    const warm = await upload(base, cookie, { kind: 'post_image' }, image.length, () => [image]);
    if (warm.status !== 201) throw new Error(`upload failed: ${warm.status} ${warm.body}`);
    let started = performance.now();
    for (let i = 0; i < IMAGE_UPLOADS; i += 1) {
      const res = await upload(base, cookie, { kind: 'post_image' }, image.length, () => [image]);
      if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${res.body}`);
    }
    const uploadSeconds = (performance.now() - started) / 1000;
    started = performance.now();
    for (let i = 0; i < IMAGE_UPLOADS; i += 1) await writeFile(path.join(dir, `anchor-${i}.bin`), image);
    const fsSeconds = (performance.now() - started) / 1000;
    const megabytes = (image.length * IMAGE_UPLOADS) / MB;
    const uploadRate = megabytes / uploadSeconds;
    const fsRate = megabytes / fsSeconds;
    console.log(`10 MB image uploads (${IMAGE_UPLOADS} x ${(image.length / MB).toFixed(2)} MB PNG, one at a time, POST /media post_image: busboy, sniffing, sharp WebP 2048 px + 320 px thumb, rows)`);
    console.log(`  subject: ${uploadRate.toFixed(1)} MB/s (${((uploadSeconds * 1000) / IMAGE_UPLOADS).toFixed(0)} ms an upload)`);
    console.log(`  anchor : ${fsRate.toFixed(1)} MB/s (fs.writeFile of the same bytes)`);
    console.log(`  ratio  : ${(uploadRate / fsRate).toFixed(4)}`);

    // (2) Memory during 20 concurrent 100 MB video uploads.
    if (global.gc) global.gc();
    const before = rssMb();
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb())), 20);
    started = performance.now();
    const results = await Promise.all(
      Array.from({ length: VIDEO_UPLOADS }, () => upload(base, cookie, { kind: 'lesson_video', communityId: tribeId }, VIDEO_MB * MB, () => videoChunks(VIDEO_MB * MB))),
    );
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const failed = results.filter((r) => r.status !== 201);
    if (failed.length) throw new Error(`${failed.length} video uploads failed: ${failed[0].status} ${failed[0].body}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const after = rssMb();
    console.log(`${VIDEO_UPLOADS} concurrent ${VIDEO_MB} MB lesson_video uploads (${((VIDEO_UPLOADS * VIDEO_MB) / seconds).toFixed(0)} MB/s in all, ${seconds.toFixed(1)} s)`);
    console.log(`  RSS before: ${before.toFixed(0)} MB, peak: ${peak.toFixed(0)} MB (+${(peak - before).toFixed(0)} MB for ${VIDEO_UPLOADS * VIDEO_MB} MB received), after: ${after.toFixed(0)} MB`);
    console.log(`  ratio  : peak growth / bytes received = ${((peak - before) / (VIDEO_UPLOADS * VIDEO_MB)).toFixed(4)} (flat: far below 1)`);
  } finally {
    await service.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
