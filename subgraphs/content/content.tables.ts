import { pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

export const posts = pgTable('posts', {
  id: uuid('id').primaryKey().defaultRandom(),
  communityId: uuid('community_id').notNull(),
  authorId: uuid('author_id'),
  body: text('body').notNull(),
  mediaUrls: text('media_urls').array().notNull().default([]),
  visibility: text('visibility').$type<Visibility>().notNull().default('public'),
  status: text('status').$type<PostStatus>().notNull().default('published'),
  pinnedAt: timestamp('pinned_at', { withTimezone: true }),
  publishedAt: timestamp('published_at', { withTimezone: true }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export const comments = pgTable('comments', {
  id: uuid('id').primaryKey().defaultRandom(),
  postId: uuid('post_id').notNull(),
  communityId: uuid('community_id').notNull(),
  authorId: uuid('author_id'),
  parentId: uuid('parent_id'),
  body: text('body').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

export const VISIBILITIES = ['public', 'members', 'paid'] as const;
export type Visibility = (typeof VISIBILITIES)[number];
export const POST_STATUSES = ['published', 'draft'] as const;
export type PostStatus = (typeof POST_STATUSES)[number];
export type Post = typeof posts.$inferSelect;
export type Comment = typeof comments.$inferSelect;
