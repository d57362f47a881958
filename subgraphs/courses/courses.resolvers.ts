import { fromCents } from '../commerce/index.js';
import { DateTime, loadTypeDefs, nonNull, ref } from '../kernel/graphql.js';
import * as service from './courses.service.js';
import * as video from './lesson-video.js';
import type { Resolvers } from './courses.generated.js';

export const typeDefs = loadTypeDefs(import.meta.url);

export const resolvers: Resolvers = {
  DateTime,
  Query: {
    courses: (_, a, ctx) => service.listCourses(ctx, a.communityId, a),
    course: (_, a, ctx) => service.getCourse(ctx, a.id, a.communityId),
    courseProgress: (_, a, ctx) => service.progress(ctx, a.communityId, a.courseId),
  },
  Mutation: {
    createCourse: (_, a, ctx) => service.createCourse(ctx, a.communityId, a.input),
    addCourseModule: (_, a, ctx) => service.addModule(ctx, a.communityId, a.courseId, a.input),
    addLesson: (_, a, ctx) => video.addLessonWithVideo(ctx, a.communityId, a.courseId, a.moduleId, a.input),
    setLessonVideo: (_, a, ctx) => video.setLessonVideo(ctx, a.communityId, a.courseId, a.lessonId, a.videoMediaId),
    enrollCourse: (_, a, ctx) => service.enroll(ctx, a.communityId, a.courseId),
    completeLesson: (_, a, ctx) => service.completeLesson(ctx, a.communityId, a.courseId, a.lessonId),
  },
  Course: {
    __resolveReference: (r, ctx) => service.readableCourse(ctx, r.id),
    community: (c) => ref('Community', c.communityId),
    price: (c) => fromCents(c.priceCents),
    createdBy: (c) => ref('User', c.createdBy),
    modules: (c, _, ctx) => service.modulesOf(ctx, c.id),
    viewerEnrollment: (c, _, ctx) => service.viewerEnrollment(ctx, c.id),
  },
  CourseModule: {
    lessons: (m, _, ctx) => service.lessonsOf(ctx, m.id),
  },
  Lesson: {
    content: (l, _, ctx) => service.lessonContent(ctx, l),
    video: (l, _, ctx) => video.lessonVideo(ctx, l),
  },
  CourseEnrollment: {
    course: async (e, _, ctx, info) => nonNull(await service.readableCourse(ctx, e.courseId), info),
    user: (e) => ref('User', e.userId),
  },
  CourseEnrollResult: {
    order: (r) => ref('Order', r.order?.id),
  },
};
