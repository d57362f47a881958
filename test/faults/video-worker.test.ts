import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { signMediaPathFor } from '../../subgraphs/media/index.js';
import { crew, staffedTribe, type Cast } from '../factory.js';
import { isolatedDatabase, sqlRows, startService, TEST_DATABASE_URL, waitFor, type TestService } from '../support.js';
import { spawnWorker, type WorkerProcess } from './worker-process.js';

/**
 * The media.transcode job in real worker processes (`server/worker.ts`) stopped in the middle of an ffmpeg run:
 * SIGKILL (the video's lease and the Agenda job's lock lapse, another worker transcodes it from the start) and SIGTERM
 * (ffmpeg aborted, the video given back at once, the next start transcodes it). Its own database: a worker runs every
 * job of the database it is given.
 */
const LEASE_MS = 1500;
const WORKER_ENV = (dir: string, preset: string) => ({
  MEDIA_DIR: dir,
  VIDEO_TRANSCODE_INTERVAL_MS: '200',
  VIDEO_TRANSCODE_LEASE_MS: String(LEASE_MS),
  VIDEO_HLS_SEGMENT_SECONDS: '1',
  VIDEO_X264_PRESET: preset,
  WEBHOOK_TIMEOUT_MS: '500',
  WORKER_LOCK_LIFETIME_MS: '2000',
});

(TEST_DATABASE_URL ? describe : describe.skip)('video transcoding worker faults', () => {
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  let t: TestService;
  let dir: string;
  let video: string;
  let s: Cast & { tribe: { id: string } };
  const workers: WorkerProcess[] = [];
  const worker = (preset: string) => {
    const w = spawnWorker(db.url!, WORKER_ENV(dir, preset));
    workers.push(w);
    return w;
  };
  const row = async (id: string) =>
    (await sqlRows<{ status: string; attempts: number; locked_by: string | null }>(t, sql`select status, attempts, locked_by from media_videos where media_id = ${id}::uuid`))[0];
  const upload = async () => {
    const res = await t.api.post('/media').set('cookie', s.moderator.cookie).field('kind', 'lesson_video').field('communityId', s.tribe.id).attach('file', video, { filename: 'v.mp4', contentType: 'video/mp4' });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  /** ffmpeg is at work on `id`: the row is claimed and the original copied into the scratch folder. */
  const transcoding = (id: string) => waitFor(async () => (await row(id)).locked_by !== null && existsSync(path.join(dir, '.work', id, 'original')), 30_000, 'ffmpeg to start');

  beforeAll(async () => {
    db = await isolatedDatabase();
    dir = await mkdtemp(path.join(tmpdir(), 'svc-video-faults-'));
    video = path.join(dir, 'source.mp4');
    // Long enough (5 s of 720p at the `medium` preset) that the signals land while ffmpeg runs.
    execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=duration=5:size=1280x720:rate=25', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', video]);
    t = await startService({ DATABASE_URL: db.url!, MEDIA_DIR: dir });
    s = await staffedTribe(t, await crew(t), { isPublic: true });
  }, 120_000);
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });
  afterAll(async () => {
    await t?.stop();
    await db?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('SIGTERM mid-ffmpeg gives the video back at once (exit 0, attempt uncounted); SIGKILL mid-ffmpeg leaves a lease that lapses; the next worker transcodes it from the start: READY', async () => {
    const id = await upload();
    // SIGTERM: ffmpeg aborted, the row released for the next start, its scratch folder gone.
    const first = worker('medium');
    await first.ready;
    await transcoding(id);
    first.child.kill('SIGTERM');
    expect(await first.exited).toEqual({ code: 0, signal: null });
    expect(await row(id)).toEqual({ status: 'processing', attempts: 0, locked_by: null });
    expect(existsSync(path.join(dir, '.work', id))).toBe(false);

    // The next start takes it again; SIGKILL this one mid-ffmpeg: its claim stays until the lease lapses.
    const second = worker('medium');
    await second.ready;
    await transcoding(id);
    second.child.kill('SIGKILL');
    expect(await second.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(await row(id)).toMatchObject({ status: 'processing', attempts: 1 });
    expect((await row(id)).locked_by).not.toBeNull();

    // Once the lease and the Agenda job lock lapse, a third worker transcodes it from the start.
    const third = worker('ultrafast');
    await third.ready;
    await waitFor(async () => (await row(id)).status !== 'processing', 60_000, 'the third worker to finish the video');
    expect(await row(id)).toMatchObject({ status: 'ready', attempts: 2, locked_by: null });
    // A video on no lesson goes to its uploader's signed URL only (docs/media.md, "Who may fetch").
    const signed = (file: string) => signMediaPathFor(t.deps, `/media/${id}/${file}`, s.moderator.id);
    const master = await t.api.get(signed('hls.m3u8'));
    expect(master.status).toBe(200);
    expect(master.text).toContain('hls-720p.m3u8');
    expect((await t.api.get(signed('hls-360p-000.ts'))).status).toBe(200);
  }, 150_000);
});
