import { pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** The reaction kinds, in the order of the GraphQL enum `ReactionKind` (and of `Reactions.counts`). */
export const REACTION_KINDS = ['LIKE', 'LOVE', 'LAUGH', 'CELEBRATE', 'INSIGHTFUL', 'CURIOUS'] as const;
export type ReactionKind = (typeof REACTION_KINDS)[number];

/** One reaction per user per target: a post or a comment (exactly one of `postId`, `commentId`). */
export const reactions = pgTable('reactions', {
  id: uuid('id').primaryKey().defaultRandom(),
  communityId: uuid('community_id').notNull(),
  userId: uuid('user_id').notNull(),
  postId: uuid('post_id'),
  commentId: uuid('comment_id'),
  kind: text('kind').$type<ReactionKind>().notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});
