import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Executor } from '../../db/src/index.js';
import type { AppDeps } from '../kernel/index.js';
import { currentTraceparent, inSpan } from '../kernel/tracing.js';
import { contentTypeOf, FfmpegError, signPlaylistUris, transcodeToHls, type FfmpegOptions, type Rendition } from './ffmpeg.js';
import { mediaKey } from './storage.js';
import { mediaWork } from './processing.js';
import * as repo from './video.repository.js';
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

/**
 * Queues media `mediaId` (a stored lesson_video) for transcoding; a second call changes nothing. Pass the upload's
 * transaction as `tx` to queue it with the media row. With tracing on, the row keeps the upload's trace context.
 */
export async function enqueueTranscode(app: AppDeps, mediaId: string, tx: Executor = app.database.db): Promise<void> {
  await repo.insertQueued(tx, mediaId, app.clock(), currentTraceparent()); // the upload's trace context (null when tracing is off)
}

/** The video states of `mediaIds` (those queued at all), in one statement. */
export async function videoStates(db: Executor, mediaIds: readonly string[]): Promise<Map<string, VideoState>> {
  const out = new Map<string, VideoState>();
  if (mediaIds.length === 0) return out;
  for (const r of await repo.selectStates(db, mediaIds)) {
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
    const claim = await repo.claimNext(db, app.clock(), rt.leaseMs);
    if (!claim) break;
    result.claimed += 1;
    // With tracing on, a span `media.transcode` of a trace of its own, linked to the upload that queued the video.
    const outcome = await inSpan('media.transcode', { kind: 'consumer', root: true, links: [claim.traceContext], attributes: { 'svc.media.id': claim.mediaId, 'svc.media.attempt': claim.attempts } }, async (span) => {
      const done = await transcodeOne(app, rt, claim, options);
      span?.setAttribute('svc.media.outcome', done);
      return done;
    });
    result[outcome] += 1;
  }
  return result;
}

async function transcodeOne(
  app: AppDeps,
  rt: TranscodeRuntime,
  claim: repo.Claim,
  options: { signal?: AbortSignal; touch?: () => Promise<unknown> },
): Promise<'ready' | 'failed' | 'released'> {
  const db = app.database.db;
  const log = app.log.child({ job: JOB_MEDIA_TRANSCODE, mediaId: claim.mediaId, attempt: claim.attempts });
  if (claim.attempts > rt.maxAttempts) {
    await repo.fail(db, claim, app.clock(), `transcoding was interrupted ${rt.maxAttempts} times`);
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
    void repo.renew(db, claim, app.clock(), rt.leaseMs)
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
    const original = await repo.originalKey(db, claim.mediaId);
    if (!original) {
      await repo.fail(db, claim, app.clock(), 'the uploaded file is missing');
      return 'failed';
    }
    const input = path.join(work, 'original');
    await pipeline(await rt.storage.get(original), createWriteStream(input, { flags: 'wx' }));

    // One of MEDIA_VIDEO_CONCURRENCY slots of the process (processing.ts): other runs' videos wait their turn.
    const hls = await mediaWork(app).videos.run(() => transcodeToHls(input, out, { ...rt.ffmpeg, signal: local.signal }));

    const stored: Array<{ name: string; key: string; contentType: string; size: number; etag: string }> = [];
    for (const file of hls.files) {
      if (local.signal.aborted) throw new FfmpegError('aborted', 'transcoding was interrupted');
      const key = mediaKey(claim.mediaId, file);
      const s = await rt.storage.put(key, createReadStream(path.join(out, file)));
      stored.push({ name: file, key, contentType: contentTypeOf(file), size: s.size, etag: s.sha256 });
    }
    const done = await repo.finish(db, claim, app.clock(), hls.probe, hls.renditions, stored);
    if (!done) {
      log.warn('claim lost before the video was recorded: another run records it');
      return 'released';
    }
    log.info({ durationSeconds: hls.probe.durationSeconds, renditions: hls.renditions.map((r) => r.name) }, 'video ready');
    return 'ready';
  } catch (error) {
    if (error instanceof FfmpegError && error.reason === 'aborted') {
      if (!lost) await repo.release(db, claim, app.clock(), true).catch((e) => log.warn({ err: e }, 'could not release the video'));
      log.info('video transcoding interrupted: the next run resumes it');
      return 'released';
    }
    if (error instanceof FfmpegError) {
      // The file's fault (unreadable, or too long to transcode): final.
      await repo.fail(db, claim, app.clock(), error.message);
      log.info({ reason: error.message }, 'video failed');
      return 'failed';
    }
    // Ours (storage, database): a later run tries again, up to maxAttempts claims.
    log.error({ err: error }, 'video transcoding failed unexpectedly: left for a later run');
    await repo.release(db, claim, app.clock(), false).catch((e) => log.warn({ err: e }, 'could not release the video'));
    return 'released';
  } finally {
    clearInterval(heartbeat);
    options.signal?.removeEventListener('abort', stop);
    await rm(work, { recursive: true, force: true }).catch(() => undefined);
  }
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
 * For a playlist served through a signed URL (`signature`: the checked query, `exp=&sig=` or a viewer's
 * `exp=&u=&sig=`), the playlist with that signature appended to each of its relative URIs, so a player fetching the
 * renditions and segments beside it (`<video>` or hls.js) sends the signature along; null for any other file or when
 * `signature` is null (served as stored). The signature covers the media id, not the variant, so one signature serves
 * every file of the video; the route has already checked it (`openVariant`).
 */
export async function signedPlaylist(
  app: AppDeps,
  variant: { contentType: string; storageKey: string; sizeBytes: number },
  signature: string | null,
): Promise<string | null> {
  if (variant.contentType !== HLS_PLAYLIST_TYPE || signature === null) return null;
  if (variant.sizeBytes > 4 * 1024 * 1024) return null; // not a playlist this module wrote
  const chunks: Buffer[] = [];
  for await (const chunk of await app.mediaStorage.get(variant.storageKey)) chunks.push(chunk as Buffer);
  return signPlaylistUris(Buffer.concat(chunks).toString('utf8'), signature);
}
