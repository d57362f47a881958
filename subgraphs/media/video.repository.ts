import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Db, Executor } from '../../db/src/index.js';
import type { Rendition } from './ffmpeg.js';

// The SQL of video transcoding (media_videos, migration 0020, and the variants it stores): subgraphs/media/transcode.ts.

const rowsOf = (result: unknown): Record<string, unknown>[] => (result as { rows: Record<string, unknown>[] }).rows;

/** Queues a media for transcoding (status processing); nothing when it is queued already. */
export async function insertQueued(tx: Executor, mediaId: string, now: Date, traceContext: string | null): Promise<void> {
  await tx.execute(sql`
    insert into media_videos (media_id, status, created_at, updated_at, trace_context)
    values (${mediaId}::uuid, 'processing', ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz, ${traceContext})
    on conflict (media_id) do nothing`);
}

/** The media_videos rows of `mediaIds`, in one statement. */
export async function selectStates(db: Executor, mediaIds: readonly string[]): Promise<Record<string, unknown>[]> {
  const result = await db.execute(sql`
    select media_id, status, failure_reason, duration_seconds, width, height, renditions
      from media_videos where media_id = any(${`{${[...new Set(mediaIds)].join(',')}}`}::uuid[])`);
  return rowsOf(result);
}

export interface Claim {
  mediaId: string;
  attempts: number;
  claimId: string;
  /** The `traceparent` of the request that queued the video, or null. */
  traceContext: string | null;
}

/** Claims the oldest queued row whose lease is free (`FOR UPDATE SKIP LOCKED`), counting the attempt. */
export async function claimNext(db: Executor, now: Date, leaseMs: number): Promise<Claim | null> {
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
    returning v.media_id, v.attempts, v.trace_context`);
  const row = rowsOf(result)[0];
  return row ? { mediaId: String(row.media_id), attempts: Number(row.attempts), claimId, traceContext: row.trace_context == null ? null : String(row.trace_context) } : null;
}

/** Extends the lease while `claimId` holds the row; false when the claim was lost. */
export async function renew(db: Executor, claim: Claim, now: Date, leaseMs: number): Promise<boolean> {
  const result = await db.execute(sql`
    update media_videos set locked_until = ${new Date(now.getTime() + leaseMs).toISOString()}::timestamptz
     where media_id = ${claim.mediaId}::uuid and locked_by = ${claim.claimId} and status = 'processing'
    returning media_id`);
  return rowsOf(result).length > 0;
}

export async function fail(db: Executor, claim: Claim, now: Date, reason: string): Promise<boolean> {
  const result = await db.execute(sql`
    update media_videos
       set status = 'failed', failure_reason = ${reason.slice(0, 500)}, locked_by = null, locked_until = null,
           updated_at = ${now.toISOString()}::timestamptz, finished_at = ${now.toISOString()}::timestamptz
     where media_id = ${claim.mediaId}::uuid and locked_by = ${claim.claimId} and status = 'processing'
    returning media_id`);
  return rowsOf(result).length > 0;
}

/** Gives the row back for a later run. `uncount`: the attempt does not count (the worker stopping, not the file). */
export async function release(db: Executor, claim: Claim, now: Date, uncount: boolean): Promise<void> {
  await db.execute(sql`
    update media_videos
       set locked_by = null, locked_until = null, updated_at = ${now.toISOString()}::timestamptz,
           attempts = case when ${uncount} then greatest(attempts - 1, 0) else attempts end
     where media_id = ${claim.mediaId}::uuid and locked_by = ${claim.claimId} and status = 'processing'`);
}

/** Records the stored files as the media's variants and the row `ready`, in one transaction, while the claim holds. */
export async function finish(
  db: Db,
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

export async function originalKey(db: Executor, mediaId: string): Promise<string | null> {
  const result = await db.execute(sql`select storage_key from media_variants where media_id = ${mediaId}::uuid and name = 'original'`);
  const row = rowsOf(result)[0];
  return row ? String(row.storage_key) : null;
}
