import busboy from 'busboy';
import { Router, type ErrorRequestHandler, type Request, type RequestHandler, type Response } from 'express';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { DomainError, invalid, type AppDeps, type RequestContext } from '../../../subgraphs/kernel/index.js';
import { FILE_TOO_LARGE, openVariant, signedPlaylist, uploadMedia, type UploadedMedia, type UploadFields } from '../../../subgraphs/media/index.js';
import { requirePersonalKeyScope, scopeForMethod } from '../../../subgraphs/identity/index.js';
import { bearerToken, callerFromCookies, requireKeyScope, resourceCaller } from '../auth.js';
import { HttpError } from '../errors.js';
import { contextOf, handle, requestLog } from '../http.js';
import { uploads } from '../../../subgraphs/kernel/metrics.js';

/**
 * The caller of a media request: `Authorization: Bearer <resource API access token or personal API key>` when sent
 * (and then only it; a personal key needs its method's scope, else 403 `insufficient_scope`),
 * else the web app's cookies. For an upload (`forWrite`), cookies count only when the request names no other site in
 * `Origin` (a form of another site posting with the user's cookies is refused as unauthenticated).
 */
const mediaAuth =
  (app: AppDeps, forWrite: boolean): RequestHandler =>
  async (req, _res, next) => {
    try {
      if (req.headers.authorization !== undefined) {
        const token = bearerToken(req);
        const found = token ? await resourceCaller(app, token) : null;
        req.caller = found?.caller ?? null;
        req.personalKey = found?.personalKey;
        // An upload checks the write scope itself, after draining the body it will not read.
        if (found?.personalKey && !forWrite) return requireKeyScope(req, _res, next);
      } else if (!forWrite || sameSite(req)) {
        req.caller = await callerFromCookies(app, req.cookies);
      }
      next();
    } catch (error) {
      next(error);
    }
  };

const sameSite = (req: Request): boolean => {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === String(req.headers.host ?? '').toLowerCase();
  } catch {
    return false;
  }
};

/** The answer to an upload: 201 with the media. */
const uploadBody = (out: UploadedMedia) => ({
  id: out.media.id,
  kind: out.media.kind,
  url: out.url,
  path: out.path,
  thumbnailUrl: out.thumbnailUrl,
  contentType: out.media.contentType,
  size: out.media.sizeBytes,
  width: out.media.width,
  height: out.media.height,
  communityId: out.media.communityId,
  status: out.media.status,
  createdAt: out.media.createdAt.toISOString(),
  variants: out.variants.map((v) => ({ name: v.name, contentType: v.contentType, size: v.sizeBytes, width: v.width, height: v.height })),
});

/**
 * Reads a `multipart/form-data` upload with busboy as it arrives: the fields `kind` and `communityId` must come
 * before the part `file` (the limits and checks depend on them); exactly one file. The file part is streamed into
 * `uploadMedia`, which commits only after the whole body was read without a multipart error (a second file, a
 * truncated body).
 */
function readUpload(ctx: RequestContext, req: Request, maxFileBytes: number): Promise<UploadedMedia> {
  return new Promise<UploadedMedia>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        limits: { files: 1, fields: 8, parts: 10, fieldSize: 256, fieldNameSize: 64, headerPairs: 20, fileSize: maxFileBytes + 1 },
      });
    } catch {
      reject(new HttpError(415, 'unsupported_media_type', 'Send multipart/form-data with the fields kind, communityId (optional) and file.'));
      return;
    }
    const fields: UploadFields = {};
    let settled = false;
    let file: Readable | null = null;
    let bodyDone!: () => void;
    let bodyFailed!: (error: Error) => void;
    const body = new Promise<void>((ok, ko) => {
      bodyDone = ok;
      bodyFailed = ko;
    });
    body.catch(() => undefined);
    let refusal: Error | null = null;
    let uploading = false;
    // The first refusal is the answer; while an upload runs, it is given once the upload has let go of everything it
    // wrote (so a client reading the answer finds nothing kept).
    const fail = (error: Error) => {
      if (settled) return;
      refusal ??= error;
      bodyFailed(error);
      file?.destroy(error);
      if (!uploading) {
        settled = true;
        reject(refusal);
      }
    };
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated || info.nameTruncated) return fail(invalid('invalid_input', `${name}: too long.`, [{ field: name, message: 'too long' }]));
      if (file) return fail(invalid('field_after_file', `${name}: send the fields before the file.`, [{ field: name, message: 'after the file' }]));
      if (name === 'kind' || name === 'communityId') fields[name] = value;
    });
    parser.on('file', (name, stream) => {
      if (name !== 'file') {
        stream.resume();
        return fail(invalid('invalid_input', `${name}: unexpected file field; the file goes in the field "file".`, [{ field: name, message: 'unexpected file' }]));
      }
      if (fields.kind === undefined) {
        stream.resume();
        return fail(invalid('missing_field', 'kind: is required (avatar, post_image or lesson_video), before the file.', [{ field: 'kind', message: 'is required' }]));
      }
      file = stream;
      stream.on('error', () => undefined); // destroyed with the request's error, which reaches the upload through its guard
      uploading = true;
      uploadMedia(ctx, fields, stream, body).then(
        (out) => {
          settled = true;
          resolve(out);
        },
        (error: Error) => {
          uploading = false;
          fail(error);
        },
      );
    });
    parser.on('filesLimit', () => fail(invalid('too_many_files', 'file: send exactly one file.', [{ field: 'file', message: 'one file only' }])));
    parser.on('fieldsLimit', () => fail(invalid('invalid_input', 'Too many fields.')));
    parser.on('partsLimit', () => fail(invalid('invalid_input', 'Too many parts.')));
    parser.on('error', () => fail(invalid('malformed_multipart', 'The multipart body is malformed or cut short.')));
    parser.on('close', () => {
      if (!file) return fail(invalid('missing_field', 'file: is required.', [{ field: 'file', message: 'is required' }]));
      bodyDone();
    });
    req.on('aborted', () => fail(invalid('malformed_multipart', 'The upload was cut short.')));
    req.pipe(parser);
  });
}

/** After a refused upload, reads and drops what the client still sends, so it receives the answer; then closes. */
const drain = (req: Request, res: Response) => {
  res.setHeader('Connection', 'close');
  req.unpipe();
  req.resume();
};

/** `bytes=a-b`, `bytes=a-`, `bytes=-n` against `size`: the range, `'unsatisfiable'`, or null (no or ignored Range). */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) return null; // several ranges, other units: answered with the whole file (RFC 9110 allows ignoring Range)
  const [, a, b] = m;
  if (a === '' && b === '') return null;
  if (a === '') {
    const n = Number(b);
    if (n === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(a);
  const end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
  if (start >= size || (b !== '' && Number(b) < start)) return 'unsatisfiable';
  return { start, end };
}

/**
 * The media routes, answering errors with `errors` (the envelope of the surface they are mounted on):
 * `POST /` uploads (201), `GET|HEAD /{id}/{variant}` serves a stored file with ETag, the cache headers of its access
 * rule (`openVariant`) and ranges.
 */
export function mediaRouter(app: AppDeps, errors: ErrorRequestHandler): Router {
  const r = Router();
  r.post('/', mediaAuth(app, true), handle(async (req, res) => {
    if (!req.caller) {
      drain(req, res);
      throw new HttpError(401, 'unauthorized', 'Sign in, or send a resource API access token: Authorization: Bearer <token>.');
    }
    if (req.personalKey && !req.personalKey.scopes.includes(scopeForMethod(req.method))) {
      drain(req, res);
      requirePersonalKeyScope(req.personalKey, req.method); // 403 insufficient_scope
    }
    if (!req.is('multipart/form-data')) {
      drain(req, res);
      throw new HttpError(415, 'unsupported_media_type', 'Send multipart/form-data with the fields kind, communityId (optional) and file.');
    }
    const ctx: RequestContext = { ...contextOf(app, req), operation: 'mutation' };
    const maxFileBytes = Math.max(app.config.media.maxImageBytes, app.config.media.maxVideoBytes);
    try {
      const out = await readUpload(ctx, req, maxFileBytes);
      uploads.inc({ outcome: 'stored' });
      res.status(201).location(out.path).json(uploadBody(out));
    } catch (error) {
      uploads.inc({ outcome: error instanceof DomainError && error.code.length <= 64 ? error.code : 'error' });
      drain(req, res);
      if (error instanceof DomainError && error.code === FILE_TOO_LARGE) throw new HttpError(413, FILE_TOO_LARGE, error.message, error.details);
      throw error;
    }
  }));

  r.get('/:id/:variant', mediaAuth(app, false), handle(async (req, res) => {
    const served = await openVariant(contextOf(app, req), String(req.params.id), String(req.params.variant), req.query as Record<string, unknown>);
    const { variant } = served;
    // An HLS playlist fetched by a signed URL: its URIs get the same signature (docs/video.md).
    const playlist = await signedPlaylist(app, variant, served.signature);
    if (playlist !== null) {
      res.status(200).set({ 'Cache-Control': served.cacheControl, 'Content-Type': variant.contentType }).send(playlist);
      return;
    }
    const etag = `"${variant.etag}"`;
    res.set({
      ETag: etag,
      'Cache-Control': served.cacheControl,
      'Accept-Ranges': 'bytes',
      'Last-Modified': variant.createdAt.toUTCString(),
      'Content-Type': variant.contentType,
      'Content-Disposition': 'inline',
    });
    const inm = req.headers['if-none-match'];
    if (inm && inm.split(',').some((t) => t.trim().replace(/^W\//, '') === etag || t.trim() === '*')) {
      res.status(304).end();
      return;
    }
    const ifRange = req.headers['if-range'];
    const range = ifRange === undefined || ifRange === etag ? parseRange(req.headers.range, variant.sizeBytes) : null;
    if (range === 'unsatisfiable') {
      res.status(416).set('Content-Range', `bytes */${variant.sizeBytes}`).removeHeader('Content-Type');
      res.end();
      return;
    }
    const length = range ? range.end - range.start + 1 : variant.sizeBytes;
    res.status(range ? 206 : 200).set('Content-Length', String(length));
    if (range) res.set('Content-Range', `bytes ${range.start}-${range.end}/${variant.sizeBytes}`);
    if (req.method === 'HEAD' || length === 0) {
      res.end();
      return;
    }
    const stream = await app.mediaStorage.get(variant.storageKey, range ?? undefined);
    await pipeline(stream, res).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ERR_STREAM_PREMATURE_CLOSE') requestLog(req)?.warn({ err: error }, 'media stream failed');
    });
  }));
  r.use(errors);
  return r;
}
