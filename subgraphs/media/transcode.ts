import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import type { AppDeps } from '../kernel/index.js';
import { contentTypeOf, FfmpegError, signPlaylistUris, transcodeToHls, type FfmpegOptions, type Rendition } from './ffmpeg.js';
import { mediaKey } from './storage.js';
import type { MediaStorage } from './storage.js';

/**
 * Video lessons (docs/media.md, "Video lessons"): an uploaded `lesson_video` is queued by `enqueueTranscode` (a
 * `media_videos` row, status `processing`, in the upload's transaction) and transcoded by the Agenda job
 * `media.transcode` (`transcodePending`), which claims one queued row at a time under a lease it renews while ffmpeg
 * runs. It ends every row `ready` (HLS files stored as the media's variants) or `failed` with a reason; a worker
 * killed mid-job leaves a lease that lapses, and the next run takes the row again (at most `maxAttempts` claims).
 */

/** The Agenda job's name. */
export const JOB_MEDIA_TRANSCODE = 'media.transcode';

/** The transcoding state of a lesson video, as `Lesson.video` shows it. */
export interface VideoState {
  mediaId: string;
  status: 'processing' | 'ready' | 'failed';
  failureReason: string | null;
  durationSeconds: number | null;
  width: number | null;
  height: number | null;
  renditions: Rendition[];
}

/** What a transcoding run needs besides the app. */
export interface TranscodeRuntime {
  storage: MediaStorage;
  /** Scratch folder for ffmpeg's files (under `MEDIA_DIR`: `<MEDIA_DIR>/.work`); each media gets `<workDir>/<id>/`. */
  workDir: string;
  ffmpeg: Omit<FfmpegOptions, 'signal'>;
  /** A claim's lease (renewed every third of it while ffmpeg runs): how long a killed worker holds a row. */
  leaseMs: number;
  /** Claims of one row before it is failed for good (a file that kills its worker every time). */
  maxAttempts: number;
}

/** What one run of the job did. */
export interface TranscodeResult {
  claimed: number;
  ready: number;
  failed: number;
  /** Stopped (the worker stopping) or left to a later run after an unexpected error: still `processing`. */
  released: number;
}

const rowsOf = (result: unknown): Record<string, unknown>[] => (result as { rows: Record<string, unknown>[] }).rows;

/**
 * Queues media `mediaId` (a stored lesson_video) for transcoding; a second call changes nothing. Pass the upload's
 * transaction as `tx` to queue it with the media row.
 */
export async function enqueueTranscode(app: AppDeps, mediaId: string, tx: Executor = app.database.db): Promise<void> {
  const now = app.clock();
  await tx.execute(sql`
    insert into media_videos (media_id, status, created_at, updated_at)
    values (${mediaId}::uuid, 'processing', ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz)
    on conflict (media_id) do nothing`);
}

/** The video states of `mediaIds` (those queued at all), in one statement. */
export async function videoStates(db: Executor, mediaIds: readonly string[]): Promise<Map<string, VideoState>> {
  const out = new Map<string, VideoState>();
  if (mediaIds.length === 0) return out;
  const result = await db.execute(sql`
    select media_id, status, failure_reason, duration_seconds, width, height, renditions
      from media_videos where media_id = any(${`{${[...new Set(mediaIds)].join(',')}}`}::uuid[])`);
  for (const r of rowsOf(result)) {
    const renditions = (typeof r.renditions === 'string' ? JSON.parse(r.renditions) : r.renditions ?? []) as Rendition[];
    out.set(String(r.media_id), {
      mediaId: String(r.media_id),
      status: r.status as VideoState['status'],
      failureReason: r.failure_reason == null ? null : String(r.failure_reason),
      durationSeconds: r.duration_seconds == null ? null : Number(r.duration_seconds),
      width: r.width == null ? null : Number(r.width),
      height: r.height == null ? null : Number(r.height),
      renditions,
    });
  }
  return out;
}

interface Claim {
  mediaId: string;
  attempts: number;
  claimId: string;
}

/** Claims the oldest queued row whose lease is free (`FOR UPDATE SKIP LOCKED`), counting the attempt. */
async function claimNext(db: Executor, now: Date, leaseMs: number): Promise<Claim | null> {
  const claimId = randomUUID();
  const at = now.toISOString();
  const result = await db.execute(sql`
    update media_videos v
       set locked_by = ${claimId}, locked_until = ${new Date(now.getTime() + leaseMs).toISOString()}::timestamptz,
           attempts = v.attempts + 1, updated_at = ${at}::timestamptz
     where v.media_id = (
       select media_id from media_videos
        where status = 'processing' and (locked_until is null or locked_until <= ${at}::timestamptz)
        order by created_at, media_id
        limit 1
        for update skip locked)
    returning v.media_id, v.attempts`);
  const row = rowsOf(result)[0];
  return row ? { mediaId: String(row.media_id), attempts: Number(row.attempts), claimId } : null;
}

/** Extends the lease while `claimId` holds the row; false when the claim was lost. */
async function renew(db: Executor, claim: Claim, now: Date, leaseMs: number): Promise<boolean> {
  const result = await db.execute(sql`
    update media_videos set locked_until = ${new Date(now.getTime() + leaseMs).toISOString()}::timestamptz
     where media_id = ${claim.mediaId}::uuid and locked_by = ${claim.claimId} and status = 'processing'
    returning media_id`);
  return rowsOf(result).length > 0;
}

async function fail(db: Executor, claim: Claim, now: Date, reason: string): Promise<boolean> {
  const result = await db.execute(sql`
    update media_videos
       set status = 'failed', failure_reason = ${reason.slice(0, 500)}, locked_by = null, locked_until = null,
           updated_at = ${now.toISOString()}::timestamptz, finished_at = ${now.toISOString()}::timestamptz
     where media_id = ${claim.mediaId}::uuid and locked_by = ${claim.claimId} and status = 'processing'
    returning media_id`);
  return rowsOf(result).length > 0;
}

/** Gives the row back for a later run. `uncount`: the attempt does not count (the worker stopping, not the file). */
async function release(db: Executor, claim: Claim, now: Date, uncount: boolean): Promise<void> {
  await db.execute(sql`
    update media_videos
       set locked_by = null, locked_until = null, updated_at = ${now.toISOString()}::timestamptz,
           attempts = case when ${uncount} then greatest(attempts - 1, 0) else attempts end
     where media_id = ${claim.mediaId}::uuid and locked_by = ${claim.claimId} and status = 'processing'`);
}

/**
 * Transcodes queued lesson videos one at a time until none is left or `signal` aborts (the worker stopping: the row in
 * hand is released for the next start, its attempt uncounted). `touch` is called on every lease renewal (Agenda's
 * `job.touch`, so a long transcode keeps the job's lock).
 */
export async function transcodePending(
  app: AppDeps,
  rt: TranscodeRuntime,
  options: { signal?: AbortSignal; touch?: () => Promise<unknown>; limit?: number } = {},
): Promise<TranscodeResult> {
  const db = app.database.db;
  const result: TranscodeResult = { claimed: 0, ready: 0, failed: 0, released: 0 };
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  while (result.claimed < limit && !options.signal?.aborted) {
    const claim = await claimNext(db, app.clock(), rt.leaseMs);
    if (!claim) break;
    result.claimed += 1;
    const outcome = await transcodeOne(app, rt, claim, options);
    result[outcome] += 1;
  }
  return result;
}

async function transcodeOne(
  app: AppDeps,
  rt: TranscodeRuntime,
  claim: Claim,
  options: { signal?: AbortSignal; touch?: () => Promise<unknown> },
): Promise<'ready' | 'failed' | 'released'> {
  const db = app.database.db;
  const log = app.log.child({ job: JOB_MEDIA_TRANSCODE, mediaId: claim.mediaId, attempt: claim.attempts });
  if (claim.attempts > rt.maxAttempts) {
    await fail(db, claim, app.clock(), `transcoding was interrupted ${rt.maxAttempts} times`);
    log.warn('video failed: too many interrupted attempts');
    return 'failed';
  }
  const work = path.join(path.resolve(rt.workDir), claim.mediaId);
  // A folder per attempt: an ffmpeg orphaned by a killed worker writes into its own attempt's folder, which this
  // attempt deletes, never into ours.
  const out = path.join(work, claim.claimId);
  const local = new AbortController();
  const stop = () => local.abort();
  options.signal?.addEventListener('abort', stop, { once: true });
  let lost = false;
  const heartbeat = setInterval(() => {
    void renew(db, claim, app.clock(), rt.leaseMs)
      .then(async (held) => {
        if (!held) {
          lost = true;
          local.abort();
        } else await options.touch?.();
      })
      .catch((error) => log.warn({ err: error }, 'lease renewal failed'));
  }, Math.max(50, Math.floor(rt.leaseMs / 3)));
  try {
    // An interrupted attempt's files are dropped: each attempt starts from the stored original.
    await rm(work, { recursive: true, force: true });
    await mkdir(out, { recursive: true });
    const original = await originalKey(db, claim.mediaId);
    if (!original) {
      await fail(db, claim, app.clock(), 'the uploaded file is missing');
      return 'failed';
    }
    const input = path.join(work, 'original');
    await pipeline(await rt.storage.get(original), createWriteStream(input, { flags: 'wx' }));

    const hls = await transcodeToHls(input, out, { ...rt.ffmpeg, signal: local.signal });

    const stored: Array<{ name: string; key: string; contentType: string; size: number; etag: string }> = [];
    for (const file of hls.files) {
      if (local.signal.aborted) throw new FfmpegError('aborted', 'transcoding was interrupted');
      const key = mediaKey(claim.mediaId, file);
      const s = await rt.storage.put(key, createReadStream(path.join(out, file)));
      stored.push({ name: file, key, contentType: contentTypeOf(file), size: s.size, etag: s.sha256 });
    }
    const done = await finish(db, claim, app.clock(), hls.probe, hls.renditions, stored);
    if (!done) {
      log.warn('claim lost before the video was recorded: another run records it');
      return 'released';
    }
    log.info({ durationSeconds: hls.probe.durationSeconds, renditions: hls.renditions.map((r) => r.name) }, 'video ready');
    return 'ready';
  } catch (error) {
    if (error instanceof FfmpegError && error.reason === 'aborted') {
      if (!lost) await release(db, claim, app.clock(), true).catch((e) => log.warn({ err: e }, 'could not release the video'));
      log.info('video transcoding interrupted: the next run resumes it');
      return 'released';
    }
    if (error instanceof FfmpegError) {
      // The file's fault (unreadable, or too long to transcode): final.
      await fail(db, claim, app.clock(), error.message);
      log.info({ reason: error.message }, 'video failed');
      return 'failed';
    }
    // Ours (storage, database): a later run tries again, up to maxAttempts claims.
    log.error({ err: error }, 'video transcoding failed unexpectedly: left for a later run');
    await release(db, claim, app.clock(), false).catch((e) => log.warn({ err: e }, 'could not release the video'));
    return 'released';
  } finally {
    clearInterval(heartbeat);
    options.signal?.removeEventListener('abort', stop);
    await rm(work, { recursive: true, force: true }).catch(() => undefined);
  }
}

async function originalKey(db: Executor, mediaId: string): Promise<string | null> {
  const result = await db.execute(sql`select storage_key from media_variants where media_id = ${mediaId}::uuid and name = 'original'`);
  const row = rowsOf(result)[0];
  return row ? String(row.storage_key) : null;
}

/** Records the stored files as the media's variants and the row `ready`, in one transaction, while the claim holds. */
async function finish(
  db: AppDeps['database']['db'],
  claim: Claim,
  now: Date,
  probe: { durationSeconds: number; width: number; height: number },
  renditions: Rendition[],
  stored: Array<{ name: string; key: string; contentType: string; size: number; etag: string }>,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const held = await tx.execute(sql`
      select 1 from media_videos where media_id = ${claim.mediaId}::uuid and locked_by = ${claim.claimId} and status = 'processing' for update`);
    if (rowsOf(held).length === 0) return false;
    for (const f of stored) {
      const r = renditions.find((x) => f.name.startsWith(`hls-${x.name}`));
      await tx.execute(sql`
        insert into media_variants (media_id, name, storage_key, content_type, size_bytes, etag, width, height)
        values (${claim.mediaId}::uuid, ${f.name}, ${f.key}, ${f.contentType}, ${f.size}, ${f.etag}, ${r?.width ?? null}, ${r?.height ?? null})
        on conflict (media_id, name) do update
          set storage_key = excluded.storage_key, content_type = excluded.content_type, size_bytes = excluded.size_bytes,
              etag = excluded.etag, width = excluded.width, height = excluded.height`);
    }
    const at = now.toISOString();
    await tx.execute(sql`
      update media_videos
         set status = 'ready', duration_seconds = ${probe.durationSeconds}, width = ${probe.width}, height = ${probe.height},
             renditions = ${JSON.stringify(renditions)}::jsonb, locked_by = null, locked_until = null,
             updated_at = ${at}::timestamptz, finished_at = ${at}::timestamptz
       where media_id = ${claim.mediaId}::uuid`);
    return true;
  });
}

/** The runtime of the `media.transcode` job from the app's config: the media store, `<MEDIA_DIR>/.work`, `config.video`. */
export function transcodeRuntime(app: AppDeps): TranscodeRuntime {
  const v = app.config.video;
  return {
    storage: app.mediaStorage,
    workDir: path.join(path.resolve(app.config.media.dir), '.work'),
    ffmpeg: { ffmpegPath: v.ffmpegPath, timeoutMs: v.timeoutMs, segmentSeconds: v.segmentSeconds, preset: v.preset },
    leaseMs: v.leaseMs,
    maxAttempts: v.maxAttempts,
  };
}

/** The content type of the HLS playlists this module stores. */
export const HLS_PLAYLIST_TYPE = 'application/vnd.apple.mpegurl';

/**
 * For a request of an HLS playlist that carries a media signature (`?exp=&sig=`, a private tribe's signed URL), the
 * playlist with that signature appended to each of its relative URIs, so a player fetching the renditions and segments
 * beside it (`<video>` or hls.js) sends the signature along; null for any other request (served as stored). The
 * signature covers the media id, not the variant, so one signature serves every file of the video; the route has
 * already checked it (or the caller's membership).
 */
export async function signedPlaylist(
  app: AppDeps,
  variant: { contentType: string; storageKey: string; sizeBytes: number },
  query: { exp?: unknown; sig?: unknown },
): Promise<string | null> {
  if (variant.contentType !== HLS_PLAYLIST_TYPE) return null;
  const { exp, sig } = query;
  if (typeof exp !== 'string' || typeof sig !== 'string' || !/^\d{1,12}$/.test(exp) || !/^[A-Za-z0-9_-]{43}$/.test(sig)) return null;
  if (variant.sizeBytes > 4 * 1024 * 1024) return null; // not a playlist this module wrote
  const chunks: Buffer[] = [];
  for await (const chunk of await app.mediaStorage.get(variant.storageKey)) chunks.push(chunk as Buffer);
  return signPlaylistUris(Buffer.concat(chunks).toString('utf8'), `exp=${exp}&sig=${sig}`);
}
