import { integer, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

export const courses = pgTable('courses', {
  id: uuid('id').primaryKey().defaultRandom(),
  communityId: uuid('community_id').notNull(),
  title: text('title').notNull(),
  description: text('description').notNull().default(''),
  accessType: text('access_type').$type<AccessType>().notNull(),
  /** Integer cents; above 0 exactly when `accessType` is `paid`. */
  priceCents: integer('price_cents').notNull().default(0),
  /** ISO 4217. */
  currency: text('currency').notNull().default('BRL'),
  /** XP awarded once when an enrollment completes every lesson. */
  xpReward: integer('xp_reward').notNull().default(0),
  createdBy: uuid('created_by'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export const courseModules = pgTable('course_modules', {
  id: uuid('id').primaryKey().defaultRandom(),
  courseId: uuid('course_id').notNull(),
  title: text('title').notNull(),
  position: integer('position').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

export const courseLessons = pgTable('course_lessons', {
  id: uuid('id').primaryKey().defaultRandom(),
  courseId: uuid('course_id').notNull(),
  moduleId: uuid('module_id').notNull(),
  title: text('title').notNull(),
  content: text('content').notNull().default(''),
  position: integer('position').notNull(),
  /** An uploaded lesson_video of the course's tribe (migration 0020), shown as `Lesson.video`. */
  videoMediaId: uuid('video_media_id'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

export const courseEnrollments = pgTable('course_enrollments', {
  id: uuid('id').primaryKey().defaultRandom(),
  courseId: uuid('course_id').notNull(),
  communityId: uuid('community_id').notNull(),
  userId: uuid('user_id').notNull(),
  status: text('status').$type<CourseEnrollmentStatus>().notNull().default('active'),
  /** The paid order that granted it (paid courses). */
  orderId: uuid('order_id'),
  enrolledAt: timestamp('enrolled_at', { withTimezone: true }).notNull().defaultNow(),
  completedAt: timestamp('completed_at', { withTimezone: true }),
  lastAccessedAt: timestamp('last_accessed_at', { withTimezone: true }).notNull().defaultNow(),
});

export const lessonCompletions = pgTable(
  'lesson_completions',
  {
    enrollmentId: uuid('enrollment_id').notNull(),
    lessonId: uuid('lesson_id').notNull(),
    completedAt: timestamp('completed_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.enrollmentId, t.lessonId] })],
);

export const ACCESS_TYPES = ['free', 'paid', 'members_only'] as const;
export type AccessType = (typeof ACCESS_TYPES)[number];
export type CourseEnrollmentStatus = 'active' | 'completed';
export type Course = typeof courses.$inferSelect;
export type CourseModule = typeof courseModules.$inferSelect;
export type Lesson = typeof courseLessons.$inferSelect;
export type CourseEnrollment = typeof courseEnrollments.$inferSelect;
