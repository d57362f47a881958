/**
 * Resource API routes of courses and challenges (spec 4.5): fixed GraphQL documents through the gateway,
 * snake_case records in `{data}` / `{data, pagination}`. Money is the spec's number in major units (49.9).
 */
import type { Request, Router } from 'express';
import { fromCents } from '../../../subgraphs/commerce/index.js';
import { HttpError } from '../errors.js';
import { handle } from '../http.js';
import { objectBody, pageParams, pick } from './params.js';
import { ORDER, PAGE } from './documents.js';
import { accessResponse, listBody } from './shapes.js';

type G = Record<string, any>;
type Exec = (req: Request, doc: string, variables: Record<string, unknown>) => Promise<G>;

// ---- documents ----

const COURSE = 'id community { id } title description accessType priceCents currency xpReward createdBy { id } createdAt updatedAt';
const LESSON = 'id courseId moduleId title content position createdAt';
const MODULE = 'id courseId title position createdAt';
const COURSE_DETAIL = `${COURSE} modules { ${MODULE} lessons { ${LESSON} } } viewerEnrollment { id status }`;
const COURSE_ENROLLMENT = 'id course { id } user { id } status enrolledAt completedAt lastAccessedAt';
const COURSE_PROGRESS = `enrollment { ${COURSE_ENROLLMENT} } totalLessons completedLessons progressPercent lastAccessedAt completedLessonIds`;
const CHALLENGE =
  'id community { id } title description durationDays challengeType accessType priceCents currency xpReward createdBy { id } createdAt updatedAt';
const CHALLENGE_ENROLLMENT = 'id challenge { id } user { id } status startedAt completedAt';
const CHALLENGE_PROGRESS = `enrollment { ${CHALLENGE_ENROLLMENT} } totalDays completedDays progressPercent currentStreak lastCheckinAt currentDay xpEarned`;
const CHECKIN = 'id challenge { id } user { id } dayNumber content tags xpAwarded createdAt';
const ENTRY = 'rank user { id username displayName } completedDays currentStreak xpEarned lastCheckinAt status';

export const LearningDocs = {
  listCourses: `query ListCourses($communityId: ID!, $page: Int, $perPage: Int) {
    courses(communityId: $communityId, page: $page, perPage: $perPage) { items { ${COURSE} } ${PAGE} } }`,
  getCourse: `query GetCourse($id: ID!, $communityId: ID) { course(id: $id, communityId: $communityId) { ${COURSE_DETAIL} } }`,
  createCourse: `mutation CreateCourse($communityId: ID!, $input: CreateCourseInput!) {
    createCourse(communityId: $communityId, input: $input) { ${COURSE} } }`,
  addModule: `mutation AddCourseModule($courseId: ID!, $communityId: ID, $input: CreateCourseModuleInput!) {
    addCourseModule(courseId: $courseId, communityId: $communityId, input: $input) { ${MODULE} } }`,
  addLesson: `mutation AddLesson($courseId: ID!, $moduleId: ID!, $communityId: ID, $input: CreateLessonInput!) {
    addLesson(courseId: $courseId, moduleId: $moduleId, communityId: $communityId, input: $input) { ${LESSON} } }`,
  enrollCourse: `mutation EnrollCourse($courseId: ID!, $communityId: ID) {
    enrollCourse(courseId: $courseId, communityId: $communityId) { status created enrollment { ${COURSE_ENROLLMENT} } ${ORDER} } }`,
  courseProgress: `query CourseProgress($courseId: ID!, $communityId: ID) {
    courseProgress(courseId: $courseId, communityId: $communityId) { ${COURSE_PROGRESS} } }`,
  completeLesson: `mutation CompleteLesson($courseId: ID!, $lessonId: ID!, $communityId: ID) {
    completeLesson(courseId: $courseId, lessonId: $lessonId, communityId: $communityId) { ${COURSE_PROGRESS} } }`,

  listChallenges: `query ListChallenges($communityId: ID!, $page: Int, $perPage: Int) {
    challenges(communityId: $communityId, page: $page, perPage: $perPage) { items { ${CHALLENGE} } ${PAGE} } }`,
  getChallenge: `query GetChallenge($id: ID!, $communityId: ID) {
    challenge(id: $id, communityId: $communityId) { ${CHALLENGE} viewerEnrollment { id status } } }`,
  createChallenge: `mutation CreateChallenge($communityId: ID!, $input: CreateChallengeInput!) {
    createChallenge(communityId: $communityId, input: $input) { ${CHALLENGE} } }`,
  enrollChallenge: `mutation EnrollChallenge($challengeId: ID!, $communityId: ID) {
    enrollChallenge(challengeId: $challengeId, communityId: $communityId) { status created enrollment { ${CHALLENGE_ENROLLMENT} } ${ORDER} } }`,
  challengeProgress: `query ChallengeProgress($challengeId: ID!, $communityId: ID) {
    challengeProgress(challengeId: $challengeId, communityId: $communityId) { ${CHALLENGE_PROGRESS} } }`,
  checkIn: `mutation CheckIn($challengeId: ID!, $communityId: ID, $input: CheckinInput!) {
    checkIn(challengeId: $challengeId, communityId: $communityId, input: $input) { checkin { ${CHECKIN} } progress { ${CHALLENGE_PROGRESS} } } }`,
  leaderboard: `query Leaderboard($challengeId: ID!, $communityId: ID, $page: Int, $perPage: Int) {
    challengeLeaderboard(challengeId: $challengeId, communityId: $communityId, page: $page, perPage: $perPage) { items { ${ENTRY} } ${PAGE} } }`,
} as const;

// ---- shapes ----

const lessonRecord = (l: G) => ({
  id: l.id,
  course_id: l.courseId,
  module_id: l.moduleId,
  title: l.title,
  content: l.content,
  position: l.position,
  created_at: l.createdAt,
});

const moduleRecord = (m: G) => ({
  id: m.id,
  course_id: m.courseId,
  title: m.title,
  position: m.position,
  created_at: m.createdAt,
  ...(m.lessons ? { lessons: m.lessons.map(lessonRecord) } : {}),
});

export const courseRecord = (c: G) => ({
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
  ...(c.modules ? { modules: c.modules.map(moduleRecord) } : {}),
  ...('viewerEnrollment' in c ? { viewer_enrollment: c.viewerEnrollment } : {}),
});

export const courseEnrollmentRecord = (e: G) => ({
  id: e.id,
  course_id: e.course.id,
  user_id: e.user.id,
  status: e.status,
  enrolled_at: e.enrolledAt,
  completed_at: e.completedAt,
  last_accessed_at: e.lastAccessedAt,
});

export const courseProgressRecord = (p: G) => ({
  course_id: p.enrollment.course.id,
  enrollment_id: p.enrollment.id,
  status: p.enrollment.status,
  total_lessons: p.totalLessons,
  completed_lessons: p.completedLessons,
  progress_percent: p.progressPercent,
  last_accessed_at: p.lastAccessedAt,
  completed_lesson_ids: p.completedLessonIds,
});

export const challengeRecord = (c: G) => ({
  id: c.id,
  community_id: c.community.id,
  title: c.title,
  description: c.description,
  duration_days: c.durationDays,
  challenge_type: c.challengeType,
  access_type: c.accessType,
  price: fromCents(c.priceCents),
  currency: c.currency,
  xp_reward: c.xpReward,
  created_by: c.createdBy?.id ?? null,
  created_at: c.createdAt,
  updated_at: c.updatedAt,
  ...('viewerEnrollment' in c ? { viewer_enrollment: c.viewerEnrollment } : {}),
});

export const challengeEnrollmentRecord = (e: G) => ({
  id: e.id,
  challenge_id: e.challenge.id,
  user_id: e.user.id,
  status: e.status,
  started_at: e.startedAt,
  completed_at: e.completedAt,
});

export const challengeProgressRecord = (p: G) => ({
  challenge_id: p.enrollment.challenge.id,
  enrollment_id: p.enrollment.id,
  status: p.enrollment.status,
  total_days: p.totalDays,
  completed_days: p.completedDays,
  progress_percent: p.progressPercent,
  current_streak: p.currentStreak,
  last_checkin_at: p.lastCheckinAt,
  current_day: p.currentDay,
  xp_earned: p.xpEarned,
});

const checkinRecord = (c: G) => ({
  id: c.id,
  challenge_id: c.challenge.id,
  user_id: c.user.id,
  day_number: c.dayNumber,
  content: c.content,
  tags: c.tags,
  xp_awarded: c.xpAwarded,
  created_at: c.createdAt,
});

const leaderboardRecord = (e: G) => ({
  rank: e.rank,
  user_id: e.user.id,
  username: e.user.username,
  display_name: e.user.displayName,
  completed_days: e.completedDays,
  current_streak: e.currentStreak,
  xp_earned: e.xpEarned,
  last_checkin_at: e.lastCheckinAt,
});

// ---- routes ----

/** Mounts the course and challenge routes on the `/v1/communities` router (`:cid` is the tribe id). */
export function mountLearning(c: Router, exec: Exec): void {
  // courses
  c.get('/:cid/courses', handle(async (req, res) => {
    res.json(listBody((await exec(req, LearningDocs.listCourses, { communityId: req.params.cid, ...pageParams(req) })).courses, courseRecord));
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
    const data = await exec(req, LearningDocs.createCourse, { communityId: req.params.cid, input });
    res.status(201).json({ data: courseRecord(data.createCourse) });
  }));
  c.get('/:cid/courses/:id', handle(async (req, res) => {
    res.json({ data: courseRecord((await exec(req, LearningDocs.getCourse, { id: req.params.id, communityId: req.params.cid })).course) });
  }));
  c.post('/:cid/courses/:id/modules', handle(async (req, res) => {
    const input = pick(objectBody(req), { title: 'title', position: 'position' });
    const data = await exec(req, LearningDocs.addModule, { courseId: req.params.id, communityId: req.params.cid, input });
    res.status(201).json({ data: moduleRecord(data.addCourseModule) });
  }));
  c.post('/:cid/courses/:id/modules/:mid/lessons', handle(async (req, res) => {
    const input = pick(objectBody(req), { title: 'title', content: 'content', position: 'position' });
    const vars = { courseId: req.params.id, moduleId: req.params.mid, communityId: req.params.cid, input };
    res.status(201).json({ data: lessonRecord((await exec(req, LearningDocs.addLesson, vars)).addLesson) });
  }));
  c.post('/:cid/courses/:id/enroll', handle(async (req, res) => {
    const data = await exec(req, LearningDocs.enrollCourse, { courseId: req.params.id, communityId: req.params.cid });
    const out = accessResponse(data.enrollCourse, (r) => courseEnrollmentRecord(r.enrollment));
    res.status(out.status).json(out.body);
  }));
  c.get('/:cid/courses/:id/progress', handle(async (req, res) => {
    const data = await exec(req, LearningDocs.courseProgress, { courseId: req.params.id, communityId: req.params.cid });
    res.json({ data: courseProgressRecord(data.courseProgress) });
  }));
  c.post('/:cid/courses/:id/lessons/:lid/complete', handle(async (req, res) => {
    const vars = { courseId: req.params.id, lessonId: req.params.lid, communityId: req.params.cid };
    res.json({ data: courseProgressRecord((await exec(req, LearningDocs.completeLesson, vars)).completeLesson) });
  }));

  // challenges
  c.get('/:cid/challenges', handle(async (req, res) => {
    const data = await exec(req, LearningDocs.listChallenges, { communityId: req.params.cid, ...pageParams(req) });
    res.json(listBody(data.challenges, challengeRecord));
  }));
  c.post('/:cid/challenges', handle(async (req, res) => {
    const input = pick(objectBody(req), {
      title: 'title',
      description: 'description',
      duration_days: 'durationDays',
      challenge_type: 'challengeType',
      access_type: 'accessType',
      xp_reward: 'xpReward',
      price: 'price',
      currency: 'currency',
    });
    const data = await exec(req, LearningDocs.createChallenge, { communityId: req.params.cid, input });
    res.status(201).json({ data: challengeRecord(data.createChallenge) });
  }));
  c.get('/:cid/challenges/:id', handle(async (req, res) => {
    const data = await exec(req, LearningDocs.getChallenge, { id: req.params.id, communityId: req.params.cid });
    res.json({ data: challengeRecord(data.challenge) });
  }));
  c.post('/:cid/challenges/:id/enroll', handle(async (req, res) => {
    const data = await exec(req, LearningDocs.enrollChallenge, { challengeId: req.params.id, communityId: req.params.cid });
    const out = accessResponse(data.enrollChallenge, (r) => challengeEnrollmentRecord(r.enrollment));
    res.status(out.status).json(out.body);
  }));
  c.get('/:cid/challenges/:id/progress', handle(async (req, res) => {
    const data = await exec(req, LearningDocs.challengeProgress, { challengeId: req.params.id, communityId: req.params.cid });
    res.json({ data: challengeProgressRecord(data.challengeProgress) });
  }));
  c.post('/:cid/challenges/:id/checkins', handle(async (req, res) => {
    const body = objectBody(req);
    // GraphQL would quietly turn a lone string into a one-item list; the contract says array.
    if (body.tags != null && !Array.isArray(body.tags)) {
      throw new HttpError(400, 'invalid_input', 'tags: must be an array of strings.', [{ field: 'tags', message: 'must be an array of strings' }]);
    }
    const input = pick(body, { content: 'content', day_number: 'dayNumber', tags: 'tags' });
    const data = await exec(req, LearningDocs.checkIn, { challengeId: req.params.id, communityId: req.params.cid, input });
    const { checkin, progress } = data.checkIn;
    res.status(201).json({ data: { ...checkinRecord(checkin), progress: challengeProgressRecord(progress) } });
  }));
  c.get('/:cid/challenges/:id/leaderboard', handle(async (req, res) => {
    const vars = { challengeId: req.params.id, communityId: req.params.cid, ...pageParams(req) };
    res.json(listBody((await exec(req, LearningDocs.leaderboard, vars)).challengeLeaderboard, leaderboardRecord));
  }));
}
