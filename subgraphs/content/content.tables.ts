import { doublePrecision, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

export const posts = pgTable('posts', {
  id: uuid('id').primaryKey().defaultRandom(),
  communityId: uuid('community_id').notNull(),
  authorId: uuid('author_id'),
  body: text('body').notNull(),
  mediaUrls: text('media_urls').array().notNull().default([]),
  visibility: text('visibility').$type<Visibility>().notNull().default('public'),
  /** `pending_review` while automod holds the post (automod.service.ts); authors set only `POST_STATUSES`. */
  status: text('status').$type<PostStatus | HeldStatus>().notNull().default('published'),
  pinnedAt: timestamp('pinned_at', { withTimezone: true }),
  publishedAt: timestamp('published_at', { withTimezone: true }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  reactionCount: integer('reaction_count').notNull().default(0),
  commentCount: integer('comment_count').notNull().default(0),
  /** Orders TOP; see HOT_SCORE in content.repository.ts. */
  hotScore: doublePrecision('hot_score').notNull().default(0),
  /** Orders ACTIVE: the latest comment, else the publication. */
  activeAt: timestamp('active_at', { withTimezone: true }),
  /** Why automod holds the post (`blocked_word`, `blocked_domain`, `approval_required`); null once published. */
  heldReason: text('held_reason'),
  /** Set when moderators removed the post (migration 0013): hidden from all but moderators and above and its author. */
  removedAt: timestamp('removed_at', { withTimezone: true }),
  removedBy: uuid('removed_by'),
  removedReason: text('removed_reason'),
});

export const comments = pgTable('comments', {
  id: uuid('id').primaryKey().defaultRandom(),
  postId: uuid('post_id').notNull(),
  communityId: uuid('community_id').notNull(),
  authorId: uuid('author_id'),
  parentId: uuid('parent_id'),
  /** Null once the comment is a tombstone (deleted while it had replies). */
  body: text('body'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }),
  deletedAt: timestamp('deleted_at', { withTimezone: true }),
  /** `pending_review` while automod holds the comment: its author and the tribe's moderators see it, nobody else. */
  status: text('status').$type<'published' | HeldStatus>().notNull().default('published'),
  heldReason: text('held_reason'),
  reactionCount: integer('reaction_count').notNull().default(0),
  /** Set when moderators removed the comment (migration 0013): hidden from all but moderators and above and its author. */
  removedAt: timestamp('removed_at', { withTimezone: true }),
  removedBy: uuid('removed_by'),
  removedReason: text('removed_reason'),
});

export const VISIBILITIES = ['public', 'members', 'paid'] as const;
export type Visibility = (typeof VISIBILITIES)[number];
export const POST_STATUSES = ['published', 'draft'] as const;
export type PostStatus = (typeof POST_STATUSES)[number];
/** The status of a post or comment automod holds for review (migration 0015). */
export type HeldStatus = 'pending_review';
export type Post = typeof posts.$inferSelect;
export type Comment = typeof comments.$inferSelect;
