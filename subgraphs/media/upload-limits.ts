// Upload limits (issue 29): how many uploads one user may start (MEDIA_UPLOADS_PER_MINUTE, in any 60 seconds) and how
// many bytes one user may upload (MEDIA_DAILY_UPLOAD_MB, in any 24 hours). Both are counted in PostgreSQL under a
// per-user advisory lock, so they hold across processes and concurrent requests. README, "Abuse limits".
import type { Executor } from '../../db/src/index.js';
import { type AppDeps, rateLimited } from '../kernel/index.js';
import * as repo from './upload-limits.repository.js';

/** The window of the upload rate: any 60 seconds. */
export const UPLOAD_RATE_WINDOW_SECONDS = 60;
/** The window of the byte quota: any 24 hours. */
export const UPLOAD_QUOTA_WINDOW_SECONDS = 24 * 3600;

const MB = 1024 * 1024;
const mb = (bytes: number) => `${Math.round((bytes / MB) * 10) / 10} MB`;
const secondsUntil = (at: number, now: Date) => Math.max(1, Math.ceil((at - now.getTime()) / 1000));

/** When bytes of the quota window free up (the upload `freesAfter` leaves it), as seconds from `now`. */
const quotaWait = (freesAfter: Date | null, now: Date) =>
  secondsUntil((freesAfter ?? now).getTime() + UPLOAD_QUOTA_WINDOW_SECONDS * 1000, now);

/**
 * Counts an upload of `userId` before a byte of its file is read (after its authorization): refused with
 * `upload_rate_limited` (RATE_LIMITED, 429 with `Retry-After`: when the oldest counted attempt leaves the window) past
 * `config.media.uploadsPerMinute` attempts in any 60 seconds, and with `upload_quota_exceeded` when the user's uploads
 * of the last 24 hours already fill `config.media.dailyUploadBytes`. Every counted attempt stays counted, whatever
 * becomes of the upload (a refused image costs work too); a refused one is not counted.
 */
export async function takeUploadAttempt(app: AppDeps, userId: string): Promise<void> {
  const { uploadsPerMinute, dailyUploadBytes } = app.config.media;
  const now = app.clock();
  await app.database.db.transaction(async (tx) => {
    await repo.lockUploader(tx, userId);
    const { count, oldest } = await repo.attemptsSince(tx, userId, new Date(now.getTime() - UPLOAD_RATE_WINDOW_SECONDS * 1000));
    if (count >= uploadsPerMinute) {
      const wait = secondsUntil((oldest ?? now).getTime() + UPLOAD_RATE_WINDOW_SECONDS * 1000, now);
      throw rateLimited('upload_rate_limited', `You started ${uploadsPerMinute} uploads in the last minute: wait ${wait} s before uploading again.`, wait);
    }
    const { used, freesAfter } = await repo.bytesSince(tx, userId, new Date(now.getTime() - UPLOAD_QUOTA_WINDOW_SECONDS * 1000), 1, dailyUploadBytes);
    if (used >= dailyUploadBytes) {
      const wait = quotaWait(freesAfter, now);
      throw rateLimited('upload_quota_exceeded', `Your uploads of the last 24 hours reach the quota of ${mb(dailyUploadBytes)}: wait ${wait} s before uploading again.`, wait);
    }
    await repo.insertAttempt(tx, userId, now);
  });
}

/**
 * The byte quota, checked in the transaction `tx` that writes an upload of `size` bytes (call it before the insert):
 * `upload_quota_exceeded` (RATE_LIMITED, 429 with `Retry-After`: when enough of the window's bytes leave it) when the
 * user's uploads written in the last 24 hours plus this one pass `config.media.dailyUploadBytes`. Under the user's
 * upload lock, so concurrent uploads are written one after the other, up to the quota exactly.
 */
export async function requireUploadQuota(app: AppDeps, tx: Executor, userId: string, size: number): Promise<void> {
  const quota = app.config.media.dailyUploadBytes;
  const now = app.clock();
  await repo.lockUploader(tx, userId);
  const { used, freesAfter } = await repo.bytesSince(tx, userId, new Date(now.getTime() - UPLOAD_QUOTA_WINDOW_SECONDS * 1000), size, quota);
  if (used + size <= quota) return;
  const wait = quotaWait(freesAfter, now);
  throw rateLimited(
    'upload_quota_exceeded',
    `file: this upload (${mb(size)}) would pass your quota of ${mb(quota)} in 24 hours (${mb(used)} used): wait ${wait} s.`,
    wait,
  );
}
