import { and, asc, count, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import {
  courseEnrollments,
  courseLessons,
  courseModules,
  courses,
  lessonCompletions,
  type Course,
  type CourseEnrollment,
  type CourseModule,
  type Lesson,
} from './courses.tables.js';

export async function insertCourse(db: Executor, values: typeof courses.$inferInsert): Promise<Course> {
  const [row] = await db.insert(courses).values(values).returning();
  return row;
}

export async function findCoursesByIds(db: Executor, ids: readonly string[]): Promise<Course[]> {
  if (ids.length === 0) return [];
  return db.select().from(courses).where(inArray(courses.id, [...ids]));
}

/** Courses of a tribe, newest first. */
export async function listCourses(db: Executor, communityId: string, limit: number, offset: number): Promise<Course[]> {
  return db
    .select()
    .from(courses)
    .where(eq(courses.communityId, communityId))
    .orderBy(desc(courses.createdAt), desc(courses.id))
    .limit(limit)
    .offset(offset);
}

export async function insertModule(db: Executor, values: typeof courseModules.$inferInsert): Promise<CourseModule> {
  const [row] = await db.insert(courseModules).values(values).returning();
  return row;
}

export async function findModule(db: Executor, id: string): Promise<CourseModule | undefined> {
  const [row] = await db.select().from(courseModules).where(eq(courseModules.id, id)).limit(1);
  return row;
}

/** One past the highest module position of the course (0 for the first module). */
export async function nextModulePosition(db: Executor, courseId: string): Promise<number> {
  const [row] = await db
    .select({ next: sql<number>`coalesce(max(${courseModules.position}) + 1, 0)::int` })
    .from(courseModules)
    .where(eq(courseModules.courseId, courseId));
  return Number(row.next);
}

/** Modules of the courses, in display order (position, then creation). */
export async function modulesOfCourses(db: Executor, courseIds: readonly string[]): Promise<CourseModule[]> {
  if (courseIds.length === 0) return [];
  return db
    .select()
    .from(courseModules)
    .where(inArray(courseModules.courseId, [...courseIds]))
    .orderBy(asc(courseModules.position), asc(courseModules.createdAt), asc(courseModules.id));
}

export async function insertLesson(db: Executor, values: typeof courseLessons.$inferInsert): Promise<Lesson> {
  const [row] = await db.insert(courseLessons).values(values).returning();
  return row;
}

export async function findLesson(db: Executor, id: string): Promise<Lesson | undefined> {
  const [row] = await db.select().from(courseLessons).where(eq(courseLessons.id, id)).limit(1);
  return row;
}

/** One past the highest lesson position of the module (0 for the first lesson). */
export async function nextLessonPosition(db: Executor, moduleId: string): Promise<number> {
  const [row] = await db
    .select({ next: sql<number>`coalesce(max(${courseLessons.position}) + 1, 0)::int` })
    .from(courseLessons)
    .where(eq(courseLessons.moduleId, moduleId));
  return Number(row.next);
}

/** Lessons of the modules, in display order (position, then creation). */
export async function lessonsOfModules(db: Executor, moduleIds: readonly string[]): Promise<Lesson[]> {
  if (moduleIds.length === 0) return [];
  return db
    .select()
    .from(courseLessons)
    .where(inArray(courseLessons.moduleId, [...moduleIds]))
    .orderBy(asc(courseLessons.position), asc(courseLessons.createdAt), asc(courseLessons.id));
}

export async function countLessons(db: Executor, courseId: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(courseLessons).where(eq(courseLessons.courseId, courseId));
  return Number(row.n);
}

/** The user's enrollments in the given courses. */
export async function enrollmentsOf(db: Executor, userId: string, courseIds: readonly string[]): Promise<CourseEnrollment[]> {
  if (courseIds.length === 0) return [];
  return db
    .select()
    .from(courseEnrollments)
    .where(and(eq(courseEnrollments.userId, userId), inArray(courseEnrollments.courseId, [...courseIds])));
}

/** Inserts the enrollment unless the user already has one in that course; returns it only when inserted. */
export async function insertEnrollment(db: Executor, values: typeof courseEnrollments.$inferInsert): Promise<CourseEnrollment | undefined> {
  const [row] = await db
    .insert(courseEnrollments)
    .values(values)
    .onConflictDoNothing({ target: [courseEnrollments.courseId, courseEnrollments.userId] })
    .returning();
  return row;
}

/** The enrollment, locked for the rest of the transaction (serialises completions of one enrollment). */
export async function lockEnrollment(tx: Executor, id: string): Promise<CourseEnrollment> {
  const [row] = await tx.select().from(courseEnrollments).where(eq(courseEnrollments.id, id)).for('update');
  return row;
}

export async function updateEnrollment(db: Executor, id: string, patch: Partial<typeof courseEnrollments.$inferInsert>): Promise<CourseEnrollment> {
  const [row] = await db.update(courseEnrollments).set(patch).where(eq(courseEnrollments.id, id)).returning();
  return row;
}

/** Records a lesson completion; false when it was recorded before. */
export async function insertCompletion(db: Executor, enrollmentId: string, lessonId: string, at: Date): Promise<boolean> {
  const rows = await db
    .insert(lessonCompletions)
    .values({ enrollmentId, lessonId, completedAt: at })
    .onConflictDoNothing()
    .returning({ lessonId: lessonCompletions.lessonId });
  return rows.length === 1;
}

/** Ids of the lessons the enrollment completed, oldest completion first. */
export async function completedLessonIds(db: Executor, enrollmentId: string): Promise<string[]> {
  const rows = await db
    .select({ lessonId: lessonCompletions.lessonId })
    .from(lessonCompletions)
    .where(eq(lessonCompletions.enrollmentId, enrollmentId))
    .orderBy(asc(lessonCompletions.completedAt), asc(lessonCompletions.lessonId));
  return rows.map((r) => r.lessonId);
}

/** Deletes the enrollment an order granted (a full refund takes it back); true when there was one. */
export async function deleteEnrollmentOfOrder(tx: Executor, orderId: string): Promise<boolean> {
  const rows = await tx.delete(courseEnrollments).where(eq(courseEnrollments.orderId, orderId)).returning({ id: courseEnrollments.id });
  return rows.length > 0;
}
