import DataLoader from 'dataloader';
import { type RequestContext, invalid, isUuid, notFound, requestScoped } from '../kernel/index.js';
import { type LessonVideoAccess, mediaPath, parseMediaPath, requireUsableMedia, signMediaPath, signMediaPathFor, videoStates, type VideoState } from '../media/index.js';
import { RANK, requireRole, viewerRole } from '../members/index.js';
import { findCommunity } from '../tribes/index.js';
import * as repo from './courses.repository.js';
import * as lessonRepo from './lesson-video.repository.js';
import { addLesson, canReadLessons, getCourse, type Lesson } from './courses.service.js';

/**
 * Lesson videos (docs/media.md, "Video lessons"): a lesson references an uploaded `lesson_video` of its course's tribe
 * (`course_lessons.video_media_id`); `Lesson.video` shows its transcoding state and, once READY, the HLS master
 * playlist, the poster and the duration.
 */

/** `Lesson.video` as the schema answers it. */
export interface LessonVideoView {
  mediaId: string;
  status: 'PROCESSING' | 'READY' | 'FAILED';
  hlsUrl: string | null;
  posterUrl: string | null;
  durationSeconds: number | null;
  failureReason: string | null;
}

/** A video reference of an input (a media id or a `/media/{id}/...` path) as the media path of its original, or null. */
function videoPathOf(value: unknown, field: string): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') throw invalid('invalid_input', `${field}: must be a media id or a /media/{id}/... path.`, [{ field, message: 'invalid' }]);
  const ref = parseMediaPath(value);
  if (ref) return mediaPath(ref.mediaId, 'original');
  if (isUuid(value)) return mediaPath(value.toLowerCase(), 'original');
  throw invalid('invalid_media', `${field}: must be a media id or a /media/{id}/... path.`, [{ field, message: 'not an uploaded media' }]);
}

/**
 * Checks that `value` names a lesson_video the caller uploaded to `communityId` (the media domain's rule for content
 * referencing uploads) and answers its id; `invalid_media` (BAD_USER_INPUT) otherwise.
 */
async function usableVideo(ctx: RequestContext, communityId: string, value: unknown, field: string): Promise<string | null> {
  const path = videoPathOf(value, field);
  if (!path) return null;
  const [checked] = await requireUsableMedia(ctx, [path], { kind: 'lesson_video', communityId }, field);
  return parseMediaPath(checked)!.mediaId;
}

/** `addLesson` with an optional `videoMediaId`: the video is checked before the lesson is written. */
export async function addLessonWithVideo(
  ctx: RequestContext,
  communityId: string | null | undefined,
  courseId: string,
  moduleId: string,
  input: { videoMediaId?: string | null } & Record<string, unknown>,
): Promise<Lesson> {
  const { videoMediaId, ...rest } = input;
  if (videoMediaId === undefined || videoMediaId === null) return addLesson(ctx, communityId, courseId, moduleId, rest);
  const course = await getCourse(ctx, courseId, communityId);
  await requireRole(ctx, course.communityId, 'moderator');
  const mediaId = await usableVideo(ctx, course.communityId, videoMediaId, 'videoMediaId');
  const lesson = await addLesson(ctx, communityId, courseId, moduleId, rest);
  return (await lessonRepo.setLessonVideo(ctx.app.database.db, lesson.id, mediaId)) ?? lesson;
}

/** Sets (or with null removes) a lesson's video: moderators and above of the course's tribe. */
export async function setLessonVideo(
  ctx: RequestContext,
  communityId: string | null | undefined,
  courseId: string,
  lessonId: string,
  videoMediaId: string | null | undefined,
): Promise<Lesson> {
  const course = await getCourse(ctx, courseId, communityId);
  await requireRole(ctx, course.communityId, 'moderator');
  const db = ctx.app.database.db;
  const lesson = isUuid(lessonId) ? await repo.findLesson(db, lessonId) : undefined;
  if (!lesson || lesson.courseId !== course.id) throw notFound('Lesson');
  const mediaId = await usableVideo(ctx, course.communityId, videoMediaId, 'videoMediaId');
  const updated = await lessonRepo.setLessonVideo(db, lesson.id, mediaId);
  if (!updated) throw notFound('Lesson');
  return updated;
}

const statesLoader = (ctx: RequestContext) =>
  requestScoped(ctx, 'courses.lessonVideoStates', () =>
    new DataLoader<string, VideoState | null>(async (ids) => {
      const states = await videoStates(ctx.app.database.db, ids);
      return ids.map((id) => states.get(id) ?? null);
    }),
  );

/**
 * `Lesson.video` for the caller: null without a video or when the course's access rule hides the lesson's content.
 * A paid or members-only course's URLs are signed for the caller (`signMediaPathFor`: the file route checks the
 * course's rule again for them), in public tribes too; a free course's are signed in a private tribe (the reader
 * passed the lesson's access check) and plain paths in a public one.
 */
export async function lessonVideo(ctx: RequestContext, lesson: Lesson): Promise<LessonVideoView | null> {
  if (!lesson.videoMediaId) return null;
  if (!(await canReadLessons(ctx, lesson.courseId))) return null;
  const mediaId = lesson.videoMediaId;
  // Queued in the upload's request: a video without its row yet is still PROCESSING.
  const state = await statesLoader(ctx).load(mediaId);
  if (!state || state.status === 'processing') return { mediaId, status: 'PROCESSING', hlsUrl: null, posterUrl: null, durationSeconds: null, failureReason: null };
  if (state.status === 'failed') return { mediaId, status: 'FAILED', hlsUrl: null, posterUrl: null, durationSeconds: null, failureReason: state.failureReason };
  const course = await getCourse(ctx, lesson.courseId);
  const community = await findCommunity(ctx, course.communityId);
  const viewerId = ctx.caller?.userId;
  const url = (variant: string) => {
    const path = mediaPath(mediaId, variant);
    if (course.accessType !== 'free') return viewerId ? signMediaPathFor(ctx.app, path, viewerId) : null;
    return community?.isPublic ? path : signMediaPath(ctx.app, path);
  };
  return { mediaId, status: 'READY', hlsUrl: url('hls.m3u8'), posterUrl: url('poster.jpg'), durationSeconds: state.durationSeconds, failureReason: null };
}

/**
 * `AppDeps.lessonVideoAccess` (server/deps.ts), for the media file route: a video that a free course's lesson shows
 * is `open` (its tribe's rule applies); any other (a paid or members-only course's, or on no lesson) is `allowed` to
 * `viewerId` when they moderate its tribe or pass the access rule of a course showing it (`canReadLessons`, as
 * `Lesson.video`), else `refused`.
 */
export const lessonVideoRule: LessonVideoAccess = async (ctx, media, viewerId) => {
  const showing = await lessonRepo.coursesShowingVideo(ctx.app.database.db, media.id);
  if (showing.some((c) => c.accessType === 'free')) return 'open';
  if (viewerId === null) return 'refused';
  // The rule for the user the URL was issued to (a new context: its own per-request loaders).
  const as: RequestContext = { app: ctx.app, caller: { userId: viewerId }, requestId: ctx.requestId, operation: 'query' };
  const role = await viewerRole(as, media.communityId);
  if (role && RANK[role] >= RANK.moderator) return 'allowed';
  for (const c of showing) if (await canReadLessons(as, c.courseId)) return 'allowed';
  return 'refused';
};
