import DataLoader from 'dataloader';
import { z } from 'zod';
import type { Executor } from '../../db/src/index.js';
import {
  type CheckoutInfo,
  DEFAULT_CURRENCY,
  currencySchema,
  type FulfilmentHandler,
  type RevocationHandler,
  startCheckout,
  priceSchema,
  refinePriceToCurrency,
  type Order,
} from '../commerce/index.js';
import { getCommunity } from '../communities/index.js';
import { sanitizeContent } from '../content/index.js';
import {
  DomainError,
  type Page,
  type RequestContext,
  isUuid,
  notFound,
  paging,
  parseInput,
  requestScoped,
  requireUser,
  toPage,
  idLoader,
  viewerLoader,
  text,
} from '../kernel/index.js';
import { RANK, awardXp, requireRole, requireView, requireVisible, viewerRole, visibleOrNull } from '../members/index.js';
import { emitEvent } from '../outbox/index.js';
import * as repo from './courses.repository.js';
import { ACCESS_TYPES, type Course, type CourseEnrollment, type CourseModule, type Lesson } from './courses.tables.js';

export type { Course, CourseEnrollment, CourseModule, Lesson } from './courses.tables.js';

/** XP source of a completed course; the key is `course.completed:<enrollment id>`. */
export const COURSE_COMPLETED = 'course.completed';

const notEnrolled = () => new DomainError('forbidden', 'not_enrolled', 'Enroll in the course first.');

const title = text({ max: 200, min: 1, trim: true, required: 'title is required' });
const position = z.number({ error: 'position must be an integer' }).int('position must be an integer').min(0).max(100_000);

const createInput = z
  .object({
    title,
    description: text({ max: 10_000 }).nullish(),
    accessType: z.enum(ACCESS_TYPES, { error: 'access_type must be free, paid or members_only' }),
    price: priceSchema.nullish(),
    currency: currencySchema.nullish(),
    xpReward: z.number().int('xp_reward must be an integer').min(0).max(100_000).nullish(),
  })
  .superRefine((v, ctx) => {
    if (v.accessType === 'paid' && !v.price) {
      ctx.addIssue({ code: 'custom', path: ['price'], message: 'price above 0 is required when access_type is paid' });
    }
    if (v.accessType !== 'paid' && v.price) {
      ctx.addIssue({ code: 'custom', path: ['price'], message: 'price is only for paid courses' });
    }
    refinePriceToCurrency(v, ctx);
  });
const moduleInput = z.object({ title, position: position.nullish() });
const lessonInput = z.object({
  title,
  content: text({ max: 100_000 }).nullish(),
  position: position.nullish(),
});

// ---- loaders (per request) ----

const courseLoader = (ctx: RequestContext) =>
  idLoader<Course>(ctx, 'courses.byId', (ids) => repo.findCoursesByIds(ctx.app.database.db, ids));

const modulesLoader = (ctx: RequestContext) =>
  requestScoped(ctx, 'courses.modulesOf', () =>
    new DataLoader<string, CourseModule[]>(async (courseIds) => {
      const rows = await repo.modulesOfCourses(ctx.app.database.db, courseIds);
      return courseIds.map((id) => rows.filter((m) => m.courseId === id));
    }),
  );

const lessonsLoader = (ctx: RequestContext) =>
  requestScoped(ctx, 'courses.lessonsOf', () =>
    new DataLoader<string, Lesson[]>(async (moduleIds) => {
      const rows = await repo.lessonsOfModules(ctx.app.database.db, moduleIds);
      return moduleIds.map((id) => rows.filter((l) => l.moduleId === id));
    }),
  );

const viewerEnrollmentLoader = (ctx: RequestContext) =>
  viewerLoader(ctx, 'courses.viewerEnrollment', (userId, ids) => repo.enrollmentsOf(ctx.app.database.db, userId, ids), (r) => r.courseId);

// ---- reads ----

/**
 * A course the caller may see (anyone who may see the tribe's content), or `not_found`, also when it
 * belongs to another tribe than `communityId`.
 */
export async function getCourse(ctx: RequestContext, id: string, communityId?: string | null): Promise<Course> {
  return requireVisible(ctx, await courseLoader(ctx).load(id), communityId, 'Course');
}

/** Courses of a tribe, newest first (the catalogue: every course, whatever its access type). */
export async function listCourses(
  ctx: RequestContext,
  communityId: string,
  raw: { page?: number | null; perPage?: number | null },
): Promise<Page<Course>> {
  const community = await getCommunity(ctx, communityId);
  await requireView(ctx, community);
  const p = paging(raw.page, raw.perPage);
  return toPage(await repo.listCourses(ctx.app.database.db, community.id, p.perPage + 1, p.offset), p);
}

/** Modules of a course in display order (batched per request). */
export const modulesOf = (ctx: RequestContext, courseId: string): Promise<CourseModule[]> => modulesLoader(ctx).load(courseId);

/** Lessons of a module in display order (batched per request). */
export const lessonsOf = (ctx: RequestContext, moduleId: string): Promise<Lesson[]> => lessonsLoader(ctx).load(moduleId);

/** The caller's enrollment in the course, or null (batched per request). */
export const viewerEnrollment = (ctx: RequestContext, courseId: string): Promise<CourseEnrollment | null> =>
  ctx.caller ? viewerEnrollmentLoader(ctx).load(courseId) : Promise.resolve(null);

/**
 * Whether the caller may read lesson bodies: moderators and above always; `free` courses anyone who sees the
 * tribe; `members_only` members; `paid` the enrolled (after payment).
 */
export async function canReadLessons(ctx: RequestContext, courseId: string): Promise<boolean> {
  const course = await courseLoader(ctx).load(courseId);
  if (!course) return false;
  const role = await viewerRole(ctx, course.communityId);
  if (role && RANK[role] >= RANK.moderator) return true;
  if (course.accessType === 'free') return true;
  if (course.accessType === 'members_only') return role !== null;
  return (await viewerEnrollment(ctx, course.id)) !== null;
}

/** A lesson's body for the caller, or null when the course's access rule hides it. */
export const lessonContent = async (ctx: RequestContext, lesson: Lesson): Promise<string | null> =>
  (await canReadLessons(ctx, lesson.courseId)) ? lesson.content : null;

/** A course by id without an access check (batched per request): for jobs and services that check access themselves. */
export const courseById = (ctx: RequestContext, id: string): Promise<Course | null> => courseLoader(ctx).load(id);

/**
 * The course when the caller may see it, by the rule of `getCourse` (the root field `course`: anyone who sees the
 * tribe's content), else null: what an entity reference and an enrollment's course answer, so that a private
 * tribe's course never reaches an outsider through a seam. Its lessons keep their own rule (`lessonContent`).
 */
export async function readableCourse(ctx: RequestContext, id: string): Promise<Course | null> {
  return visibleOrNull(ctx, await courseLoader(ctx).load(id));
}

// ---- writes ----

/** Creates a course (moderators and above). Money is stored as integer cents. */
export async function createCourse(ctx: RequestContext, communityId: string, raw: unknown): Promise<Course> {
  const community = await getCommunity(ctx, communityId);
  const { userId } = await requireRole(ctx, community.id, 'moderator');
  const input = parseInput(createInput, raw);
  const now = ctx.app.clock();
  const course = await repo.insertCourse(ctx.app.database.db, {
    communityId: community.id,
    title: input.title,
    description: input.description ?? '',
    accessType: input.accessType,
    priceCents: input.accessType === 'paid' ? input.price! : 0,
    currency: input.currency ?? DEFAULT_CURRENCY,
    xpReward: input.xpReward ?? 0,
    createdBy: userId,
    createdAt: now,
    updatedAt: now,
  });
  courseLoader(ctx).prime(course.id, course);
  return course;
}

/** Adds a module to a course (moderators and above); without `position` it goes last. */
export async function addModule(ctx: RequestContext, communityId: string | null | undefined, courseId: string, raw: unknown): Promise<CourseModule> {
  const course = await getCourse(ctx, courseId, communityId);
  await requireRole(ctx, course.communityId, 'moderator');
  const input = parseInput(moduleInput, raw);
  const db = ctx.app.database.db;
  const created = await repo.insertModule(db, {
    courseId: course.id,
    title: input.title,
    position: input.position ?? (await repo.nextModulePosition(db, course.id)),
    createdAt: ctx.app.clock(),
  });
  modulesLoader(ctx).clear(course.id);
  return created;
}

/** Adds a lesson to a module of the course (moderators and above). `content` is HTML, sanitized. */
export async function addLesson(
  ctx: RequestContext,
  communityId: string | null | undefined,
  courseId: string,
  moduleId: string,
  raw: unknown,
): Promise<Lesson> {
  const course = await getCourse(ctx, courseId, communityId);
  await requireRole(ctx, course.communityId, 'moderator');
  const db = ctx.app.database.db;
  const module = isUuid(moduleId) ? await repo.findModule(db, moduleId) : undefined;
  if (!module || module.courseId !== course.id) throw notFound('Module');
  const input = parseInput(lessonInput, raw);
  const created = await repo.insertLesson(db, {
    courseId: course.id,
    moduleId: module.id,
    title: input.title,
    content: input.content ? sanitizeContent(input.content) : '',
    position: input.position ?? (await repo.nextLessonPosition(db, module.id)),
    createdAt: ctx.app.clock(),
  });
  lessonsLoader(ctx).clear(module.id);
  return created;
}

/** What enrolling answered: the enrollment, or for a paid course not yet paid, the pending order to pay. */
export interface EnrollResult {
  /** `active` or `completed` when enrolled; `pending_payment` while the order waits for payment. */
  status: 'active' | 'completed' | 'pending_payment';
  /** True when this call created the enrollment. */
  created: boolean;
  enrollment: CourseEnrollment | null;
  order: Order | null;
  checkout: CheckoutInfo | null;
}

/**
 * Enrolls the caller (members of the tribe only, whatever the access type). Free and members-only courses
 * enroll at once; a paid course answers its pending order (the same one on every call) and enrolls when the
 * order is paid. Enrolling again returns the existing enrollment.
 */
export async function enroll(ctx: RequestContext, communityId: string | null | undefined, courseId: string): Promise<EnrollResult> {
  const course = await getCourse(ctx, courseId, communityId);
  const { userId } = await requireRole(ctx, course.communityId, 'member');
  const db = ctx.app.database.db;
  const existing = await viewerEnrollment(ctx, course.id);
  if (existing) return { status: existing.status, created: false, enrollment: existing, order: null, checkout: null };
  if (course.accessType === 'paid') {
    const { order, checkout } = await startCheckout(ctx.app, {
      communityId: course.communityId,
      buyerId: userId,
      itemType: 'course',
      itemId: course.id,
      amountCents: course.priceCents,
      currency: course.currency,
    });
    return { status: 'pending_payment', created: false, enrollment: null, order, checkout };
  }
  const now = ctx.app.clock();
  const inserted = await repo.insertEnrollment(db, {
    courseId: course.id,
    communityId: course.communityId,
    userId,
    status: 'active',
    enrolledAt: now,
    lastAccessedAt: now,
  });
  const enrollment = inserted ?? (await repo.enrollmentsOf(db, userId, [course.id]))[0];
  viewerEnrollmentLoader(ctx).clear(course.id).prime(course.id, enrollment);
  return { status: enrollment.status, created: !!inserted, enrollment, order: null, checkout: null };
}

/** Progress of one enrollment. */
export interface CourseProgress {
  enrollment: CourseEnrollment;
  totalLessons: number;
  completedLessons: number;
  /** 0 to 100, two decimals; 0 for a course without lessons. */
  progressPercent: number;
  lastAccessedAt: Date;
  completedLessonIds: string[];
}

async function progressOf(db: Executor, enrollment: CourseEnrollment): Promise<CourseProgress> {
  const [total, done] = await Promise.all([repo.countLessons(db, enrollment.courseId), repo.completedLessonIds(db, enrollment.id)]);
  return progressFrom(enrollment, total, done);
}

function progressFrom(enrollment: CourseEnrollment, total: number, done: string[]): CourseProgress {
  return {
    enrollment,
    totalLessons: total,
    completedLessons: done.length,
    progressPercent: total === 0 ? 0 : Math.round((Math.min(done.length, total) * 10_000) / total) / 100,
    lastAccessedAt: enrollment.lastAccessedAt,
    completedLessonIds: done,
  };
}

/** The caller's progress in a course (`not_enrolled`, 403, without an enrollment). */
export async function progress(ctx: RequestContext, communityId: string | null | undefined, courseId: string): Promise<CourseProgress> {
  requireUser(ctx);
  const course = await getCourse(ctx, courseId, communityId);
  const enrollment = await viewerEnrollment(ctx, course.id);
  if (!enrollment) throw notEnrolled();
  return progressOf(ctx.app.database.db, enrollment);
}

/**
 * Marks a lesson complete for the caller's enrollment. Idempotent: a lesson completed before changes
 * nothing. When every lesson of the course is complete the enrollment becomes `completed` and the course's
 * `xp_reward` is awarded, once (key `course.completed:<enrollment id>`), and the internal `course.completed`
 * `{courseId, userId, enrollmentId}` is emitted in the same transaction.
 */
export async function completeLesson(
  ctx: RequestContext,
  communityId: string | null | undefined,
  courseId: string,
  lessonId: string,
): Promise<CourseProgress> {
  requireUser(ctx);
  const course = await getCourse(ctx, courseId, communityId);
  await requireRole(ctx, course.communityId, 'member'); // a former member keeps the enrollment row, not the rights
  const db = ctx.app.database.db;
  const lesson = isUuid(lessonId) ? await repo.findLesson(db, lessonId) : undefined;
  if (!lesson || lesson.courseId !== course.id) throw notFound('Lesson');
  const found = await viewerEnrollment(ctx, course.id);
  if (!found) throw notEnrolled();
  const now = ctx.app.clock();
  const { enrollment, total, done } = await db.transaction(async (tx) => {
    const locked = await repo.lockEnrollment(tx, found.id);
    const inserted = await repo.insertCompletion(tx, locked.id, lesson.id, now);
    const [total, done] = await Promise.all([repo.countLessons(tx, course.id), repo.completedLessonIds(tx, locked.id)]);
    if (!inserted) return { enrollment: locked, total, done };
    const completes = locked.status === 'active' && total > 0 && done.length >= total;
    const patch = completes ? { lastAccessedAt: now, status: 'completed' as const, completedAt: now } : { lastAccessedAt: now };
    const updated = await repo.updateEnrollment(tx, locked.id, patch);
    if (completes) {
      await awardXp(tx, {
        communityId: course.communityId,
        userId: updated.userId,
        amount: course.xpReward,
        source: COURSE_COMPLETED,
        sourceKey: `${COURSE_COMPLETED}:${updated.id}`,
      });
      await emitEvent(tx, course.communityId, 'course.completed', { courseId: course.id, userId: updated.userId, enrollmentId: updated.id });
    }
    return { enrollment: updated, total, done };
  });
  viewerEnrollmentLoader(ctx).clear(course.id).prime(course.id, enrollment);
  return progressFrom(enrollment, total, done);
}

/** A fully refunded course order takes its enrollment back (with its progress), in the refund's transaction: `AppDeps.revocations.course`. */
export const revokeCourseOrder: RevocationHandler = async (tx, order) => {
  await repo.deleteEnrollmentOfOrder(tx, order.id);
};

/** A paid course order enrolls its buyer (in the transaction that marks the order paid): `AppDeps.fulfilments.course`. */
export const fulfilCourseOrder: FulfilmentHandler = async (tx, order, paidAt) => {
  if (!order.buyerId || !order.productId) return;
  const [course] = await repo.findCoursesByIds(tx, [order.productId]);
  if (!course) return;
  await repo.insertEnrollment(tx, {
    courseId: course.id,
    communityId: course.communityId,
    userId: order.buyerId,
    status: 'active',
    orderId: order.id,
    enrolledAt: paidAt,
    lastAccessedAt: paidAt,
  });
};
