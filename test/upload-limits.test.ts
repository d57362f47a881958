import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import type request from 'supertest';
import { loadConfig } from '../subgraphs/kernel/index.js';
import { LocalDiskStorage, PIXEL_BUDGETS, transcodePending, transcodeRuntime } from '../subgraphs/media/index.js';
import { actor, type Actor, crew, staffedTribe } from './factory.js';
import { countOf, gql, movableClock, startService, type TestService } from './support.js';

/**
 * Upload limits (issue 29, docs/media.md "Upload limits"): the per-user upload rate and byte quota counted in the
 * database so they hold under concurrency, the pixel budget of each image kind read from the header, and the bound on
 * images decoded at once per process (an upload flood queues, /healthz stays fast).
 */

const PER_MINUTE = 6;
const QUOTA_MB = 1;
const MB = 1024 * 1024;

let t: TestService;
let dir: string;
let store: LocalDiskStorage;
const clock = movableClock();

const upload = (who: Actor, bytes: Buffer, kind = 'post_image', where = '/media', on: TestService = t): request.Test =>
  on.api.post(where).set('cookie', who.cookie).field('kind', kind).attach('file', bytes, { filename: 'photo.png', contentType: 'image/png' });

/** The same upload through the resource API (`/v1/media`, Bearer token): its envelope carries the message. */
const uploadV1 = (who: Actor, bytes: Buffer, kind = 'post_image'): request.Test => upload(who, bytes, kind, '/v1/media').set('authorization', `Bearer ${who.token}`);

const png = (width = 64, height = 48) => sharp({ create: { width, height, channels: 3, background: '#3a6ea5' } }).png().toBuffer();
/** Random pixels do not compress: a PNG of about `side` x `side` x 3 bytes. */
const noisyPng = (side: number) => sharp(randomBytes(side * side * 3), { raw: { width: side, height: side, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer();

/** A PNG chunk: length, type, data, CRC-32 of type and data. */
const chunk = (type: string, data: Buffer) => {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([Buffer.from(type, 'latin1'), data])) >>> 0);
  return Buffer.concat([head, Buffer.from(type, 'latin1'), data, crc]);
};
/**
 * The attack's file in miniature: a PNG header declaring `width` x `height` pixels and one short IDAT chunk, so that
 * only a refusal from the header answers `image_too_large` (decoding it would fail as `invalid_image`, truncated).
 */
const declaring = (width: number, height: number) => {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.writeUInt8(8, 8); // bit depth
  ihdr.writeUInt8(2, 9); // RGB
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.alloc(width * 3 + 1))), chunk('IEND', Buffer.alloc(0))]);
};

/** `image` with a private ancillary chunk (`svPd`, ignored by decoders) before IEND, so that it is `size` bytes long. */
const paddedTo = async (image: Buffer, size: number) => {
  const iend = image.length - 12;
  return Buffer.concat([image.subarray(0, iend), chunk('svPd', Buffer.alloc(size - image.length - 12, 0x2a)), image.subarray(iend)]);
};

const mediaOf = (who: Actor) => countOf(t, sql`select count(*)::int as n from media where owner_id = ${who.id}`);

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'svc-upload-limits-'));
  store = new LocalDiskStorage(dir);
  t = await startService({ MEDIA_DIR: dir, MEDIA_UPLOADS_PER_MINUTE: String(PER_MINUTE), MEDIA_DAILY_UPLOAD_MB: String(QUOTA_MB), MEDIA_MAX_IMAGE_MB: '2' }, clock.now);
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('upload rate (MEDIA_UPLOADS_PER_MINUTE)', () => {
  it('20 concurrent uploads of one user with the limit 6: exactly 6 written, 14 answered 429 upload_rate_limited with Retry-After', async () => {
    const who = await actor(t);
    const bytes = await png();
    const answers = await Promise.all(Array.from({ length: 20 }, () => upload(who, bytes)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([...Array<number>(PER_MINUTE).fill(201), ...Array<number>(20 - PER_MINUTE).fill(429)]);
    for (const refused of answers.filter((a) => a.status === 429)) {
      expect(refused.body).toMatchObject({ error: 'upload_rate_limited' });
      const retryAfter = Number(refused.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
    }
    expect(await mediaOf(who)).toBe(PER_MINUTE);
    // The resource API's envelope says the same.
    const v1 = await upload(who, bytes, 'post_image', '/v1/media').set('authorization', `Bearer ${who.token}`);
    expect([v1.status, v1.body.error?.code, Number(v1.headers['retry-after']) > 0]).toEqual([429, 'upload_rate_limited', true]);
    // Another user is not slowed by it; the user uploads again once the minute has passed.
    expect((await upload(await actor(t), bytes)).status).toBe(201);
    clock.advance(61_000);
    expect((await upload(who, bytes)).status).toBe(201);
    expect(await mediaOf(who)).toBe(PER_MINUTE + 1);
  });

  it('is 20 a minute and 2048 MB a day unless configured, and refuses 0', () => {
    const media = loadConfig({}).media;
    expect([media.uploadsPerMinute, media.dailyUploadBytes, media.imageConcurrency, media.videoConcurrency]).toEqual([20, 2048 * MB, 1, 1]);
    expect(loadConfig({ MEDIA_UPLOADS_PER_MINUTE: '5', MEDIA_DAILY_UPLOAD_MB: '10', MEDIA_IMAGE_CONCURRENCY: '2' }).media).toMatchObject({ uploadsPerMinute: 5, dailyUploadBytes: 10 * MB, imageConcurrency: 2 });
    expect(() => loadConfig({ MEDIA_UPLOADS_PER_MINUTE: '0' })).toThrow(/MEDIA_UPLOADS_PER_MINUTE/);
    expect(() => loadConfig({ MEDIA_IMAGE_CONCURRENCY: '0' })).toThrow(/MEDIA_IMAGE_CONCURRENCY/);
  });
});

describe('daily byte quota (MEDIA_DAILY_UPLOAD_MB)', () => {
  it('5 concurrent uploads of 300 KB against 1 MB: exactly 3 written; then 429 upload_quota_exceeded until the oldest is 24 hours old', async () => {
    const who = await actor(t);
    const bytes = await noisyPng(315); // about 300 KB: three fit in 1 MB, four do not
    expect(bytes.length * 3).toBeLessThanOrEqual(QUOTA_MB * MB);
    expect(bytes.length * 4).toBeGreaterThan(QUOTA_MB * MB);
    const answers = await Promise.all(Array.from({ length: 5 }, () => upload(who, bytes)));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 201, 429, 429]);
    const refused = answers.find((a) => a.status === 429)!;
    expect(refused.body).toMatchObject({ error: 'upload_quota_exceeded' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(23 * 3600);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(24 * 3600);
    expect(await mediaOf(who)).toBe(3);
    expect(await countOf(t, sql`select sum(size_bytes)::int as n from media where owner_id = ${who.id}`)).toBe(3 * bytes.length);
    // Nothing of the refused uploads is kept in the store: every stored file belongs to a written media.
    const storedIds = [...new Set((await store.list()).map((f) => f.split('/')[1]))];
    expect(await countOf(t, sql`select count(*)::int as n from media where id = any(${`{${storedIds.join(',')}}`}::uuid[])`)).toBe(storedIds.length);

    clock.advance(61_000); // past the rate window: the quota alone refuses
    const later = await upload(who, bytes);
    expect([later.status, later.body.error]).toEqual([429, 'upload_quota_exceeded']);
    clock.advanceDays(1);
    expect((await upload(who, bytes)).status).toBe(201);
  });

  it('refuses the next upload before reading its file once the quota is full, and does not count it as an attempt', async () => {
    const who = await actor(t);
    const full = await paddedTo(await png(), QUOTA_MB * MB); // exactly the quota
    expect((await upload(who, full)).status).toBe(201);
    const attempts = () => countOf(t, sql`select count(*)::int as n from media_upload_attempts where user_id = ${who.id}`);
    const counted = await attempts();
    const next = await uploadV1(who, await png());
    expect([next.status, next.body.error.code]).toEqual([429, 'upload_quota_exceeded']);
    expect(next.body.error.message).toMatch(/reach the quota of 1 MB/);
    expect(Number(next.headers['retry-after'])).toBeGreaterThan(23 * 3600);
    expect((await upload(who, await png())).status).toBe(429);
    expect(await attempts()).toBe(counted);
    expect(await mediaOf(who)).toBe(1);
  });
});

describe('pixel budget of each image kind', () => {
  it('a 156 KB-style PNG declaring 7,000 x 7,000 pixels is refused from its header: 400 image_too_large naming the field, the kind and the budget', async () => {
    const who = await actor(t);
    const attack = declaring(7000, 7000);
    const before = { rows: await mediaOf(who), files: (await store.list()).length };
    for (const kind of ['post_image', 'avatar']) {
      const flat = await upload(who, attack, kind);
      expect([flat.status, flat.body]).toEqual([400, { error: 'image_too_large', message: expect.any(String), requestId: expect.any(String) }]);
      const res = await uploadV1(who, attack, kind);
      expect([res.status, res.body.error.code]).toEqual([400, 'image_too_large']);
      expect(res.body.error.details).toEqual([{ field: 'file', message: 'image_too_large' }]);
      expect(res.body.error.message).toContain('file:');
      expect(res.body.error.message).toContain('7,000 x 7,000');
      expect(res.body.error.message).toContain(`a ${kind} may have at most ${PIXEL_BUDGETS[kind as keyof typeof PIXEL_BUDGETS].toLocaleString('en-US')} pixels`);
    }
    expect({ rows: await mediaOf(who), files: (await store.list()).length }).toEqual(before);
    expect(PIXEL_BUDGETS).toEqual({ avatar: 16_000_000, post_image: 40_000_000 });
  });

  it('an avatar has a smaller budget than a post image: 5,000 x 4,000 (20 MP) is a post image, not an avatar', async () => {
    const who = await actor(t);
    const twenty = declaring(5000, 4000);
    const avatar = await upload(who, twenty, 'avatar');
    expect([avatar.status, avatar.body.error]).toEqual([400, 'image_too_large']);
    // As a post image it passes the budget and is decoded (this one is cut short on purpose: invalid_image).
    const post = await upload(who, twenty, 'post_image');
    expect([post.status, post.body.error]).toEqual([400, 'invalid_image']);
  });
});

describe('images decoded at once per process (MEDIA_IMAGE_CONCURRENCY)', () => {
  let flood: TestService;
  let floodDir: string;

  beforeAll(async () => {
    floodDir = await mkdtemp(path.join(tmpdir(), 'svc-upload-flood-'));
    flood = await startService({ MEDIA_DIR: floodDir, MEDIA_IMAGE_CONCURRENCY: '1' });
  }, 60_000);

  afterAll(async () => {
    await flood?.stop();
    await rm(floodDir, { recursive: true, force: true });
  });

  it('6 concurrent uploads of a 1,500 x 1,500 image: libvips never works more than one image (two renditions) at once, and /healthz and GraphQL stay fast', async () => {
    const people = await Promise.all(Array.from({ length: 6 }, () => actor(flood)));
    const bytes = await png(1500, 1500);
    const quiet: number[] = [];
    for (let i = 0; i < 10; i += 1) quiet.push(await timed(() => flood.api.get('/healthz').expect(200)));

    // sharp's own counter of the libvips tasks in libuv's pool, sampled every few milliseconds during the flood.
    let busiest = 0;
    const sampler = setInterval(() => {
      busiest = Math.max(busiest, sharp.counters().process);
    }, 2);
    let done = false;
    const uploads = Promise.all(people.map((who) => upload(who, bytes, 'post_image', '/media', flood))).finally(() => {
      done = true;
    });
    const health: number[] = [];
    const graph: number[] = [];
    while (!done) {
      health.push(await timed(() => flood.api.get('/healthz').expect(200)));
      graph.push(await timed(async () => expect((await gql(flood, null, '{ __typename }')).data).toEqual({ __typename: 'Query' })));
      await new Promise((r) => setTimeout(r, 20));
    }
    const answers = await uploads;
    clearInterval(sampler);

    expect(answers.map((a) => a.status)).toEqual(Array<number>(6).fill(201));
    expect(busiest).toBeGreaterThanOrEqual(1);
    expect(busiest).toBeLessThanOrEqual(2); // unbounded, six images fill the whole pool (4)
    expect(health.length).toBeGreaterThanOrEqual(3);
    // Medians: with a few samples a p95 is the slowest one, which one GC pause or a busy CI machine decides.
    expect(median(health)).toBeLessThan(Math.max(500, 10 * median(quiet)));
    expect(median(graph)).toBeLessThan(1000);
  }, 120_000);
});

describe('videos transcoded at once per process (MEDIA_VIDEO_CONCURRENCY)', () => {
  let s: TestService;
  let work: string;

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'svc-upload-video-'));
    // ffmpeg and ffprobe behind wrappers that write when each ffmpeg run starts and ends.
    for (const tool of ['ffmpeg', 'ffprobe']) {
      const log = tool === 'ffmpeg' ? `echo "start $(date +%s%N)" >> ${work}/runs.log\n` : '';
      const end = tool === 'ffmpeg' ? `echo "end $(date +%s%N)" >> ${work}/runs.log\n` : '';
      writeFileSync(path.join(work, tool), `#!/bin/sh\n${log}/usr/bin/${tool} "$@"\nrc=$?\n${end}exit $rc\n`);
      chmodSync(path.join(work, tool), 0o755);
    }
    writeFileSync(path.join(work, 'runs.log'), '');
    s = await startService({ MEDIA_DIR: path.join(work, 'media'), FFMPEG_PATH: path.join(work, 'ffmpeg'), VIDEO_X264_PRESET: 'ultrafast', MEDIA_VIDEO_CONCURRENCY: '1' });
  }, 60_000);

  afterAll(async () => {
    await s?.stop();
    await rm(work, { recursive: true, force: true });
  });

  it('two transcoding runs at once in one process: their ffmpeg runs one after the other, and both videos end ready', async () => {
    const cast = await staffedTribe(s, await crew(s));
    const video = path.join(work, 'lesson.mp4');
    execFileSync('/usr/bin/ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=duration=3:size=320x240:rate=25', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', video]);
    for (let i = 0; i < 2; i += 1) {
      const res = await s.api.post('/media').set('cookie', cast.moderator.cookie).field('kind', 'lesson_video').field('communityId', cast.tribe.id).attach('file', video, { filename: 'lesson.mp4', contentType: 'video/mp4' });
      expect(res.status).toBe(201);
    }
    const rt = transcodeRuntime(s.deps);
    const results = await Promise.all([transcodePending(s.deps, rt, { limit: 1 }), transcodePending(s.deps, rt, { limit: 1 })]);
    // Under a loaded machine a run may give its video back (a lease it could not renew in time): a later run ends it.
    const later = await transcodePending(s.deps, rt);
    expect(results.reduce((n, r) => n + r.ready, later.ready)).toBe(2);
    const events = readFileSync(path.join(work, 'runs.log'), 'utf8').trim().split('\n').map((l) => l.split(' ')).map(([what, at]) => ({ what, at: BigInt(at) }));
    events.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    let running = 0;
    let most = 0;
    for (const e of events) {
      running += e.what === 'start' ? 1 : -1;
      most = Math.max(most, running);
    }
    expect(events.filter((e) => e.what === 'start').length).toBeGreaterThanOrEqual(2);
    expect(most).toBe(1); // unbounded, both ffmpeg run at once
  }, 120_000);
});

const timed = async (run: () => Promise<unknown>): Promise<number> => {
  const started = performance.now();
  await run();
  return performance.now() - started;
};
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
