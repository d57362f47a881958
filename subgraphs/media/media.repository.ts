import { and, eq, inArray } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import { media, mediaVariants, type Media, type MediaVariant } from './media.tables.js';

/** Writes a media and its stored variants together (one transaction: the caller's `tx`). */
export async function insertMedia(tx: Executor, row: typeof media.$inferInsert, variants: Array<Omit<typeof mediaVariants.$inferInsert, 'mediaId'>>): Promise<Media> {
  const [inserted] = await tx.insert(media).values(row).returning();
  if (variants.length) await tx.insert(mediaVariants).values(variants.map((v) => ({ ...v, mediaId: inserted.id })));
  return inserted;
}

export async function findMedia(db: Executor, id: string): Promise<Media | undefined> {
  const [row] = await db.select().from(media).where(eq(media.id, id));
  return row;
}

export async function findMediaByIds(db: Executor, ids: readonly string[]): Promise<Media[]> {
  if (ids.length === 0) return [];
  return db.select().from(media).where(inArray(media.id, [...ids]));
}

/** A media with one of its variants (null when either is missing), in one statement. */
export async function findVariant(db: Executor, id: string, name: string): Promise<{ media: Media; variant: MediaVariant } | null> {
  const [row] = await db
    .select({ media, variant: mediaVariants })
    .from(mediaVariants)
    .innerJoin(media, eq(media.id, mediaVariants.mediaId))
    .where(and(eq(mediaVariants.mediaId, id), eq(mediaVariants.name, name)));
  return row ?? null;
}

export async function variantsOf(db: Executor, id: string): Promise<MediaVariant[]> {
  return db.select().from(mediaVariants).where(eq(mediaVariants.mediaId, id));
}
