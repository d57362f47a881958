import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AppDeps } from '../kernel/index.js';

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

const keyOf = (app: AppDeps) => createHmac('sha256', app.config.jwtSecret).update('svc media url v1').digest();

const signatureOf = (app: AppDeps, mediaId: string, expires: number) =>
  createHmac('sha256', keyOf(app)).update(`${mediaId}\n${expires}`).digest('base64url');

/**
 * `path` with a signature that lets anyone holding the URL fetch any variant of that media until `expires` (unix
 * seconds, default now + `MEDIA_URL_TTL_SECONDS`): `?exp=<unix seconds>&sig=<base64url HMAC-SHA256>`. The HMAC key is
 * derived from `JWT_SECRET`, so every process of a deployment signs and checks alike.
 */
export function signMediaPath(app: AppDeps, path: string, expires?: number): string {
  const parsed = parseMediaPath(path);
  if (!parsed) return path;
  const exp = expires ?? Math.floor(app.clock().getTime() / 1000) + app.config.media.urlTtlSeconds;
  return `${parsed.path}?exp=${exp}&sig=${signatureOf(app, parsed.mediaId, exp)}`;
}

/** What a signature check found: `valid`, `missing` (no exp/sig), `expired` or `invalid`. */
export type SignatureCheck = { status: 'valid'; expires: number } | { status: 'missing' | 'expired' | 'invalid' };

/** Checks `exp` and `sig` of a request for media `mediaId` (constant-time comparison of the HMAC). */
export function checkSignature(app: AppDeps, mediaId: string, exp: unknown, sig: unknown): SignatureCheck {
  if (exp === undefined && sig === undefined) return { status: 'missing' };
  if (typeof exp !== 'string' || typeof sig !== 'string' || !/^\d{1,12}$/.test(exp) || !/^[A-Za-z0-9_-]{43}$/.test(sig)) return { status: 'invalid' };
  const expires = Number(exp);
  const expected = Buffer.from(signatureOf(app, mediaId, expires));
  const given = Buffer.from(sig);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { status: 'invalid' };
  if (expires * 1000 <= app.clock().getTime()) return { status: 'expired' };
  return { status: 'valid', expires };
}
