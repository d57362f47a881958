// Direct messages and blocks: conversations of 2 to 20 users who share a tribe, plain-text messages with tombstones,
// read marks and unread counts, leaving, blocks, and the per-sender rate limit. The rules are documented in
// docs/notifications-and-messages.md ("Direct messages").
import { randomUUID } from 'node:crypto';
import DataLoader from 'dataloader';
import { z } from 'zod';
import type { Executor } from '../../db/src/index.js';
import {
  type Connection,
  type CursorKey,
  type RequestContext,
  forbidden,
  invalid,
  isForeignKeyViolation,
  isNumberAndId,
  isTimeAndId,
  isUuid,
  notFound,
  pageRequest,
  parseInput,
  rateLimited,
  requireUser,
  text,
  toConnection,
  viewerLoader,
  idLoader,
  countLoader,
  requestScoped,
} from '../kernel/index.js';
import { shareATribe } from '../members/index.js';
import { publish, publishAll, type RealtimeSignal } from '../realtime/index.js';
import * as repo from './messages.repository.js';
import { markConversationNotificationsRead, notify, removeConversationNotifications } from './notifications.service.js';
import type { Conversation, Message } from './messages.tables.js';

export type { Conversation, Message } from './messages.tables.js';

/** A conversation has 2 to 20 users, the one who starts it included. */
export const MAX_PARTICIPANTS = 20;
/** A message body: 1 to 4,000 characters (code points, the kernel's text rule), not only white space. */
export const MAX_MESSAGE_CHARS = 4_000;
/**
 * The per-sender rate limit: at most `max` messages in any `windowSeconds` (a burst limit and an hourly one), counted
 * in the database (so it holds across processes); a refused send is `RATE_LIMITED` with `retryAfterSeconds`.
 */
export const MESSAGE_RATE_LIMITS: ReadonlyArray<{ windowSeconds: number; max: number }> = Object.freeze([
  { windowSeconds: 10, max: 20 },
  { windowSeconds: 3_600, max: 500 },
]);

const bodyText = z.object({
  body: text({ max: MAX_MESSAGE_CHARS, min: 1, required: 'a message needs text', tooShort: 'a message needs text' }).refine((b) => b.trim().length > 0, 'a message needs text'),
});
const userIdList = z.object({ userIds: z.array(z.string().refine(isUuid, 'must be user ids')).max(100, 'too many users') });

/** The key of a 1:1 conversation: both user ids, sorted. */
const pairKeyOf = (a: string, b: string) => (a < b ? `${a}:${b}` : `${b}:${a}`);
/** The other user of a 1:1 conversation. */
const otherOf = (c: Conversation, me: string): string | null => {
  if (!c.pairKey) return null;
  const [a, b] = c.pairKey.split(':');
  return a === me ? b : a;
};

// ---- loaders: what the viewer may see, batched per request ----

/** The conversations the viewer currently takes part in, by id (null for any other), one statement per batch. */
const conversationLoader = (ctx: RequestContext) =>
  viewerLoader<Conversation>(ctx, 'engagement.conversation', (userId, ids) => repo.conversationsOfViewer(ctx.app.database.db, userId, ids.filter(isUuid)), (c) => c.id);

/** Messages by id, whoever may see them (callers check the conversation). */
const messageLoader = (ctx: RequestContext) => idLoader<Message>(ctx, 'engagement.message', (ids) => repo.messagesByIds(ctx.app.database.db, ids));

/** The current participants of conversations, in join order, one statement per batch. */
const participantsLoader = (ctx: RequestContext) =>
  requestScoped(ctx, 'engagement.participants', () =>
    new DataLoader<string, string[]>(async (ids) => {
      const rows = await repo.currentParticipants(ctx.app.database.db, ids);
      const byConversation = new Map<string, string[]>();
      for (const r of rows) {
        const list = byConversation.get(r.conversationId);
        if (list) list.push(r.userId);
        else byConversation.set(r.conversationId, [r.userId]);
      }
      return ids.map((id) => byConversation.get(id) ?? []);
    }),
  );

const unreadLoader = (ctx: RequestContext) =>
  countLoader(ctx, 'engagement.unread', (ids) => (ctx.caller ? repo.unreadCounts(ctx.app.database.db, ctx.caller.userId, ids.filter(isUuid)) : Promise.resolve(new Map())));

/**
 * The conversation `id` if the caller currently takes part in it, else null (also for anonymous callers and ids
 * that are not UUIDs). Batched per request: for a live check after a change, call it with a fresh context.
 */
export async function conversationForViewer(ctx: RequestContext, id: string): Promise<Conversation | null> {
  if (!ctx.caller || !isUuid(id)) return null;
  return conversationLoader(ctx).load(id);
}

/** The message `id` if the caller currently takes part in its conversation, else null (as `conversationForViewer`). */
export async function messageForViewer(ctx: RequestContext, id: string): Promise<Message | null> {
  if (!ctx.caller || !isUuid(id)) return null;
  const message = await messageLoader(ctx).load(id);
  if (!message || !(await conversationForViewer(ctx, message.conversationId))) return null;
  return message;
}

/**
 * How many messages the caller has not read, over every conversation they currently take part in: messages of
 * others after their read mark, deleted ones excepted (the sum of `Conversation.unreadCount` over their list).
 * 0 for anonymous callers. One statement, never cached.
 */
export async function unreadMessageCount(ctx: RequestContext): Promise<number> {
  if (!ctx.caller) return 0;
  return repo.totalUnread(ctx.app.database.db, ctx.caller.userId);
}

/** The current participants' user ids of a conversation the viewer sees, batched per request. */
export function participantsOf(ctx: RequestContext, conversation: Conversation): Promise<string[]> {
  return participantsLoader(ctx).load(conversation.id);
}

/** The latest message of a conversation the viewer sees (a tombstone when deleted), or null before the first. */
export async function lastMessageOf(ctx: RequestContext, conversation: Conversation): Promise<Message | null> {
  return conversation.lastMessageId ? messageLoader(ctx).load(conversation.lastMessageId) : null;
}

/** The viewer's unread messages in a conversation they see, batched per request. */
export function unreadCountOf(ctx: RequestContext, conversation: Conversation): Promise<number> {
  return unreadLoader(ctx).load(conversation.id);
}

/** The conversation of a message the viewer saw (so they take part in it). */
export async function conversationOfMessage(ctx: RequestContext, message: Message): Promise<Conversation | null> {
  return conversationForViewer(ctx, message.conversationId);
}

/** The conversation as the caller may act on it (a current participant), else `not_found`. */
async function requireConversation(ctx: RequestContext, id: string): Promise<Conversation> {
  const conversation = await conversationForViewer(ctx, id);
  if (!conversation) throw notFound('Conversation');
  return conversation;
}

/** The message as the caller may act on it (a current participant of its conversation), else `not_found`. */
async function requireMessage(ctx: RequestContext, id: string): Promise<Message> {
  const message = await messageForViewer(ctx, id);
  if (!message) throw notFound('Message');
  return message;
}

/** Refuses (`blocked`) when the caller and the other side of a 1:1 conversation blocked one another. */
async function requireNotBlocked(ctx: RequestContext, me: string, others: readonly string[]): Promise<void> {
  if ((await repo.blockedAmong(ctx.app.database.db, me, others)).length > 0) {
    throw forbidden('You cannot message this user.', 'blocked');
  }
}

/** Forgets what this request loaded about a conversation after it changed. */
function forget(ctx: RequestContext, conversationId: string): void {
  conversationLoader(ctx).clear(conversationId);
  unreadLoader(ctx).clear(conversationId);
}

// ---- queries ----

/** The caller's conversations, latest message first (Relay cursors of the caller's own list). */
export async function listConversations(ctx: RequestContext, args: { first?: number | null; after?: string | null }): Promise<Connection<Conversation>> {
  const me = requireUser(ctx);
  const list = `conversations:${me}`;
  const { limit, after } = pageRequest(ctx, list, args, isTimeAndId);
  const rows = await repo.conversationsPage(ctx.app.database.db, me, after, limit + 1);
  const loader = conversationLoader(ctx);
  for (const c of rows) loader.prime(c.id, c);
  return toConnection(ctx, list, rows, limit, (c) => [c.lastMessageAt.toISOString(), c.id]);
}

const isSeqAndId = (key: CursorKey): key is [number, string] => isNumberAndId(key) && Number.isInteger(key[0]) && key[0] > 0;

/** Messages of a conversation of the caller, newest first; `not_found` unless the caller is a current participant. */
export async function listMessages(
  ctx: RequestContext,
  conversationId: string,
  args: { first?: number | null; after?: string | null },
): Promise<Connection<Message>> {
  requireUser(ctx);
  const conversation = await requireConversation(ctx, conversationId);
  const list = `messages:${conversation.id}`;
  const { limit, after } = pageRequest(ctx, list, args, isSeqAndId);
  const rows = await repo.messagesPage(ctx.app.database.db, conversation.id, after ? after[0] : null, limit + 1);
  const loader = messageLoader(ctx);
  for (const m of rows) loader.prime(m.id, m);
  return toConnection(ctx, list, rows, limit, (m) => [m.seq, m.id]);
}

/** `conversation(id)`: signed-in callers only; null unless the caller is a current participant. */
export async function getConversation(ctx: RequestContext, id: string): Promise<Conversation | null> {
  requireUser(ctx);
  return conversationForViewer(ctx, id);
}

/** `message(id)`: signed-in callers only; null unless the caller is a current participant of its conversation. */
export async function getMessage(ctx: RequestContext, id: string): Promise<Message | null> {
  requireUser(ctx);
  return messageForViewer(ctx, id);
}

// ---- writes ----

/** Announces a change of a conversation (and of some users' unread counts) to live subscribers, in one statement. */
async function announce(tx: Executor, conversationId: string, messageId: string | null, unreadOf: readonly string[]): Promise<void> {
  const signals: RealtimeSignal[] = [];
  if (messageId) signals.push({ topic: 'message', conversationId, messageId });
  signals.push({ topic: 'conversation', conversationId });
  for (const userId of unreadOf) signals.push({ topic: 'unread', userId });
  await publishAll(tx, signals);
}

/**
 * Starts a conversation of the caller and `userIds` (1 to 19 other users after removing duplicates and the caller):
 * every one of them and the caller must be members of one same tribe (`no_shared_tribe` otherwise, also for ids that
 * name nobody), one of those tribes must not have the caller muted (`member_muted`), and no block may stand between
 * the caller and any of them (`blocked`). With one other user it is
 * their 1:1 conversation: the existing one when there is one (the caller rejoins it if they had left).
 */
export async function startConversation(ctx: RequestContext, raw: { userIds: readonly string[] }): Promise<Conversation> {
  const me = requireUser(ctx);
  const input = parseInput(userIdList, raw);
  const others = [...new Set(input.userIds.map((id) => id.toLowerCase()))].filter((id) => id !== me);
  if (others.length === 0) throw invalid('invalid_participants', 'userIds: name at least one user other than you.');
  if (others.length > MAX_PARTICIPANTS - 1) {
    throw invalid('too_many_participants', `userIds: a conversation has at most ${MAX_PARTICIPANTS} users, you included.`);
  }
  const db = ctx.app.database.db;
  if (!(await shareATribe(db, [me, ...others]))) {
    throw invalid('no_shared_tribe', 'userIds: everyone in a conversation must be a member of one same tribe as you.');
  }
  // Moderation: a tribe where the caller is muted does not let them start conversations (docs/moderation.md).
  if (!(await shareATribe(db, [me, ...others], { userId: me, at: ctx.app.clock() }))) {
    throw forbidden('You are muted in every tribe you share with them: you cannot start a conversation now.', 'member_muted');
  }
  await requireNotBlocked(ctx, me, others);
  const now = ctx.app.clock();
  const conversation = await db.transaction(async (tx) => {
    if (others.length === 1) {
      const direct = await repo.upsertDirect(tx, pairKeyOf(me, others[0]), me, now);
      await repo.addParticipants(tx, direct.id, [me], now, true);
      await repo.addParticipants(tx, direct.id, others, now, false);
      await announce(tx, direct.id, null, []);
      return direct;
    }
    const group = await repo.insertGroup(tx, me, now);
    await repo.addParticipants(tx, group.id, [me, ...others], now, false);
    await announce(tx, group.id, null, []);
    return group;
  });
  forget(ctx, conversation.id);
  return conversation;
}

/** Refuses a send past the per-sender limits (`rate_limited`, with the seconds until one more message fits). */
async function requireUnderRateLimit(tx: Executor, senderId: string, now: Date): Promise<void> {
  await repo.lockSender(tx, senderId);
  const since = MESSAGE_RATE_LIMITS.map((l) => new Date(now.getTime() - l.windowSeconds * 1000));
  const sent = await repo.sentSince(tx, senderId, since);
  MESSAGE_RATE_LIMITS.forEach((limit, i) => {
    const { count, oldest } = sent[i];
    if (count < limit.max) return;
    const freeAt = (oldest ?? now).getTime() + limit.windowSeconds * 1000;
    const retryAfterSeconds = Math.max(1, Math.ceil((freeAt - now.getTime()) / 1000));
    throw rateLimited('message_rate_limited', `You sent ${limit.max} messages in ${limit.windowSeconds} seconds: wait ${retryAfterSeconds} s.`, retryAfterSeconds);
  });
}

/**
 * The `message` notification of each recipient of a new message (unread messages of one conversation fold into one
 * notification per recipient: `notify` in notifications.service.ts).
 */
async function notifyRecipients(tx: Executor, message: Message, recipients: readonly string[], at: Date): Promise<void> {
  await notify(tx, {
    kind: 'message',
    recipientIds: recipients,
    actorId: message.authorId,
    subject: { conversationId: message.conversationId },
    data: { messageId: message.id },
    at,
  });
}

/**
 * Sends plain text to a conversation the caller takes part in (`not_found` otherwise): 1 to 4,000 characters, kept
 * as written. A 1:1 conversation refuses it when either side blocked the other (`blocked`), and brings back the other
 * side if they had left. Past the per-sender limits: `rate_limited`, and nothing is written. The message is read by
 * its sender (their read mark moves to it), notifies the other participants and is announced live.
 */
export async function sendMessage(ctx: RequestContext, conversationId: string, rawBody: string): Promise<Message> {
  const me = requireUser(ctx);
  const conversation = await requireConversation(ctx, conversationId);
  const { body } = parseInput(bodyText, { body: rawBody });
  const other = otherOf(conversation, me);
  if (other) await requireNotBlocked(ctx, me, [other]);
  const db = ctx.app.database.db;
  const now = ctx.app.clock();
  const message = await db.transaction(async (tx) => {
    await requireUnderRateLimit(tx, me, now);
    const id = randomUUID();
    const seq = await repo.advance(tx, conversation.id, id, now);
    const created = await repo.insertMessage(tx, { id, conversationId: conversation.id, seq, authorId: me, body, createdAt: now });
    await repo.markRead(tx, conversation.id, me, seq);
    // Writing reads the conversation up to here: the sender's own `message` notification of it is read too.
    await markConversationNotificationsRead(tx, me, conversation.id, now);
    if (other) await repo.rejoin(tx, conversation.id, [other]);
    const recipients = (await repo.currentParticipants(tx, [conversation.id])).map((p) => p.userId).filter((u) => u !== me);
    // In a group, who blocks the sender still reads the message but is not notified of it.
    const blockers = new Set(other ? [] : await repo.blockersOf(tx, me, recipients));
    const notified = recipients.filter((u) => !blockers.has(u));
    await notifyRecipients(tx, created, notified, now);
    await announce(tx, conversation.id, created.id, recipients);
    return created;
  });
  forget(ctx, conversation.id);
  messageLoader(ctx).prime(message.id, message);
  return message;
}

/** The caller's own live message, for a change (`not_found` when unseen or deleted, `forbidden` for another's). */
async function requireOwnLiveMessage(ctx: RequestContext, me: string, id: string): Promise<Message> {
  const message = await requireMessage(ctx, id);
  if (message.deletedAt) throw notFound('Message');
  if (message.authorId !== me) throw forbidden('Only its author can change a message.');
  return message;
}

/**
 * Replaces the text of one of the caller's own messages (same rules as `sendMessage`; a deleted message is
 * `not_found`, another's `forbidden`, a blocked 1:1 `blocked`); sets `editedAt` and announces the change.
 */
export async function editMessage(ctx: RequestContext, id: string, rawBody: string): Promise<Message> {
  const me = requireUser(ctx);
  const message = await requireOwnLiveMessage(ctx, me, id);
  const { body } = parseInput(bodyText, { body: rawBody });
  const conversation = await requireConversation(ctx, message.conversationId);
  const other = otherOf(conversation, me);
  if (other) await requireNotBlocked(ctx, me, [other]);
  const now = ctx.app.clock();
  const edited = await ctx.app.database.db.transaction(async (tx) => {
    const row = await repo.editBody(tx, message.id, body, now);
    if (!row) throw notFound('Message');
    await announce(tx, conversation.id, row.id, []);
    return row;
  });
  messageLoader(ctx).clear(edited.id).prime(edited.id, edited);
  return edited;
}

/**
 * Deletes one of the caller's own messages, leaving a tombstone (body null, `deletedAt` set) in its place: true when
 * deleted now, false when it already was. Another's message is `forbidden`; an unseen one `not_found`.
 */
export async function deleteMessage(ctx: RequestContext, id: string): Promise<boolean> {
  const me = requireUser(ctx);
  const message = await requireMessage(ctx, id);
  if (message.authorId !== me) throw forbidden('Only its author can delete a message.');
  if (message.deletedAt) return false;
  const now = ctx.app.clock();
  const deleted = await ctx.app.database.db.transaction(async (tx) => {
    const row = await repo.tombstone(tx, message.id, now);
    if (!row) return null;
    const others = (await repo.currentParticipants(tx, [message.conversationId])).map((p) => p.userId).filter((u) => u !== me);
    await announce(tx, message.conversationId, row.id, others);
    return row;
  });
  if (!deleted) return false;
  messageLoader(ctx).clear(deleted.id).prime(deleted.id, deleted);
  forget(ctx, message.conversationId);
  return true;
}

/**
 * Moves the caller's read mark in a conversation of theirs up to `upToMessageId` (a message of that conversation,
 * else `not_found`); it never moves back. True when it moved. When nothing of others is left unread after it (read up
 * to the latest message), the caller's `message` notification of the conversation is marked read in the same
 * transaction. One `unread` signal for the caller when either changed.
 */
export async function markConversationRead(ctx: RequestContext, conversationId: string, upToMessageId: string): Promise<boolean> {
  const me = requireUser(ctx);
  const conversation = await requireConversation(ctx, conversationId);
  const message = await messageForViewer(ctx, upToMessageId);
  if (!message || message.conversationId !== conversation.id) throw notFound('Message');
  const now = ctx.app.clock();
  const moved = await ctx.app.database.db.transaction(async (tx) => {
    const changed = await repo.markRead(tx, conversation.id, me, message.seq);
    const left = (await repo.unreadCounts(tx, me, [conversation.id])).get(conversation.id) ?? 0;
    // markConversationNotificationsRead announces the caller's unread count when it marked one.
    const cleared = left === 0 ? await markConversationNotificationsRead(tx, me, conversation.id, now) : 0;
    if (changed && cleared === 0) await publish(tx, { topic: 'unread', userId: me });
    return changed;
  });
  forget(ctx, conversation.id);
  return moved;
}

/**
 * Leaves a conversation of the caller: they stop reading it at once and it leaves their list (with everything read);
 * their notifications of it are deleted in the same transaction.
 * A group is left for good (a new conversation is needed to talk again). A 1:1 conversation stays the pair's one:
 * the other side can still write in it, and a new message (or `startConversation` by the one who left) brings the one
 * who left back, with the history.
 */
export async function leaveConversation(ctx: RequestContext, conversationId: string): Promise<boolean> {
  const me = requireUser(ctx);
  const conversation = await requireConversation(ctx, conversationId);
  const now = ctx.app.clock();
  await ctx.app.database.db.transaction(async (tx) => {
    if (!(await repo.leave(tx, conversation.id, me, now))) throw notFound('Conversation');
    // removeConversationNotifications announces the caller's unread count when an unread one went.
    const removed = await removeConversationNotifications(tx, me, conversation.id);
    await announce(tx, conversation.id, null, removed > 0 ? [] : [me]);
  });
  forget(ctx, conversation.id);
  return true;
}

/** A user id to block or unblock: a UUID other than the caller's. */
function blockTarget(me: string, userId: string): string {
  if (!isUuid(userId)) throw notFound('User');
  const id = userId.toLowerCase();
  if (id === me) throw invalid('invalid_user', 'userId: you cannot block yourself.');
  return id;
}

/**
 * Blocks a user, across tribes: they can no longer start a conversation with the caller or write in their 1:1
 * conversation (neither can the caller). True when the block is new; `not_found` for an unknown user.
 */
export async function blockUser(ctx: RequestContext, userId: string): Promise<boolean> {
  const me = requireUser(ctx);
  const target = blockTarget(me, userId);
  const db = ctx.app.database.db;
  try {
    return await db.transaction(async (tx) => {
      const added = await repo.insertBlock(tx, me, target, ctx.app.clock());
      const direct = added ? await repo.findDirect(tx, pairKeyOf(me, target)) : undefined;
      if (direct) await announce(tx, direct.id, null, []);
      return added;
    });
  } catch (error) {
    if (isForeignKeyViolation(error)) throw notFound('User');
    throw error;
  }
}

/** Removes the caller's block of a user; true when there was one. */
export async function unblockUser(ctx: RequestContext, userId: string): Promise<boolean> {
  const me = requireUser(ctx);
  const target = blockTarget(me, userId);
  return ctx.app.database.db.transaction(async (tx) => {
    const removed = await repo.deleteBlock(tx, me, target);
    const direct = removed ? await repo.findDirect(tx, pairKeyOf(me, target)) : undefined;
    if (direct) await announce(tx, direct.id, null, []);
    return removed;
  });
}
