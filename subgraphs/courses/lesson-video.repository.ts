import { eq } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import { courseLessons, courses, type AccessType, type Lesson } from './courses.tables.js';

/** Sets (or clears) a lesson's video; the updated lesson, or undefined when it is gone. */
export async function setLessonVideo(db: Executor, lessonId: string, mediaId: string | null): Promise<Lesson | undefined> {
  const [row] = await db.update(courseLessons).set({ videoMediaId: mediaId }).where(eq(courseLessons.id, lessonId)).returning();
  return row;
}

/** The courses whose lessons show media `mediaId` as their video, with their access types (one statement). */
export async function coursesShowingVideo(db: Executor, mediaId: string): Promise<Array<{ courseId: string; accessType: AccessType }>> {
  return db
    .selectDistinct({ courseId: courses.id, accessType: courses.accessType })
    .from(courseLessons)
    .innerJoin(courses, eq(courses.id, courseLessons.courseId))
    .where(eq(courseLessons.videoMediaId, mediaId));
}
