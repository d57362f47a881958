import { bigint, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** A conversation of 2 to 20 users (migration 0011). `pairKey` is set on 1:1 conversations only: `<id>:<id>`, sorted. */
export const conversations = pgTable('conversations', {
  id: uuid('id').primaryKey().defaultRandom(),
  pairKey: text('pair_key'),
  createdBy: uuid('created_by'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  /** The seq of the latest message (0 before the first). */
  lastSeq: bigint('last_seq', { mode: 'number' }).notNull().default(0),
  lastMessageId: uuid('last_message_id'),
  /** The latest message's time, else the creation's: orders `conversations`. */
  lastMessageAt: timestamp('last_message_at', { withTimezone: true }).notNull().defaultNow(),
});

/** A user in a conversation; `leftAt` once they left. `lastReadSeq`: the latest message they have read. */
export const conversationParticipants = pgTable(
  'conversation_participants',
  {
    conversationId: uuid('conversation_id').notNull(),
    userId: uuid('user_id').notNull(),
    joinedAt: timestamp('joined_at', { withTimezone: true }).notNull().defaultNow(),
    leftAt: timestamp('left_at', { withTimezone: true }),
    lastReadSeq: bigint('last_read_seq', { mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.conversationId, t.userId] })],
);

/** A message; a deleted one is a tombstone (`body` null, `deletedAt` set). `seq` numbers it in its conversation. */
export const directMessages = pgTable('direct_messages', {
  id: uuid('id').primaryKey().defaultRandom(),
  conversationId: uuid('conversation_id').notNull(),
  seq: bigint('seq', { mode: 'number' }).notNull(),
  authorId: uuid('author_id'),
  body: text('body'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  editedAt: timestamp('edited_at', { withTimezone: true }),
  deletedAt: timestamp('deleted_at', { withTimezone: true }),
});

/** `blockedId` may not start a conversation with, or message, `blockerId`; their 1:1 takes messages from neither. */
export const userBlocks = pgTable(
  'user_blocks',
  {
    blockerId: uuid('blocker_id').notNull(),
    blockedId: uuid('blocked_id').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.blockerId, t.blockedId] })],
);

export type Conversation = typeof conversations.$inferSelect;
export type Message = typeof directMessages.$inferSelect;
export type Participant = typeof conversationParticipants.$inferSelect;
