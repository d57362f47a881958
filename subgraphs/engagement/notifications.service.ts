import DataLoader from 'dataloader';
import { z } from 'zod';
import type { Executor } from '../../db/src/index.js';
import { getCommunity } from '../communities/index.js';
import { findUsersByIds } from '../identity/index.js';
import {
  type Connection,
  type RequestContext,
  invalid,
  isTimeAndId,
  isUuid,
  pageRequest,
  parseInput,
  requestScoped,
  requireUser,
  toConnection,
} from '../kernel/index.js';
import { memberUserIdsAmong, viewerTribes } from '../members/index.js';
import { publishAll, type RealtimeSignal } from '../realtime/index.js';
import * as repo from './notifications.repository.js';
import {
  CHANNELS,
  DEFAULT_PREFERENCES,
  NOTIFICATION_KINDS,
  type Channel,
  type Notification,
  type NotificationKind,
} from './notifications.tables.js';

export type { Channel, Notification, NotificationKind } from './notifications.tables.js';
export { CHANNELS, DEFAULT_PREFERENCES, NOTIFICATION_KINDS } from './notifications.tables.js';

/** Reactions on one post or comment within this long of the first become one notification. */
export const REACTION_WINDOW_MS = 60 * 60 * 1000;

/** What a notification is about; ids of rows that exist in the supergraph. */
export interface NotificationSubject {
  postId?: string | null;
  commentId?: string | null;
  eventId?: string | null;
  winId?: string | null;
  courseId?: string | null;
  conversationId?: string | null;
}

/** One notification to some recipients (`notify`). */
export interface NotifyInput {
  kind: NotificationKind;
  recipientIds: readonly string[];
  /** Who acted: never notified about it; null for the system (a reminder, a completed course). */
  actorId?: string | null;
  /** The tribe it happened in: only its members now are notified, and not those who muted it. Null for messages. */
  communityId?: string | null;
  subject?: NotificationSubject;
  /** Small facts for the text (a role, a reaction kind, a title); never content a recipient could not read. */
  data?: Record<string, unknown>;
  /** One notification per recipient with this key ever (a fan-out written again adds nothing). */
  dedupeKey?: string | null;
  /** When it happened (the service clock); now by default. */
  at?: Date;
}

/**
 * Notifies `recipientIds` inside `tx` (it exists only if the transaction commits), applying every rule: never the actor,
 * only current members of `communityId` when one is given, not who muted that tribe, not who turned the kind's IN_APP
 * preference off. Reactions on one target within `REACTION_WINDOW_MS`, and unread messages of one conversation, fold
 * into the recipient's open notification (latest actors and count; unread and newest again) instead of repeating.
 * Announces each notification written and each recipient's unread count on the realtime channel, in `tx`. A deleted
 * subject (its row gone) makes the transaction fail with a foreign-key violation: check it, or run `notify` in a
 * savepoint. Returns what was written.
 */
export async function notify(tx: Executor, input: NotifyInput): Promise<repo.Written[]> {
  const at = input.at ?? new Date();
  const actorId = input.actorId ?? null;
  const communityId = input.communityId ?? null;
  let recipients = [...new Set(input.recipientIds)].filter((id) => isUuid(id) && id !== actorId);
  if (recipients.length === 0) return [];
  if (communityId) recipients = await memberUserIdsAmong(tx, communityId, recipients);
  const values = valuesOf(input.kind, communityId, actorId, input.subject ?? {}, input.data ?? {}, input.dedupeKey ?? null);
  const written: repo.Written[] = [];
  if (values.aggregateKey && actorId && recipients.length > 0) {
    const since = input.kind === 'reaction' ? new Date(at.getTime() - REACTION_WINDOW_MS) : null;
    const folded = await repo.foldIntoOpen(tx, { ...values, aggregateKey: values.aggregateKey }, recipients, since, at);
    written.push(...folded);
    const done = new Set(folded.map((w) => w.userId));
    recipients = recipients.filter((id) => !done.has(id));
  }
  written.push(...(await repo.insertForRecipients(tx, values, recipients, at)));
  await announce(tx, written);
  return written;
}

/** The row values of a notification; reactions aggregate per target, messages per conversation. */
function valuesOf(
  kind: NotificationKind,
  communityId: string | null,
  actorId: string | null,
  subject: NotificationSubject,
  data: Record<string, unknown>,
  dedupeKey: string | null,
): repo.NotificationValues {
  let aggregateKey: string | null = null;
  if (kind === 'reaction') aggregateKey = subject.commentId ? `reaction:comment:${subject.commentId}` : `reaction:post:${subject.postId}`;
  if (kind === 'message' && subject.conversationId) aggregateKey = `message:${subject.conversationId}`;
  return { kind, communityId, actorId, ...subject, data, aggregateKey, dedupeKey };
}

/** A `notification` signal per notification written and an `unread` signal per recipient, in one statement. */
async function announce(tx: Executor, written: readonly repo.Written[]): Promise<void> {
  const signals: RealtimeSignal[] = written.map((w) => ({ topic: 'notification', userId: w.userId, notificationId: w.id }));
  for (const userId of new Set(written.map((w) => w.userId))) signals.push({ topic: 'unread', userId });
  await publishAll(tx, signals);
}

/**
 * Writes one chunk of a fan-out: the same notification to `recipientIds` (a page of an audience, 1,000 by default),
 * with the same rules as `notify` except the membership check (the audience is read from the members or the event
 * registrations). Two statements whatever the chunk's size: the insert with preferences and mutes applied, the
 * announcements.
 */
export async function writeChunk(tx: Executor, values: repo.NotificationValues, recipientIds: readonly string[], at: Date): Promise<number> {
  const written = await repo.insertForRecipients(tx, values, recipientIds, at);
  await announce(tx, written);
  return written.length;
}

// ---- the web app (GraphQL) ----

const LIST = (userId: string, unreadOnly: boolean) => `notifications:${userId}:${unreadOnly ? 'unread' : 'all'}`;

/** The tribes the caller belongs to now, read fresh: a notification from a tribe they left is not shown. */
async function myTribeIds(ctx: RequestContext): Promise<string[]> {
  return (await viewerTribes(ctx)).map((t) => t.communityId);
}

/** The caller's notifications, newest (latest update) first, Relay cursor pages; `unreadOnly` for the unread ones. */
export async function listNotifications(
  ctx: RequestContext,
  args: { first?: number | null; after?: string | null; unreadOnly?: boolean | null },
): Promise<Connection<Notification>> {
  const userId = requireUser(ctx);
  const unreadOnly = args.unreadOnly === true;
  const list = LIST(userId, unreadOnly);
  const { limit, after } = pageRequest(ctx, list, args, isTimeAndId);
  const rows = await repo.listForUser(ctx.app.database.db, userId, { communityIds: await myTribeIds(ctx), unreadOnly, after, limit: limit + 1 });
  return toConnection(ctx, list, rows, limit, (n) => [n.updatedAt.toISOString(), n.id]);
}

/** How many unread notifications the caller has (those they may still see). */
export async function unreadNotificationCount(ctx: RequestContext): Promise<number> {
  const userId = requireUser(ctx);
  return repo.countUnread(ctx.app.database.db, userId, await myTribeIds(ctx));
}

/** The caller's own notification, or null (someone else's, unknown, or from a tribe they left). */
export async function notificationById(ctx: RequestContext, id: string): Promise<Notification | null> {
  const userId = requireUser(ctx);
  if (!isUuid(id)) return null;
  const row = await repo.findForUser(ctx.app.database.db, userId, id);
  if (!row) return null;
  if (row.communityId && !(await myTribeIds(ctx)).includes(row.communityId)) return null;
  return row;
}

const MAX_MARK_IDS = 500;
const markInput = z
  .object({
    ids: z.array(z.string().refine(isUuid, 'each id must be a notification id (UUID)')).max(MAX_MARK_IDS, `at most ${MAX_MARK_IDS} ids`).nullish(),
    all: z.boolean().nullish(),
  })
  .refine((v) => (v.all === true) !== (v.ids != null), { message: 'send either ids or all: true' });

/**
 * Marks the caller's notifications read: `ids` (others' ids and read ones are simply not counted) or `all: true`.
 * Returns how many were marked; announces the new unread count when it changed.
 */
export async function markNotificationsRead(ctx: RequestContext, raw: { ids?: readonly string[] | null; all?: boolean | null }): Promise<number> {
  const userId = requireUser(ctx);
  const input = parseInput(markInput, raw);
  const at = ctx.app.clock();
  return ctx.app.database.db.transaction(async (tx) => {
    const marked = await repo.markRead(tx, userId, input.all ? null : (input.ids ?? []), at);
    if (marked.length > 0) await publishAll(tx, [{ topic: 'unread', userId }]);
    return marked.length;
  });
}

/**
 * The messages area calls these in its own transaction. `markConversationNotificationsRead`: the user read a
 * conversation up to its latest message (or wrote in it), so their `message` notification of it is read too; announces
 * their unread count when one was marked. Returns how many were marked.
 */
export async function markConversationNotificationsRead(tx: Executor, userId: string, conversationId: string, at: Date): Promise<number> {
  const marked = await repo.markConversationKindRead(tx, userId, conversationId, 'message', at);
  if (marked.length > 0) await publishAll(tx, [{ topic: 'unread', userId }]);
  return marked.length;
}

/**
 * The user left a conversation: their notifications of it are deleted (they can no longer open it); announces their
 * unread count when an unread one went. Returns how many were unread.
 */
export async function removeConversationNotifications(tx: Executor, userId: string, conversationId: string): Promise<number> {
  const unread = await repo.deleteForConversation(tx, userId, conversationId);
  if (unread > 0) await publishAll(tx, [{ topic: 'unread', userId }]);
  return unread;
}

/** One preference as the web app shows it. */
export interface PreferenceView {
  kind: NotificationKind;
  channel: Channel;
  enabled: boolean;
  /** True while the user has not changed the default. */
  isDefault: boolean;
}

/** Every kind and channel for `userId`: their choice, else the default (kinds in `NOTIFICATION_KINDS` order, in_app then email). */
async function preferencesFor(db: Executor, userId: string): Promise<PreferenceView[]> {
  const chosen = new Map((await repo.preferencesOf(db, userId)).map((p) => [`${p.kind}:${p.channel}`, p.enabled]));
  return NOTIFICATION_KINDS.flatMap((kind) =>
    CHANNELS.map((channel) => {
      const mine = chosen.get(`${kind}:${channel}`);
      return { kind, channel, enabled: mine ?? DEFAULT_PREFERENCES[kind][channel], isDefault: mine === undefined };
    }),
  );
}

/** The caller's preferences, per kind and channel. */
export async function notificationPreferences(ctx: RequestContext): Promise<PreferenceView[]> {
  return preferencesFor(ctx.app.database.db, requireUser(ctx));
}

const preferencesInput = z
  .array(z.object({ kind: z.enum(NOTIFICATION_KINDS), channel: z.enum(CHANNELS), enabled: z.boolean() }))
  .min(1, 'send at least one preference')
  .max(NOTIFICATION_KINDS.length * CHANNELS.length, 'at most one per kind and channel');

/** Sets some of the caller's preferences (the rest keep theirs); returns them all. */
export async function updateNotificationPreferences(
  ctx: RequestContext,
  raw: ReadonlyArray<{ kind: string; channel: string; enabled: boolean }>,
): Promise<PreferenceView[]> {
  const userId = requireUser(ctx);
  const input = parseInput(preferencesInput, raw);
  const last = new Map(input.map((p) => [`${p.kind}:${p.channel}`, p]));
  await repo.setPreferences(ctx.app.database.db, userId, [...last.values()], ctx.app.clock());
  return preferencesFor(ctx.app.database.db, userId);
}

/** Mutes (or unmutes) a tribe for the caller: no notification from it while muted. Returns `muted`. */
export async function muteCommunity(ctx: RequestContext, communityId: string, muted: boolean): Promise<boolean> {
  const userId = requireUser(ctx);
  const community = await getCommunity(ctx, communityId);
  await repo.setMute(ctx.app.database.db, userId, community.id, muted, ctx.app.clock());
  return muted;
}

/** Whether the caller muted the tribe (false for anonymous callers). */
export async function isCommunityMuted(ctx: RequestContext, communityId: string): Promise<boolean> {
  if (!ctx.caller) return false;
  return (await repo.mutedAmong(ctx.app.database.db, ctx.caller.userId, [communityId])).length > 0;
}

// ---- email (the digest and the one-click unsubscribe) ----

/** The kinds whose EMAIL preference is on for `userId` (their choice, else the default). */
export async function emailEnabledKinds(db: Executor, userId: string): Promise<NotificationKind[]> {
  return (await preferencesFor(db, userId)).filter((p) => p.channel === 'email' && p.enabled).map((p) => p.kind);
}

/** Turns one kind's EMAIL preference on or off for `userId` (the one-click unsubscribe turns it off). */
export async function setEmailPreference(db: Executor, userId: string, kind: NotificationKind, enabled: boolean, at = new Date()): Promise<void> {
  if (!NOTIFICATION_KINDS.includes(kind)) throw invalid('invalid_kind', `kind: must be one of ${NOTIFICATION_KINDS.join(', ')}.`);
  await repo.setPreferences(db, userId, [{ kind, channel: 'email', enabled }], at);
}

/** The unread notifications of one recipient for their digest, newest first. */
export interface DigestEntry {
  userId: string;
  notifications: Notification[];
}

/**
 * For the daily digest: recipients (at most `userLimit`, in user-id order after `afterUserId`: page with the last
 * `userId` until a page is empty) with unread notifications updated after `since` of the kinds whose EMAIL preference
 * is on for them, each with at most `perUser` of them, newest first. One statement per page. Tribe membership is not
 * checked here (the members domain's tables are not read by SQL): filter by the recipient's tribes (`viewerTribes`).
 */
export async function unreadForEmailDigest(
  db: Executor,
  opts: { since: Date; afterUserId?: string | null; userLimit?: number; perUser?: number },
): Promise<DigestEntry[]> {
  const rows = await repo.unreadForEmail(db, {
    since: opts.since,
    afterUserId: opts.afterUserId ?? null,
    userLimit: opts.userLimit ?? 100,
    perUser: opts.perUser ?? 20,
  });
  const byUser = new Map<string, Notification[]>();
  for (const n of rows) {
    const list = byUser.get(n.userId);
    if (list) list.push(n);
    else byUser.set(n.userId, [n]);
  }
  return [...byUser.entries()].map(([userId, notifications]) => ({ userId, notifications }));
}

// ---- text ----

const actorLoader = (ctx: RequestContext) =>
  requestScoped(ctx, 'engagement.notificationActors', () =>
    new DataLoader<string, { id: string; username: string; displayName: string } | null>(async (ids) => {
      const users = await findUsersByIds(ctx.app, ids);
      const byId = new Map(users.map((u) => [u.id, u]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
  );

/** The latest actors of a notification, as user ids (newest first). */
export const actorsOf = (n: Notification): string[] => n.actorIds;

/** The first actor's display name, batched with every notification of the request (one statement). */
async function firstActorName(ctx: RequestContext, n: Notification): Promise<string | null> {
  const [first] = n.actorIds;
  if (!first) return null;
  const user = await actorLoader(ctx).load(first);
  return user ? user.displayName || user.username : null;
}

/** The short text of a notification in English ("Ana and 4 others reacted to your post"). */
export async function notificationText(ctx: RequestContext, n: Notification): Promise<string> {
  return describe(n, await firstActorName(ctx, n));
}

/** The text of a notification given its first actor's name (pure; also what the email digest writes). */
export function describe(n: Pick<Notification, 'kind' | 'actorCount' | 'commentId' | 'data'>, actor: string | null): string {
  const who = !actor ? 'Someone' : n.actorCount > 1 ? `${actor} and ${n.actorCount - 1} ${n.actorCount === 2 ? 'other' : 'others'}` : actor;
  const title = typeof n.data.title === 'string' ? n.data.title : null;
  const onWhat = n.commentId ? 'your comment' : 'your post';
  switch (n.kind) {
    case 'reply':
      return `${who} replied to ${n.data.toComment ? 'your comment' : 'your post'}`;
    case 'mention':
      return `${who} mentioned you in a ${n.commentId ? 'comment' : 'post'}`;
    case 'reaction':
      return `${who} reacted to ${onWhat}`;
    case 'event_created':
      return title ? `New event: ${title}` : 'A new event was created';
    case 'event_reminder':
      return title ? `Reminder: ${title} starts within 24 hours` : 'An event you registered for starts within 24 hours';
    case 'role_changed':
      return `Your role is now ${String(n.data.role ?? 'changed')}`;
    case 'win_approved':
      return title ? `Your win "${title}" was approved` : 'Your win was approved';
    case 'course_completed':
      return title ? `You completed the course "${title}"` : 'You completed a course';
    case 'message':
      return `${who} sent you a message`;
    case 'moderation_warning':
      return typeof n.data.reason === 'string' && n.data.reason ? `A moderator warned you: ${n.data.reason}` : 'A moderator warned you';
    case 'refund_required':
      return title ? `A paid registration for "${title}" got no seat: refund the buyer` : 'A paid order needs a refund';
  }
}
