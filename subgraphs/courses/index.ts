export {
  getCourse,
  listCourses,
  createCourse,
  addModule,
  addLesson,
  enroll,
  progress,
  completeLesson,
  courseById,
  COURSE_COMPLETED,
  fulfilCourseOrder,
  revokeCourseOrder,
} from './courses.service.js';
export type { Course, CourseEnrollment, CourseModule, Lesson, CourseProgress, EnrollResult } from './courses.service.js';
// The lesson-video rule the media file route applies (AppDeps.lessonVideoAccess, wired in server/deps.ts).
export { lessonVideoRule } from './lesson-video.js';
