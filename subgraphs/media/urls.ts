import { createHmac, timingSafeEqual } from 'node:crypto';
import { acceptedSecrets, type AppDeps } from '../kernel/index.js';

/** A variant name in a media path: what `media_variants.name` allows. */
export const VARIANT = /^[a-z0-9][a-z0-9_.-]{0,63}$/;

/** `/media/<uuid>/<variant>`, optionally followed by a query (a signature): how content references an upload. */
const MEDIA_PATH = /^\/media\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/([a-z0-9][a-z0-9_.-]{0,63})(\?[^#\s]*)?$/;

/** The media path of a variant: `/media/<id>/<variant>` (no signature). */
export const mediaPath = (mediaId: string, variant: string): string => `/media/${mediaId}/${variant}`;

/** The media id and variant a `/media/...` reference names (its query, a signature, ignored), or null for anything else. */
export function parseMediaPath(value: string): { mediaId: string; variant: string; path: string } | null {
  const m = MEDIA_PATH.exec(value);
  return m ? { mediaId: m[1], variant: m[2], path: mediaPath(m[1], m[2]) } : null;
}

/** True for a `/media/<id>/<variant>` reference (with or without a signature). */
export const isMediaPath = (value: string): boolean => MEDIA_PATH.test(value);

const keyOf = (secret: string) => createHmac('sha256', secret).update('svc media url v1').digest();
/** A second key for URLs issued to one viewer: a signature of one kind never checks as the other. */
const viewerKeyOf = (secret: string) => createHmac('sha256', secret).update('svc media viewer url v1').digest();

const signatureWith = (secret: string, mediaId: string, expires: number, viewerId?: string) =>
  viewerId === undefined
    ? createHmac('sha256', keyOf(secret)).update(`${mediaId}\n${expires}`).digest('base64url')
    : createHmac('sha256', viewerKeyOf(secret)).update(`${mediaId}\n${expires}\n${viewerId}`).digest('base64url');

/** The signature of a new URL: always under the current `JWT_SECRET`. */
const signatureOf = (app: AppDeps, mediaId: string, expires: number, viewerId?: string) => signatureWith(app.config.jwtSecret, mediaId, expires, viewerId);

const expiryOf = (app: AppDeps, expires?: number) => expires ?? Math.floor(app.clock().getTime() / 1000) + app.config.media.urlTtlSeconds;

/**
 * `path` with a signature that lets anyone holding the URL fetch any variant of that media until `expires` (unix
 * seconds, default now + `MEDIA_URL_TTL_SECONDS`): `?exp=<unix seconds>&sig=<base64url HMAC-SHA256>`. The HMAC key is
 * derived from `JWT_SECRET`, so every process of a deployment signs and checks alike.
 */
export function signMediaPath(app: AppDeps, path: string, expires?: number): string {
  const parsed = parseMediaPath(path);
  if (!parsed) return path;
  const exp = expiryOf(app, expires);
  return `${parsed.path}?exp=${exp}&sig=${signatureOf(app, parsed.mediaId, exp)}`;
}

/**
 * `path` signed for one viewer (`?exp=&u=<user id>&sig=`), as a paid or members-only course's video is: the serving
 * route checks the signature and expiry, then the course's access rule again for that user, so a refund or a lost
 * role closes the URL at once. Any variant of the media, until `expires` (default now + `MEDIA_URL_TTL_SECONDS`).
 */
export function signMediaPathFor(app: AppDeps, path: string, viewerId: string, expires?: number): string {
  const parsed = parseMediaPath(path);
  if (!parsed) return path;
  const exp = expiryOf(app, expires);
  return `${parsed.path}?exp=${exp}&u=${viewerId}&sig=${signatureOf(app, parsed.mediaId, exp, viewerId)}`;
}

/**
 * What a signature check found: `valid` (with the viewer it was issued to, for a viewer's URL, and the query to pass
 * on to the files a playlist names), `missing` (no exp/sig), `expired` or `invalid`.
 */
export type SignatureCheck = { status: 'valid'; expires: number; viewerId: string | null; query: string } | { status: 'missing' | 'expired' | 'invalid' };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Checks `exp`, `sig` (and `u`, a viewer's URL) of a request for media `mediaId` (constant-time comparison of the HMAC),
 * under `JWT_SECRET` or, during a rotation, `JWT_SECRET_PREVIOUS`.
 */
export function checkSignature(app: AppDeps, mediaId: string, query: { exp?: unknown; sig?: unknown; u?: unknown }): SignatureCheck {
  const { exp, sig, u } = query;
  if (exp === undefined && sig === undefined && u === undefined) return { status: 'missing' };
  if (typeof exp !== 'string' || typeof sig !== 'string' || !/^\d{1,12}$/.test(exp) || !/^[A-Za-z0-9_-]{43}$/.test(sig)) return { status: 'invalid' };
  if (u !== undefined && (typeof u !== 'string' || !UUID.test(u))) return { status: 'invalid' };
  const viewerId = u === undefined ? null : (u as string);
  const expires = Number(exp);
  const given = Buffer.from(sig);
  // Under `JWT_SECRET`, or `JWT_SECRET_PREVIOUS` during a rotation: every key is compared (no early exit).
  let matched = false;
  for (const secret of acceptedSecrets(app.config.jwtSecret, app.config.jwtSecretPrevious)) {
    const expected = Buffer.from(signatureWith(secret, mediaId, expires, viewerId ?? undefined));
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  if (!matched) return { status: 'invalid' };
  if (expires * 1000 <= app.clock().getTime()) return { status: 'expired' };
  return { status: 'valid', expires, viewerId, query: viewerId === null ? `exp=${exp}&sig=${sig}` : `exp=${exp}&u=${viewerId}&sig=${sig}` };
}
