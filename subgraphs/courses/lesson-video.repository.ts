import { eq } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import { courseLessons, type Lesson } from './courses.tables.js';

/** Sets (or clears) a lesson's video; the updated lesson, or undefined when it is gone. */
export async function setLessonVideo(db: Executor, lessonId: string, mediaId: string | null): Promise<Lesson | undefined> {
  const [row] = await db.update(courseLessons).set({ videoMediaId: mediaId }).where(eq(courseLessons.id, lessonId)).returning();
  return row;
}
