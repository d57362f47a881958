import { bigint, integer, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** What an upload is for (the multipart field `kind`). */
export const MEDIA_KINDS = ['avatar', 'post_image', 'lesson_video'] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];

export const MEDIA_STATUSES = ['processing', 'ready', 'failed'] as const;
export type MediaStatus = (typeof MEDIA_STATUSES)[number];

/** One upload (migration 0019). Written once every variant is stored. */
export const media = pgTable('media', {
  id: uuid('id').primaryKey().defaultRandom(),
  kind: text('kind').$type<MediaKind>().notNull(),
  ownerId: uuid('owner_id'),
  /** The tribe whose content it is; null for avatars and tribe-less post images. */
  communityId: uuid('community_id'),
  /** The original's type, sniffed from its bytes. */
  contentType: text('content_type').notNull(),
  sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
  width: integer('width'),
  height: integer('height'),
  status: text('status').$type<MediaStatus>().notNull().default('ready'),
  failureReason: text('failure_reason'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});
export type Media = typeof media.$inferSelect;

/** A stored file of a media: `original`, `image`, `thumb` (and what the video work adds). */
export const mediaVariants = pgTable(
  'media_variants',
  {
    mediaId: uuid('media_id').notNull(),
    name: text('name').notNull(),
    storageKey: text('storage_key').notNull(),
    contentType: text('content_type').notNull(),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
    /** SHA-256 of the bytes, hex. */
    etag: text('etag').notNull(),
    width: integer('width'),
    height: integer('height'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.mediaId, t.name] })],
);
export type MediaVariant = typeof mediaVariants.$inferSelect;
