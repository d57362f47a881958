import { randomUUID } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline as pipe, Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Logger } from 'pino';
import { requireActiveMember, requireRole } from '../members/index.js';
import { type AppDeps, type RequestContext, invalid, isUuid, notFound, unauthorized, requestLogger } from '../kernel/index.js';
import { getCommunity } from '../tribes/index.js';
import { imageErrorOf, renditionsOf, type ImageKind } from './images.js';
import * as repo from './media.repository.js';
import { MEDIA_KINDS, type Media, type MediaKind, type MediaVariant } from './media.tables.js';
import { sniff, SNIFF_BYTES, type SniffedType } from './sniff.js';
import { closed, mediaKey, mediaPrefix, type MediaStorage } from './storage.js';
import { mediaPath, parseMediaPath, signMediaPath, signMediaPathFor } from './urls.js';
import { enqueueTranscode } from './transcode.js';
import { mediaWork } from './processing.js';
import { requireUploadQuota, takeUploadAttempt } from './upload-limits.js';

declare module '../kernel/context.js' {
  interface AppDeps {
    /** Where media files live: `LocalDiskStorage` under `MEDIA_DIR` unless `server/deps.ts` picks another store. */
    mediaStorage: MediaStorage;
  }
}

/** What each kind accepts: the family of its bytes, and whether a tribe is required, optional or refused. */
const KIND_RULES: Record<MediaKind, { family: SniffedType['family']; community: 'refused' | 'optional' | 'required' }> = {
  avatar: { family: 'image', community: 'refused' },
  post_image: { family: 'image', community: 'optional' },
  lesson_video: { family: 'video', community: 'required' },
};

/** The fields of an upload besides the file (multipart fields `kind` and `communityId`). */
export interface UploadFields {
  kind?: string;
  communityId?: string;
}

/** What the caller may upload: checked before a byte of the file is read. */
export interface UploadPlan {
  kind: MediaKind;
  family: SniffedType['family'];
  communityId: string | null;
  /** True when the media's files are served only to the tribe's members (through signed URLs). */
  restricted: boolean;
  maxBytes: number;
  ownerId: string;
}

/** An upload as the API answers it. */
export interface UploadedMedia {
  media: Media;
  variants: MediaVariant[];
  /** `/media/<id>/<main variant>`, signed when the media is restricted to a tribe's members, and for a lesson video. */
  url: string;
  /** The stable reference to store in a post, a profile or a lesson: the unsigned path. */
  path: string;
  thumbnailUrl: string | null;
}

/** The upload is larger than its kind's limit (`MEDIA_MAX_IMAGE_MB`, `MEDIA_MAX_VIDEO_MB`): the surface answers 413. */
export const FILE_TOO_LARGE = 'file_too_large';

/**
 * Authorization of an upload, before its bytes are read: signed in (401); `kind` one of avatar, post_image,
 * lesson_video; `communityId` refused for an avatar, optional for a post image (then the caller must be an active
 * member: not muted, tribe not suspended), required for a lesson video (moderator or above, who edit courses).
 */
export async function authorizeUpload(ctx: RequestContext, fields: UploadFields): Promise<UploadPlan> {
  if (!ctx.caller) throw unauthorized();
  const kind = fields.kind;
  if (kind === undefined) throw invalid('missing_field', 'kind: is required (avatar, post_image or lesson_video), before the file.', [{ field: 'kind', message: 'is required' }]);
  if (!(MEDIA_KINDS as readonly string[]).includes(kind)) {
    throw invalid('invalid_kind', `kind: must be one of ${MEDIA_KINDS.join(', ')}.`, [{ field: 'kind', message: 'unknown kind' }]);
  }
  const rule = KIND_RULES[kind as MediaKind];
  const communityId = fields.communityId === undefined || fields.communityId === '' ? null : fields.communityId;
  if (communityId !== null && rule.community === 'refused') {
    throw invalid('invalid_input', `communityId: an ${kind} belongs to no tribe.`, [{ field: 'communityId', message: 'not allowed' }]);
  }
  if (communityId === null && rule.community === 'required') {
    throw invalid('missing_field', `communityId: is required for a ${kind}.`, [{ field: 'communityId', message: 'is required' }]);
  }
  let restricted = false;
  if (communityId !== null) {
    if (!isUuid(communityId)) throw notFound('Community');
    const community = await getCommunity(ctx, communityId);
    if (kind === 'lesson_video') await requireRole(ctx, community.id, 'moderator');
    else await requireActiveMember(ctx, community.id);
    restricted = !community.isPublic;
  }
  const media = ctx.app.config.media;
  return {
    kind: kind as MediaKind,
    family: rule.family,
    communityId,
    restricted,
    maxBytes: rule.family === 'image' ? media.maxImageBytes : media.maxVideoBytes,
    ownerId: ctx.caller.userId,
  };
}

/**
 * Passes bytes through while it counts them against `maxBytes` and sniffs the first `SNIFF_BYTES`: fails with
 * `file_too_large` past the limit, `unsupported_type` when the bytes are not of the expected family, `empty_file`
 * when nothing came.
 */
class UploadGuard extends Transform {
  size = 0;
  type: SniffedType | null = null;
  private head: Buffer[] = [];
  private headLength = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly family: SniffedType['family'],
  ) {
    super();
  }

  private decide(): Error | null {
    const head = Buffer.concat(this.head);
    this.head = [];
    const type = sniff(head);
    if (!type || type.family !== this.family) {
      const expected = this.family === 'image' ? 'a JPEG, PNG, WebP or GIF image' : 'an MP4, MOV or WebM video';
      return invalid('unsupported_type', `file: its content is not ${expected} (the type is read from the bytes, not the name).`, [{ field: 'file', message: 'unsupported type' }]);
    }
    this.type = type;
    return null;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null, data?: Buffer) => void): void {
    this.size += chunk.length;
    if (this.size > this.maxBytes) {
      done(invalid(FILE_TOO_LARGE, `file: larger than the limit of ${Math.floor(this.maxBytes / 1048576)} MB.`, [{ field: 'file', message: 'too large' }]));
      return;
    }
    if (this.type) {
      done(null, chunk);
      return;
    }
    this.head.push(chunk);
    this.headLength += chunk.length;
    if (this.headLength < SNIFF_BYTES) {
      done();
      return;
    }
    const held = Buffer.concat(this.head);
    const error = this.decide();
    done(error, error ? undefined : held);
  }

  override _flush(done: (error?: Error | null, data?: Buffer) => void): void {
    if (this.size === 0) {
      done(invalid('empty_file', 'file: is empty.', [{ field: 'file', message: 'is empty' }]));
      return;
    }
    if (this.type) {
      done();
      return;
    }
    const held = Buffer.concat(this.head);
    const error = this.decide();
    done(error, error ? undefined : held);
  }
}

/** `source` piped into `guard`, with an error of `source` (a cut connection, a multipart limit) carried over. */
const guarded = (source: Readable, guard: UploadGuard): Readable => {
  // The consumer (a pipeline) may attach only after an await: an early refusal stays on the stream for it to see.
  guard.on('error', () => undefined);
  // stream.pipeline also fails the guard when `source` was destroyed already, or closes without ending.
  return pipe(source, guard, () => undefined);
};

/**
 * Stores an upload: its authorization first (`authorizeUpload`), then the file streamed through the size limit and
 * the type sniffing. Images are written to a scratch file, checked (declared pixels) and re-encoded by sharp into
 * `image` (WebP, at most 2,048 px) and `thumb` (WebP, 320 px), without metadata; the original is not kept. Videos are
 * stored as sent (`original`), then handed to the transcoding hook. Nothing is kept of a refused or failed upload: no
 * file, no row. Stored names are generated from a new id, never from the client's file name. `bodyComplete` (the
 * transport's: the rest of the request read without error) is awaited before the row is written. The upload limits
 * apply (upload-limits.ts): the caller's upload rate and byte quota before the file is read, the quota again with the
 * row; images wait for a processing slot (processing.ts) and are refused past their kind's pixel budget (images.ts).
 */
export async function uploadMedia(ctx: RequestContext, fields: UploadFields, file: Readable, bodyComplete?: Promise<void>): Promise<UploadedMedia> {
  const plan = await authorizeUpload(ctx, fields);
  await takeUploadAttempt(ctx.app, plan.ownerId);
  return storeUpload(ctx.app, plan, file, bodyComplete, requestLogger(ctx));
}

/** The storing half of `uploadMedia`, for a plan `authorizeUpload` made. */
export async function storeUpload(app: AppDeps, plan: UploadPlan, file: Readable, bodyComplete?: Promise<void>, log: Logger = app.log): Promise<UploadedMedia> {
  const storage = app.mediaStorage;
  const id = randomUUID();
  const guard = new UploadGuard(plan.maxBytes, plan.family);
  const scratchDir = path.resolve(app.config.media.dir, '.tmp');
  const scratch = path.join(scratchDir, `${id}.upload`);
  let scratchFile: WriteStream | null = null;
  try {
    const variants: Array<Omit<MediaVariant, 'mediaId' | 'createdAt'>> = [];
    let width: number | null = null;
    let height: number | null = null;
    if (plan.family === 'video') {
      const key = mediaKey(id, 'original');
      const stored = await storage.put(key, guarded(file, guard));
      variants.push({ name: 'original', storageKey: key, contentType: guard.type!.mime, sizeBytes: stored.size, etag: stored.sha256, width: null, height: null });
    } else {
      await mkdir(scratchDir, { recursive: true });
      scratchFile = createWriteStream(scratch, { flags: 'wx', mode: 0o600 });
      await pipeline(guarded(file, guard), scratchFile);
      // One of MEDIA_IMAGE_CONCURRENCY slots while libvips decodes and encodes (processing.ts): a flood queues here.
      const release = await mediaWork(app).images.acquire();
      try {
        const image = await renditionsOf(scratch, plan.kind as ImageKind);
        // Every rendition settles before a failure is answered: one still being written when the other fails
        // would otherwise leave its temporary file, or land its file after the clean-up below.
        const settled = await Promise.allSettled(
          image.renditions.map(async (r) => {
            const key = mediaKey(id, r.name);
            const object = await storage.put(key, r.stream);
            const size = await r.info;
            return { name: r.name, storageKey: key, contentType: 'image/webp', sizeBytes: object.size, etag: object.sha256, ...size };
          }),
        );
        const stored = settled.map((s) => {
          if (s.status === 'rejected') throw s.reason;
          return s.value;
        });
        variants.push(...stored);
        const main = stored.find((v) => v.name === 'image')!;
        width = main.width;
        height = main.height;
      } catch (error) {
        throw imageErrorOf(error);
      } finally {
        release();
      }
    }
    await bodyComplete;
    const media = await app.database.db.transaction(async (tx) => {
      await requireUploadQuota(app, tx, plan.ownerId, guard.size);
      const inserted = await repo.insertMedia(
        tx,
        {
          id,
          kind: plan.kind,
          ownerId: plan.ownerId,
          communityId: plan.communityId,
          contentType: guard.type!.mime,
          sizeBytes: guard.size,
          width,
          height,
          status: 'ready',
          createdAt: app.clock(),
        },
        variants,
      );
      // A lesson video is queued for HLS transcoding with its row (subgraphs/media/transcode.ts).
      if (inserted.kind === 'lesson_video') await enqueueTranscode(app, inserted.id, tx);
      return inserted;
    });
    const rows = await repo.variantsOf(app.database.db, media.id);
    return present(app, media, rows, plan.restricted);
  } catch (error) {
    await storage.deletePrefix(mediaPrefix(id)).catch((e) => log.warn({ err: e, mediaId: id }, 'media cleanup failed'));
    if (error instanceof Error && error.name === 'ImageRejected') {
      const e = error as Error & { code: string };
      throw invalid(e.code, `file: ${e.message}`, [{ field: 'file', message: e.code }]);
    }
    throw error;
  } finally {
    if (scratchFile) await closed(scratchFile);
    await rm(scratch, { force: true });
  }
}

/** The main variant of a media: the re-encoded image, or a video's original. */
const mainVariant = (m: Media) => (m.kind === 'lesson_video' ? 'original' : 'image');

function present(app: AppDeps, media: Media, variants: MediaVariant[], restricted: boolean): UploadedMedia {
  // A lesson video goes only to a viewer's signed URL (media.access.ts): its uploader's, a moderator of the tribe.
  const sign = (p: string) => (media.kind === 'lesson_video' ? signMediaPathFor(app, p, media.ownerId!) : restricted ? signMediaPath(app, p) : p);
  const p = mediaPath(media.id, mainVariant(media));
  const thumb = variants.some((v) => v.name === 'thumb') ? sign(mediaPath(media.id, 'thumb')) : null;
  return { media, variants, url: sign(p), path: p, thumbnailUrl: thumb };
}

/** How content may use an uploaded media. */
export interface MediaUse {
  kind: MediaKind;
  /** The tribe of the content (a post's, a lesson's); null for a profile. */
  communityId: string | null;
  /** The content's tribe is public: tribe-less media may then be used in it too. */
  communityIsPublic?: boolean;
}

/**
 * Checks the `/media/...` references among `urls` (other values are left to the caller's own rule) against `use`:
 * each names an existing media and one of its variants, uploaded by the caller, of the right kind, and of the same
 * tribe as the content (media of no tribe only in a public tribe's content or a profile). Refused: `invalid_media`
 * (400) naming the first bad one. Returns `urls` with each media reference reduced to its unsigned path.
 */
export async function requireUsableMedia(ctx: RequestContext, urls: readonly string[], use: MediaUse, field = 'mediaUrls'): Promise<string[]> {
  const refs = urls.map((u) => parseMediaPath(u));
  const ids = [...new Set(refs.filter((r) => r !== null).map((r) => r.mediaId))];
  if (ids.length === 0) return [...urls];
  if (!ctx.caller) throw unauthorized();
  const rows = new Map((await repo.findMediaByIds(ctx.app.database.db, ids)).map((m) => [m.id, m]));
  const variants = new Map<string, Set<string>>();
  for (const id of ids) variants.set(id, new Set((await repo.variantsOf(ctx.app.database.db, id)).map((v) => v.name)));
  return urls.map((url, i) => {
    const ref = refs[i];
    if (!ref) return url;
    const m = rows.get(ref.mediaId);
    const refuse = (why: string) => invalid('invalid_media', `${field}: ${why}`, [{ field, message: why }]);
    if (!m || m.status === 'failed' || !variants.get(ref.mediaId)?.has(ref.variant)) throw refuse(`${ref.path} is not an uploaded media.`);
    if (m.ownerId !== ctx.caller!.userId) throw refuse(`${ref.path} was uploaded by someone else.`);
    if (m.kind !== use.kind) throw refuse(`${ref.path} is a ${m.kind}, not a ${use.kind}.`);
    const sameTribe = m.communityId === use.communityId || (m.communityId === null && (use.communityId === null || use.communityIsPublic === true));
    if (!sameTribe) throw refuse(`${ref.path} belongs to another tribe.`);
    return ref.path;
  });
}

/**
 * The URLs content shows its reader: each `/media/...` path signed (the reader passed the content's own access
 * check, so it may fetch its media); other URLs unchanged.
 */
export function presentMediaUrls(app: AppDeps, urls: readonly string[]): string[] {
  return urls.map((u) => (parseMediaPath(u) ? signMediaPath(app, parseMediaPath(u)!.path) : u));
}

/** `AppDeps.profileMedia`: an avatar path must name the caller's own `avatar` upload; returns the unsigned path. */
export async function avatarMedia(ctx: RequestContext, path: string): Promise<string> {
  const [checked] = await requireUsableMedia(ctx, [path], { kind: 'avatar', communityId: null }, 'avatarUrl');
  return checked;
}
