import { fromCents } from '../commerce/index.js';
import { DateTime, loadTypeDefs, ref } from '../kernel/graphql.js';
import type { RequestContext } from '../kernel/index.js';
import * as service from './courses.service.js';
import type { Course, CourseEnrollment, CourseModule, Lesson } from './courses.tables.js';

export const typeDefs = loadTypeDefs(import.meta.url);

type Args = Record<string, any>;

export const resolvers = {
  DateTime,
  Query: {
    courses: (_: unknown, a: Args, ctx: RequestContext) => service.listCourses(ctx, a.communityId, a),
    course: (_: unknown, a: Args, ctx: RequestContext) => service.getCourse(ctx, a.id, a.communityId),
    courseProgress: (_: unknown, a: Args, ctx: RequestContext) => service.progress(ctx, a.communityId, a.courseId),
  },
  Mutation: {
    createCourse: (_: unknown, a: Args, ctx: RequestContext) => service.createCourse(ctx, a.communityId, a.input),
    addCourseModule: (_: unknown, a: Args, ctx: RequestContext) => service.addModule(ctx, a.communityId, a.courseId, a.input),
    addLesson: (_: unknown, a: Args, ctx: RequestContext) => service.addLesson(ctx, a.communityId, a.courseId, a.moduleId, a.input),
    enrollCourse: (_: unknown, a: Args, ctx: RequestContext) => service.enroll(ctx, a.communityId, a.courseId),
    completeLesson: (_: unknown, a: Args, ctx: RequestContext) => service.completeLesson(ctx, a.communityId, a.courseId, a.lessonId),
  },
  Course: {
    __resolveReference: (r: { id: string }, ctx: RequestContext) => service.courseById(ctx, r.id),
    community: (c: Course) => ref('Community', c.communityId),
    price: (c: Course) => fromCents(c.priceCents),
    createdBy: (c: Course) => ref('User', c.createdBy),
    modules: (c: Course, _: unknown, ctx: RequestContext) => service.modulesOf(ctx, c.id),
    viewerEnrollment: (c: Course, _: unknown, ctx: RequestContext) => service.viewerEnrollment(ctx, c.id),
  },
  CourseModule: {
    lessons: (m: CourseModule, _: unknown, ctx: RequestContext) => service.lessonsOf(ctx, m.id),
  },
  Lesson: {
    content: (l: Lesson, _: unknown, ctx: RequestContext) => service.lessonContent(ctx, l),
  },
  CourseEnrollment: {
    course: (e: CourseEnrollment, _: unknown, ctx: RequestContext) => service.courseById(ctx, e.courseId),
    user: (e: CourseEnrollment) => ref('User', e.userId),
  },
  CourseEnrollResult: {
    order: (r: service.EnrollResult) => ref('Order', r.order?.id),
  },
};
