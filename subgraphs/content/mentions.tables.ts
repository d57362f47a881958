import { pgTable, timestamp, uuid } from 'drizzle-orm/pg-core';

/** Mentions resolved at write time (migration 0008): a member of the tribe named as `@username` in a post or a comment. */
export const mentions = pgTable('mentions', {
  communityId: uuid('community_id').notNull(),
  /** Exactly one of postId and commentId is set. */
  postId: uuid('post_id'),
  commentId: uuid('comment_id'),
  userId: uuid('user_id').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/** What a mention sits in: a post's text or a comment's text. */
export type MentionTarget = { postId: string; commentId?: undefined } | { commentId: string; postId?: undefined };
