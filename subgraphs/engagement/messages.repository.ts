// Direct messages and blocks: the only SQL of conversations, participants, messages and blocks (migration 0011).
import { and, desc, eq, gt, inArray, isNotNull, isNull, lt, ne, or, sql } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import { conversationParticipants as participants, conversations, directMessages as messages, userBlocks, type Conversation, type Message } from './messages.tables.js';

const anyOf = (ids: readonly string[]) => sql`any(${sql.param([...ids])}::uuid[])`;

// ---- conversations ----

/**
 * Inserts the 1:1 conversation of `pairKey` unless it exists, and returns it either way, locked until the transaction
 * ends: the unique index on `pair_key` arbitrates concurrent starts, so two calls for one pair always get the same row.
 */
export async function upsertDirect(tx: Executor, pairKey: string, createdBy: string, at: Date): Promise<Conversation> {
  const [inserted] = await tx
    .insert(conversations)
    .values({ pairKey, createdBy, createdAt: at, lastMessageAt: at })
    .onConflictDoNothing({ target: conversations.pairKey, where: isNotNull(conversations.pairKey) })
    .returning();
  if (inserted) return inserted;
  // Locked, so that concurrent starts of one pair then change its participants one after the other (no deadlock).
  const [existing] = await tx.select().from(conversations).where(eq(conversations.pairKey, pairKey)).limit(1).for('update');
  return existing;
}

/** Inserts a group conversation. */
export async function insertGroup(tx: Executor, createdBy: string, at: Date): Promise<Conversation> {
  const [row] = await tx.insert(conversations).values({ createdBy, createdAt: at, lastMessageAt: at }).returning();
  return row;
}

/** The 1:1 conversation of a pair, if any. */
export async function findDirect(db: Executor, pairKey: string): Promise<Conversation | undefined> {
  const [row] = await db.select().from(conversations).where(eq(conversations.pairKey, pairKey)).limit(1);
  return row;
}

/** The conversations among `ids` that `userId` currently takes part in, in one statement. */
export async function conversationsOfViewer(db: Executor, userId: string, ids: readonly string[]): Promise<Conversation[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .select({ c: conversations })
    .from(conversations)
    .innerJoin(participants, and(eq(participants.conversationId, conversations.id), eq(participants.userId, userId), isNull(participants.leftAt)))
    .where(sql`${conversations.id} = ${anyOf(ids)}`);
  return rows.map((r) => r.c);
}

/**
 * A page of the conversations `userId` currently takes part in, latest message first (`last_message_at desc, id
 * desc`), after the keyset position `after`; `limit` rows.
 */
export async function conversationsPage(db: Executor, userId: string, after: readonly [string, string] | null, limit: number): Promise<Conversation[]> {
  const keyset = after ? sql`(${conversations.lastMessageAt}, ${conversations.id}) < (${after[0]}::timestamptz, ${after[1]}::uuid)` : undefined;
  const rows = await db
    .select({ c: conversations })
    .from(participants)
    .innerJoin(conversations, eq(conversations.id, participants.conversationId))
    .where(and(eq(participants.userId, userId), isNull(participants.leftAt), keyset))
    .orderBy(desc(conversations.lastMessageAt), desc(conversations.id))
    .limit(limit);
  return rows.map((r) => r.c);
}

/**
 * Numbers the next message of a conversation and makes it the latest (`last_seq`, `last_message_id`,
 * `last_message_at`); the row lock serialises the sends of one conversation. Returns the new seq.
 */
export async function advance(tx: Executor, conversationId: string, messageId: string, at: Date): Promise<number> {
  const [row] = await tx
    .update(conversations)
    .set({ lastSeq: sql`${conversations.lastSeq} + 1`, lastMessageId: messageId, lastMessageAt: at })
    .where(eq(conversations.id, conversationId))
    .returning({ seq: conversations.lastSeq });
  return Number(row.seq);
}

// ---- participants ----

/** Adds users to a conversation; who had left comes back when `rejoin` is set (else stays out). */
export async function addParticipants(tx: Executor, conversationId: string, userIds: readonly string[], at: Date, rejoin: boolean): Promise<void> {
  if (userIds.length === 0) return;
  const insert = tx.insert(participants).values(userIds.map((userId) => ({ conversationId, userId, joinedAt: at })));
  if (rejoin) await insert.onConflictDoUpdate({ target: [participants.conversationId, participants.userId], set: { leftAt: null } });
  else await insert.onConflictDoNothing();
}

/** Brings back users of a conversation who had left it; returns who came back. */
export async function rejoin(tx: Executor, conversationId: string, userIds: readonly string[]): Promise<string[]> {
  if (userIds.length === 0) return [];
  const rows = await tx
    .update(participants)
    .set({ leftAt: null })
    .where(and(eq(participants.conversationId, conversationId), inArray(participants.userId, [...userIds]), isNotNull(participants.leftAt)))
    .returning({ userId: participants.userId });
  return rows.map((r) => r.userId);
}

/** The current participants of each conversation, in join order, in one statement. */
export async function currentParticipants(db: Executor, conversationIds: readonly string[]): Promise<Array<{ conversationId: string; userId: string }>> {
  if (conversationIds.length === 0) return [];
  return db
    .select({ conversationId: participants.conversationId, userId: participants.userId })
    .from(participants)
    .where(and(sql`${participants.conversationId} = ${anyOf(conversationIds)}`, isNull(participants.leftAt)))
    .orderBy(participants.conversationId, participants.joinedAt, participants.userId);
}

/** Moves a participant's read mark forward to `seq` (never back); true when it moved. */
export async function markRead(tx: Executor, conversationId: string, userId: string, seq: number): Promise<boolean> {
  const rows = await tx
    .update(participants)
    .set({ lastReadSeq: seq })
    .where(and(eq(participants.conversationId, conversationId), eq(participants.userId, userId), lt(participants.lastReadSeq, seq)))
    .returning({ userId: participants.userId });
  return rows.length > 0;
}

/** Marks a current participant as gone, with everything so far read; true when they were there. */
export async function leave(tx: Executor, conversationId: string, userId: string, at: Date): Promise<boolean> {
  const rows = await tx
    .update(participants)
    .set({ leftAt: at, lastReadSeq: sql`(select ${conversations.lastSeq} from ${conversations} where ${conversations.id} = ${conversationId})` })
    .where(and(eq(participants.conversationId, conversationId), eq(participants.userId, userId), isNull(participants.leftAt)))
    .returning({ userId: participants.userId });
  return rows.length > 0;
}

// ---- unread ----

/** A message of the participant row's conversation that `userId` has not read: after their read mark, not deleted, not theirs. */
const unreadBy = (userId: string) =>
  and(
    eq(messages.conversationId, participants.conversationId),
    gt(messages.seq, participants.lastReadSeq),
    isNull(messages.deletedAt),
    or(isNull(messages.authorId), ne(messages.authorId, userId)),
  );

/**
 * For each of the conversations, how many messages of others after `userId`'s read mark are not deleted, in one
 * statement (the `(conversation_id, seq)` index bounds each count to the unread range).
 */
export async function unreadCounts(db: Executor, userId: string, conversationIds: readonly string[]): Promise<Map<string, number>> {
  if (conversationIds.length === 0) return new Map();
  const rows = await db
    .select({ conversationId: participants.conversationId, n: sql<number>`count(${messages.id})::int` })
    .from(participants)
    .leftJoin(
      messages,
      unreadBy(userId),
    )
    .where(and(eq(participants.userId, userId), sql`${participants.conversationId} = ${anyOf(conversationIds)}`))
    .groupBy(participants.conversationId);
  return new Map(rows.map((r) => [r.conversationId, Number(r.n)]));
}

/** Unread messages (as `unreadCounts` counts them) over every conversation `userId` currently takes part in. */
export async function totalUnread(db: Executor, userId: string): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(${messages.id})::int` })
    .from(participants)
    .innerJoin(
      messages,
      unreadBy(userId),
    )
    .where(and(eq(participants.userId, userId), isNull(participants.leftAt)));
  return Number(row?.n ?? 0);
}

// ---- messages ----

/** Inserts a message with the id and seq the caller chose. */
export async function insertMessage(tx: Executor, values: { id: string; conversationId: string; seq: number; authorId: string; body: string; createdAt: Date }): Promise<Message> {
  const [row] = await tx.insert(messages).values(values).returning();
  return row;
}

/** Messages by id (any conversation: the caller checks who may see them). */
export async function messagesByIds(db: Executor, ids: readonly string[]): Promise<Message[]> {
  if (ids.length === 0) return [];
  return db.select().from(messages).where(sql`${messages.id} = ${anyOf(ids)}`);
}

/** A page of a conversation's messages, newest first, before seq `beforeSeq` (all when null); `limit` rows. */
export async function messagesPage(db: Executor, conversationId: string, beforeSeq: number | null, limit: number): Promise<Message[]> {
  return db
    .select()
    .from(messages)
    .where(and(eq(messages.conversationId, conversationId), beforeSeq === null ? undefined : lt(messages.seq, beforeSeq)))
    .orderBy(desc(messages.seq))
    .limit(limit);
}

/** Replaces the body of a live message; undefined when it is a tombstone (deleted meanwhile). */
export async function editBody(tx: Executor, id: string, body: string, at: Date): Promise<Message | undefined> {
  const [row] = await tx
    .update(messages)
    .set({ body, editedAt: at })
    .where(and(eq(messages.id, id), isNull(messages.deletedAt)))
    .returning();
  return row;
}

/** Turns a live message into a tombstone; undefined when it already was one. */
export async function tombstone(tx: Executor, id: string, at: Date): Promise<Message | undefined> {
  const [row] = await tx
    .update(messages)
    .set({ body: null, deletedAt: at })
    .where(and(eq(messages.id, id), isNull(messages.deletedAt)))
    .returning();
  return row;
}

// ---- the per-sender rate limit ----

/**
 * Serialises the sends of one sender until the transaction ends (a transaction-scoped advisory lock keyed by the
 * sender), so that counting then inserting cannot let concurrent sends past the limit, in any process.
 */
export async function lockSender(tx: Executor, senderId: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`direct_messages:${senderId}`}, 0))`);
}

/**
 * For each time of `since`: how many messages the sender created after it, and the oldest of them, in one statement
 * over the `(author_id, created_at)` index.
 */
export async function sentSince(tx: Executor, senderId: string, since: readonly Date[]): Promise<Array<{ count: number; oldest: Date | null }>> {
  if (since.length === 0) return [];
  const earliest = new Date(Math.min(...since.map((d) => d.getTime())));
  const columns = since.flatMap((d, i) => [
    sql`count(*) filter (where ${messages.createdAt} > ${d.toISOString()}::timestamptz)::int as ${sql.raw(`c${i}`)}`,
    sql`min(${messages.createdAt}) filter (where ${messages.createdAt} > ${d.toISOString()}::timestamptz) as ${sql.raw(`o${i}`)}`,
  ]);
  const result = (await tx.execute(
    sql`select ${sql.join(columns, sql`, `)} from ${messages} where ${messages.authorId} = ${senderId} and ${messages.createdAt} > ${earliest.toISOString()}::timestamptz`,
  )) as unknown as { rows: Array<Record<string, unknown>> };
  const row = result.rows[0] ?? {};
  return since.map((_, i) => {
    const oldest = row[`o${i}`];
    return { count: Number(row[`c${i}`] ?? 0), oldest: oldest === null || oldest === undefined ? null : new Date(oldest as string) };
  });
}

// ---- blocks ----

/** Records that `blockerId` blocks `blockedId`; true when the block is new. */
export async function insertBlock(tx: Executor, blockerId: string, blockedId: string, at: Date): Promise<boolean> {
  const rows = await tx.insert(userBlocks).values({ blockerId, blockedId, createdAt: at }).onConflictDoNothing().returning({ b: userBlocks.blockedId });
  return rows.length > 0;
}

/** Removes a block; true when there was one. */
export async function deleteBlock(tx: Executor, blockerId: string, blockedId: string): Promise<boolean> {
  const rows = await tx
    .delete(userBlocks)
    .where(and(eq(userBlocks.blockerId, blockerId), eq(userBlocks.blockedId, blockedId)))
    .returning({ b: userBlocks.blockedId });
  return rows.length > 0;
}

/** Which of `others` have a block with `userId`, in either direction, in one statement. */
export async function blockedAmong(db: Executor, userId: string, others: readonly string[]): Promise<string[]> {
  if (others.length === 0) return [];
  const rows = await db
    .select({ blockerId: userBlocks.blockerId, blockedId: userBlocks.blockedId })
    .from(userBlocks)
    .where(
      or(
        and(eq(userBlocks.blockerId, userId), sql`${userBlocks.blockedId} = ${anyOf(others)}`),
        and(eq(userBlocks.blockedId, userId), sql`${userBlocks.blockerId} = ${anyOf(others)}`),
      ),
    );
  return [...new Set(rows.map((r) => (r.blockerId === userId ? r.blockedId : r.blockerId)))];
}

/** Which of `userIds` block `senderId` (a group message of the sender notifies them of nothing), in one statement. */
export async function blockersOf(db: Executor, senderId: string, userIds: readonly string[]): Promise<string[]> {
  if (userIds.length === 0) return [];
  const rows = await db
    .select({ blockerId: userBlocks.blockerId })
    .from(userBlocks)
    .where(and(eq(userBlocks.blockedId, senderId), sql`${userBlocks.blockerId} = ${anyOf(userIds)}`));
  return rows.map((r) => r.blockerId);
}
