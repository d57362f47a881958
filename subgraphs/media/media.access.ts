import { RANK, viewerRole } from '../members/index.js';
import { type RequestContext, forbidden, isUuid, notFound, unauthorized } from '../kernel/index.js';
import { findCommunity } from '../tribes/index.js';
import * as repo from './media.repository.js';
import type { Media, MediaVariant } from './media.tables.js';
import { checkSignature } from './urls.js';

/**
 * Who may fetch a stored media file, and how long others may keep it (docs/media.md, "Who may fetch" and "Caching").
 * A media follows what it belongs to: no tribe (avatars, tribe-less post images: it can never become private), a
 * tribe (its public or private rule, which can change), or a course (a lesson video: its course's access rule).
 */

/** How a lesson video stands for one viewer, by the courses whose lessons show it (`AppDeps.lessonVideoAccess`). */
export type LessonVideoRule = 'open' | 'allowed' | 'refused';

/**
 * The courses domain's rule for a lesson video, given to the media domain at start-up (media cannot import courses,
 * which import media): `open` when a free course's lesson shows it (then the tribe's rule applies); otherwise `allowed`
 * when `viewerId` passes the access rule of a course showing it (or moderates the tribe), else `refused`.
 */
export type LessonVideoAccess = (ctx: RequestContext, media: { id: string; communityId: string }, viewerId: string | null) => Promise<LessonVideoRule>;

declare module '../kernel/context.js' {
  interface AppDeps {
    /** The courses domain's `lessonVideoRule` (server/deps.ts): whether a lesson video needs a viewer's signed URL. */
    lessonVideoAccess: LessonVideoAccess;
  }
}

/** Media that can never become private (no tribe): any cache may keep them for a year. */
export const IMMUTABLE_PUBLIC = 'public, max-age=31536000, immutable';
/**
 * How long a shared cache may serve a public tribe's media without asking again: the longest a media stays in a CDN
 * or proxy after its tribe went private (then revalidation, `If-None-Match`, is refused).
 */
export const TRIBE_MEDIA_MAX_AGE_SECONDS = 300;
const TRIBE_PUBLIC = `public, max-age=${TRIBE_MEDIA_MAX_AGE_SECONDS}`;
const MEMBER_BY_COOKIE = 'private, max-age=0, must-revalidate';

/** What `GET /media/{id}/{variant}` may send: the variant, how long a client may cache it, the signature to pass on. */
export interface ServedVariant {
  media: Media;
  variant: MediaVariant;
  /**
   * `public, max-age=31536000, immutable` for media of no tribe; `public, max-age=300` for a public tribe's;
   * `private, max-age=<seconds left on the signature>` through a signed URL; `private, max-age=0, must-revalidate` to a
   * member by cookie.
   */
  cacheControl: string;
  /** The checked signature's query (`exp=&sig=`, or `exp=&u=&sig=`), for a playlist's URIs; null when none is needed. */
  signature: string | null;
}

/**
 * The access rule of a media file. Media of no tribe are public and immutable. A lesson video that no free course
 * shows (a paid or members-only course's, or one on no lesson yet) goes only to a viewer's signed URL whose viewer
 * still passes the course's access rule, in public tribes too. Other media of a public tribe are public with a short
 * shared lifetime; of a private tribe, to a request with a valid, unexpired signature or from a signed-in member.
 * Unknown ids and variants are `not_found`; a bad or expired signature is `forbidden`.
 */
export async function openVariant(ctx: RequestContext, mediaId: string, variant: string, query: { exp?: unknown; sig?: unknown; u?: unknown }): Promise<ServedVariant> {
  if (!isUuid(mediaId)) throw notFound('Media');
  const found = await repo.findVariant(ctx.app.database.db, mediaId.toLowerCase(), variant);
  if (!found || found.media.status === 'failed') throw notFound('Media');
  const { media } = found;
  if (!media.communityId) return { ...found, cacheControl: IMMUTABLE_PUBLIC, signature: null };
  const community = await findCommunity(ctx, media.communityId);
  if (!community) throw notFound('Media');
  const signature = checkSignature(ctx.app, media.id, query);
  const secondsLeft = (expires: number) => Math.max(0, expires - Math.floor(ctx.app.clock().getTime() / 1000));

  if (media.kind === 'lesson_video') {
    const viewerId = signature.status === 'valid' ? signature.viewerId : null;
    const rule = await ctx.app.lessonVideoAccess(ctx, { id: media.id, communityId: community.id }, viewerId);
    if (rule !== 'open') {
      if (signature.status === 'expired') throw forbidden('This video link has expired: read the lesson again for a fresh one.', 'url_expired');
      if (signature.status === 'invalid') throw forbidden('This video link is not valid.', 'invalid_signature');
      if (signature.status !== 'valid' || signature.viewerId === null) {
        throw forbidden("This video belongs to a course with restricted access: use the signed URL of the lesson's video.", 'signed_url_required');
      }
      if (rule === 'refused') throw forbidden('The access this video link was issued for has ended.');
      return { ...found, cacheControl: `private, max-age=${secondsLeft(signature.expires)}`, signature: signature.query };
    }
  }

  if (community.isPublic) return { ...found, cacheControl: TRIBE_PUBLIC, signature: null };
  if (signature.status === 'valid') return { ...found, cacheControl: `private, max-age=${secondsLeft(signature.expires)}`, signature: signature.query };
  const role = ctx.caller ? await viewerRole(ctx, community.id) : null;
  if (role && RANK[role] >= RANK.member) return { ...found, cacheControl: MEMBER_BY_COOKIE, signature: null };
  if (signature.status === 'expired') throw forbidden('This media link has expired: fetch the content again for a fresh one.', 'url_expired');
  if (signature.status === 'invalid') throw forbidden('This media link is not valid.', 'invalid_signature');
  if (!ctx.caller) throw unauthorized('This media belongs to a private tribe: use its signed URL, or sign in as a member.');
  throw forbidden('This media belongs to a private tribe: only its members see it.');
}
