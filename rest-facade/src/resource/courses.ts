/**
 * Resource API routes of courses (spec 4.5): fixed GraphQL documents through the gateway, snake_case records in
 * `{data}` / `{data, pagination}`. Money is the spec's number in major units (49.9).
 */
import type { Router } from 'express';
import { fromCents } from '../../../subgraphs/commerce/index.js';
import type {
  AddCourseModuleMutation,
  AddLessonMutation,
  CourseProgressQuery,
  EnrollCourseMutation,
  GetCourseQuery,
  ListCoursesQuery,
} from '../generated.js';
import { present } from '../errors.js';
import { handle } from '../http.js';
import { restDocument, type RequestRunner } from '../typed-document.js';
import { ORDER, PAGE } from './documents.js';
import { objectBody, pageParams, pick } from './params.js';
import { accessResponse, listBody } from './shapes.js';

type Lesson = AddLessonMutation['addLesson'];
/** A module as added (no lessons), or with its lessons as a course is read. */
type Module = AddCourseModuleMutation['addCourseModule'] & { lessons?: Lesson[] };
type CourseDetail = NonNullable<GetCourseQuery['course']>;
/** A course as listed and created, or with its modules and the viewer's enrollment as a single course is read. */
type Course = ListCoursesQuery['courses']['items'][number] | CourseDetail;
type CourseEnrollment = NonNullable<EnrollCourseMutation['enrollCourse']['enrollment']>;
type CourseProgress = CourseProgressQuery['courseProgress'];

// ---- documents ----

const COURSE = 'id community { id } title description accessType priceCents currency xpReward createdBy { id } createdAt updatedAt';
const LESSON = 'id courseId moduleId title content position createdAt video { mediaId status hlsUrl posterUrl durationSeconds failureReason }';
const MODULE = 'id courseId title position createdAt';
const COURSE_DETAIL = `${COURSE} modules { ${MODULE} lessons { ${LESSON} } } viewerEnrollment { id status }`;
const COURSE_ENROLLMENT = 'id course { id } user { id } status enrolledAt completedAt lastAccessedAt';
const COURSE_PROGRESS = `enrollment { ${COURSE_ENROLLMENT} } totalLessons completedLessons progressPercent lastAccessedAt completedLessonIds`;

export const CourseDocs = {
  listCourses: restDocument(`query ListCourses($communityId: ID!, $page: Int, $perPage: Int) {
    courses(communityId: $communityId, page: $page, perPage: $perPage) { items { ${COURSE} } ${PAGE} } }`),
  getCourse: restDocument(`query GetCourse($id: ID!, $communityId: ID) { course(id: $id, communityId: $communityId) { ${COURSE_DETAIL} } }`),
  createCourse: restDocument(`mutation CreateCourse($communityId: ID!, $input: CreateCourseInput!) {
    createCourse(communityId: $communityId, input: $input) { ${COURSE} } }`),
  addModule: restDocument(`mutation AddCourseModule($courseId: ID!, $communityId: ID, $input: CreateCourseModuleInput!) {
    addCourseModule(courseId: $courseId, communityId: $communityId, input: $input) { ${MODULE} } }`),
  addLesson: restDocument(`mutation AddLesson($courseId: ID!, $moduleId: ID!, $communityId: ID, $input: CreateLessonInput!) {
    addLesson(courseId: $courseId, moduleId: $moduleId, communityId: $communityId, input: $input) { ${LESSON} } }`),
  enrollCourse: restDocument(`mutation EnrollCourse($courseId: ID!, $communityId: ID) {
    enrollCourse(courseId: $courseId, communityId: $communityId) { status created enrollment { ${COURSE_ENROLLMENT} } ${ORDER} } }`),
  courseProgress: restDocument(`query CourseProgress($courseId: ID!, $communityId: ID) {
    courseProgress(courseId: $courseId, communityId: $communityId) { ${COURSE_PROGRESS} } }`),
  completeLesson: restDocument(`mutation CompleteLesson($courseId: ID!, $lessonId: ID!, $communityId: ID) {
    completeLesson(courseId: $courseId, lessonId: $lessonId, communityId: $communityId) { ${COURSE_PROGRESS} } }`),
} as const;

// ---- shapes ----

const lessonRecord = (l: Lesson) => ({
  id: l.id,
  course_id: l.courseId,
  module_id: l.moduleId,
  title: l.title,
  content: l.content,
  position: l.position,
  created_at: l.createdAt,
  // The lesson's uploaded video (docs/video.md), only on a lesson that has one (and whose content the reader may see):
  // status processing, ready or failed; URLs once ready.
  ...(l.video
    ? {
        video: {
          media_id: l.video.mediaId,
          status: l.video.status.toLowerCase(),
          hls_url: l.video.hlsUrl ?? null,
          poster_url: l.video.posterUrl ?? null,
          duration_seconds: l.video.durationSeconds ?? null,
          failure_reason: l.video.failureReason ?? null,
        },
      }
    : {}),
});

const moduleRecord = (m: Module) => ({
  id: m.id,
  course_id: m.courseId,
  title: m.title,
  position: m.position,
  created_at: m.createdAt,
  ...(m.lessons ? { lessons: m.lessons.map(lessonRecord) } : {}),
});

export const courseRecord = (c: Course) => ({
  id: c.id,
  community_id: c.community.id,
  title: c.title,
  description: c.description,
  access_type: c.accessType,
  price: fromCents(c.priceCents),
  currency: c.currency,
  xp_reward: c.xpReward,
  created_by: c.createdBy?.id ?? null,
  created_at: c.createdAt,
  updated_at: c.updatedAt,
  ...('modules' in c ? { modules: c.modules.map(moduleRecord) } : {}),
  ...('viewerEnrollment' in c ? { viewer_enrollment: c.viewerEnrollment } : {}),
});

export const courseEnrollmentRecord = (e: CourseEnrollment) => ({
  id: e.id,
  course_id: e.course.id,
  user_id: e.user.id,
  status: e.status,
  enrolled_at: e.enrolledAt,
  completed_at: e.completedAt,
  last_accessed_at: e.lastAccessedAt,
});

export const courseProgressRecord = (p: CourseProgress) => ({
  course_id: p.enrollment.course.id,
  enrollment_id: p.enrollment.id,
  status: p.enrollment.status,
  total_lessons: p.totalLessons,
  completed_lessons: p.completedLessons,
  progress_percent: p.progressPercent,
  last_accessed_at: p.lastAccessedAt,
  completed_lesson_ids: p.completedLessonIds,
});

// ---- routes ----

/** Mounts the course routes on the `/v1/communities` router (`:cid` is the tribe id). */
export function mountCourses(c: Router, exec: RequestRunner): void {
  c.get('/:cid/courses', handle(async (req, res) => {
    res.json(listBody((await exec(req, CourseDocs.listCourses, { communityId: String(req.params.cid), ...pageParams(req) })).courses, courseRecord));
  }));
  c.post('/:cid/courses', handle(async (req, res) => {
    const input = pick(objectBody(req), {
      title: 'title',
      description: 'description',
      access_type: 'accessType',
      price: 'price',
      currency: 'currency',
      xp_reward: 'xpReward',
    });
    const data = await exec(req, CourseDocs.createCourse, { communityId: String(req.params.cid), input });
    res.status(201).json({ data: courseRecord(data.createCourse) });
  }));
  c.get('/:cid/courses/:id', handle(async (req, res) => {
    res.json({ data: courseRecord(present((await exec(req, CourseDocs.getCourse, { id: String(req.params.id), communityId: String(req.params.cid) })).course)) });
  }));
  c.post('/:cid/courses/:id/modules', handle(async (req, res) => {
    const input = pick(objectBody(req), { title: 'title', position: 'position' });
    const data = await exec(req, CourseDocs.addModule, { courseId: String(req.params.id), communityId: String(req.params.cid), input });
    res.status(201).json({ data: moduleRecord(data.addCourseModule) });
  }));
  c.post('/:cid/courses/:id/modules/:mid/lessons', handle(async (req, res) => {
    const input = pick(objectBody(req), { title: 'title', content: 'content', position: 'position', video_media_id: 'videoMediaId' });
    const vars = { courseId: String(req.params.id), moduleId: String(req.params.mid), communityId: String(req.params.cid), input };
    res.status(201).json({ data: lessonRecord((await exec(req, CourseDocs.addLesson, vars)).addLesson) });
  }));
  c.post('/:cid/courses/:id/enroll', handle(async (req, res) => {
    const data = await exec(req, CourseDocs.enrollCourse, { courseId: String(req.params.id), communityId: String(req.params.cid) });
    const out = accessResponse(data.enrollCourse, (r) => courseEnrollmentRecord(present(r.enrollment)));
    res.status(out.status).json(out.body);
  }));
  c.get('/:cid/courses/:id/progress', handle(async (req, res) => {
    const data = await exec(req, CourseDocs.courseProgress, { courseId: String(req.params.id), communityId: String(req.params.cid) });
    res.json({ data: courseProgressRecord(data.courseProgress) });
  }));
  c.post('/:cid/courses/:id/lessons/:lid/complete', handle(async (req, res) => {
    const vars = { courseId: String(req.params.id), lessonId: String(req.params.lid), communityId: String(req.params.cid) };
    res.json({ data: courseProgressRecord((await exec(req, CourseDocs.completeLesson, vars)).completeLesson) });
  }));
}
