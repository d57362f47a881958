import { and, desc, eq, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import {
  ALWAYS_DELIVERED_KINDS,
  DEFAULT_PREFERENCES,
  LATEST_ACTORS,
  NOTIFICATION_KINDS,
  notificationFanouts,
  notificationMutes,
  notificationPreferences,
  notifications,
  type Channel,
  type FanoutAudience,
  type Notification,
  type NotificationFanout,
  type NotificationKind,
} from './notifications.tables.js';

const rowsOf = (result: unknown): Record<string, unknown>[] => (result as { rows: Record<string, unknown>[] }).rows;
const uuids = (ids: readonly string[]) => sql`${sql.param([...ids])}::uuid[]`;
const iso = (d: Date) => sql`${d.toISOString()}::timestamptz`;

/** What a notification is about: its tribe, actor, subject rows and small facts. */
export interface NotificationValues {
  kind: NotificationKind;
  communityId: string | null;
  actorId: string | null;
  postId?: string | null;
  commentId?: string | null;
  eventId?: string | null;
  winId?: string | null;
  courseId?: string | null;
  conversationId?: string | null;
  data: Record<string, unknown>;
  aggregateKey?: string | null;
  dedupeKey?: string | null;
}

/** A notification written (added or updated) for a recipient. */
export interface Written {
  id: string;
  userId: string;
}

/**
 * The recipient `r.id` wants this kind in the app (their preference, else the default) and has not muted the tribe.
 * Part of the same statement that writes, so a fan-out chunk applies both with no extra round trip.
 */
function wanted(kind: NotificationKind, communityId: string | null, recipient: SQL): SQL {
  if (ALWAYS_DELIVERED_KINDS.includes(kind)) return sql`true`;
  const pref = sql`coalesce((select p.enabled from notification_preferences p
      where p.user_id = ${recipient} and p.kind = ${kind} and p.channel = 'in_app'), ${DEFAULT_PREFERENCES[kind].in_app})`;
  if (!communityId) return pref;
  return sql`${pref} and not exists (select 1 from notification_mutes m where m.user_id = ${recipient} and m.community_id = ${communityId}::uuid)`;
}

/**
 * Inserts one notification per recipient in one statement (`insert ... select from unnest`): never for the actor, nor
 * for a recipient whose in-app preference for the kind is off or who muted the tribe; a recipient who already has the
 * `dedupeKey` gets nothing (a fan-out chunk written again). Returns what was inserted.
 */
export async function insertForRecipients(tx: Executor, v: NotificationValues, recipientIds: readonly string[], at: Date): Promise<Written[]> {
  if (recipientIds.length === 0) return [];
  const actors = v.actorId ? [v.actorId] : [];
  const result = await tx.execute(sql`
    insert into notifications (user_id, kind, community_id, actor_ids, actor_count, post_id, comment_id, event_id, win_id,
                               course_id, conversation_id, data, aggregate_key, dedupe_key, created_at, updated_at)
    select r.id, ${v.kind}, ${v.communityId}::uuid, ${uuids(actors)}, ${actors.length}, ${v.postId ?? null}::uuid,
           ${v.commentId ?? null}::uuid, ${v.eventId ?? null}::uuid, ${v.winId ?? null}::uuid, ${v.courseId ?? null}::uuid,
           ${v.conversationId ?? null}::uuid, ${JSON.stringify(v.data)}::jsonb, ${v.aggregateKey ?? null}, ${v.dedupeKey ?? null},
           ${iso(at)}, ${iso(at)}
      from unnest(${uuids(recipientIds)}) as r(id)
     where r.id is distinct from ${v.actorId}::uuid
       and ${wanted(v.kind, v.communityId, sql`r.id`)}
    on conflict (user_id, dedupe_key) where dedupe_key is not null do nothing
    returning id, user_id`);
  return rowsOf(result).map((r) => ({ id: String(r.id), userId: String(r.user_id) }));
}

/**
 * Folds a new actor into the recipients' open notification of `v.aggregateKey` (one created after `since`, or any
 * unread one when `since` is null): the actor moves to the front of the latest actors (at most `LATEST_ACTORS`), the
 * count grows unless the actor is among them already, the facts are replaced, and it becomes unread and newest again.
 * The same preference and mute rule as inserting. Returns the notifications updated (recipients without one get none).
 */
export async function foldIntoOpen(
  tx: Executor,
  v: NotificationValues & { aggregateKey: string },
  recipientIds: readonly string[],
  since: Date | null,
  at: Date,
): Promise<Written[]> {
  if (recipientIds.length === 0 || !v.actorId) return [];
  const open = since ? sql`n.created_at > ${iso(since)}` : sql`n.read_at is null`;
  const result = await tx.execute(sql`
    update notifications n
       set actor_ids = (array_prepend(${v.actorId}::uuid, array_remove(n.actor_ids, ${v.actorId}::uuid)))[1:${LATEST_ACTORS}],
           actor_count = n.actor_count + case when ${v.actorId}::uuid = any(n.actor_ids) then 0 else 1 end,
           data = ${JSON.stringify(v.data)}::jsonb,
           read_at = null,
           updated_at = ${iso(at)}
     where n.user_id = any(${uuids(recipientIds)})
       and n.user_id <> ${v.actorId}::uuid
       and n.kind = ${v.kind}
       and n.aggregate_key = ${v.aggregateKey}
       and ${open}
       and ${wanted(v.kind, v.communityId, sql`n.user_id`)}
    returning n.id, n.user_id`);
  return rowsOf(result).map((r) => ({ id: String(r.id), userId: String(r.user_id) }));
}

/** The keyset position of a notification in its recipient's list: newest `updated_at` first, ties by id. */
export type NotificationKey = [string, string];

/**
 * A page of the user's notifications, newest first: only those without a tribe or in `communityIds` (the tribes the
 * user belongs to now), unread only when asked, after `after`.
 */
export async function listForUser(
  db: Executor,
  userId: string,
  opts: { communityIds: readonly string[]; unreadOnly: boolean; after: NotificationKey | null; limit: number },
): Promise<Notification[]> {
  return db
    .select()
    .from(notifications)
    .where(
      and(
        eq(notifications.userId, userId),
        visibleIn(opts.communityIds),
        opts.unreadOnly ? isNull(notifications.readAt) : undefined,
        opts.after ? sql`(${notifications.updatedAt}, ${notifications.id}) < (${opts.after[0]}::timestamptz, ${opts.after[1]}::uuid)` : undefined,
      ),
    )
    .orderBy(desc(notifications.updatedAt), desc(notifications.id))
    .limit(opts.limit);
}

const visibleIn = (communityIds: readonly string[]) =>
  sql`(${notifications.communityId} is null or ${notifications.communityId} = any(${uuids(communityIds)}))`;

/** How many unread notifications the user has without a tribe or in `communityIds`. */
export async function countUnread(db: Executor, userId: string, communityIds: readonly string[]): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(notifications)
    .where(and(eq(notifications.userId, userId), isNull(notifications.readAt), visibleIn(communityIds)));
  return Number(row?.n ?? 0);
}

/** The user's own notification `id`, or undefined. */
export async function findForUser(db: Executor, userId: string, id: string): Promise<Notification | undefined> {
  const [row] = await db
    .select()
    .from(notifications)
    .where(and(eq(notifications.id, id), eq(notifications.userId, userId)))
    .limit(1);
  return row;
}

/** Marks the user's unread notifications read: those of `ids`, or all of them when `ids` is null. Returns the ids marked. */
export async function markRead(tx: Executor, userId: string, ids: readonly string[] | null, at: Date): Promise<string[]> {
  const rows = await tx
    .update(notifications)
    .set({ readAt: at })
    .where(and(eq(notifications.userId, userId), isNull(notifications.readAt), ids ? inArray(notifications.id, [...ids]) : undefined))
    .returning({ id: notifications.id });
  return rows.map((r) => r.id);
}

/** Marks the user's unread notifications of `kind` about a conversation read. Returns the ids marked. */
export async function markConversationKindRead(tx: Executor, userId: string, conversationId: string, kind: NotificationKind, at: Date): Promise<string[]> {
  const rows = await tx
    .update(notifications)
    .set({ readAt: at })
    .where(and(eq(notifications.userId, userId), eq(notifications.conversationId, conversationId), eq(notifications.kind, kind), isNull(notifications.readAt)))
    .returning({ id: notifications.id });
  return rows.map((r) => r.id);
}

/** Deletes the user's notifications about a conversation (read or not). Returns how many were unread. */
export async function deleteForConversation(tx: Executor, userId: string, conversationId: string): Promise<number> {
  const rows = await tx
    .delete(notifications)
    .where(and(eq(notifications.userId, userId), eq(notifications.conversationId, conversationId)))
    .returning({ readAt: notifications.readAt });
  return rows.filter((r) => r.readAt === null).length;
}

/** The user's changes to the default preferences. */
export async function preferencesOf(db: Executor, userId: string): Promise<Array<{ kind: NotificationKind; channel: Channel; enabled: boolean }>> {
  return db
    .select({ kind: notificationPreferences.kind, channel: notificationPreferences.channel, enabled: notificationPreferences.enabled })
    .from(notificationPreferences)
    .where(eq(notificationPreferences.userId, userId));
}

/** Sets the user's preferences (one row per kind and channel, replaced). */
export async function setPreferences(
  tx: Executor,
  userId: string,
  rows: ReadonlyArray<{ kind: NotificationKind; channel: Channel; enabled: boolean }>,
  at: Date,
): Promise<void> {
  if (rows.length === 0) return;
  await tx
    .insert(notificationPreferences)
    .values(rows.map((r) => ({ userId, kind: r.kind, channel: r.channel, enabled: r.enabled, updatedAt: at })))
    .onConflictDoUpdate({
      target: [notificationPreferences.userId, notificationPreferences.kind, notificationPreferences.channel],
      set: { enabled: sql`excluded.enabled`, updatedAt: sql`excluded.updated_at` },
    });
}

/** Mutes or unmutes a tribe for the user. */
export async function setMute(tx: Executor, userId: string, communityId: string, muted: boolean, at: Date): Promise<void> {
  if (muted) {
    await tx.insert(notificationMutes).values({ userId, communityId, createdAt: at }).onConflictDoNothing();
  } else {
    await tx.delete(notificationMutes).where(and(eq(notificationMutes.userId, userId), eq(notificationMutes.communityId, communityId)));
  }
}

/** Which of `communityIds` the user muted. */
export async function mutedAmong(db: Executor, userId: string, communityIds: readonly string[]): Promise<string[]> {
  if (communityIds.length === 0) return [];
  const rows = await db
    .select({ communityId: notificationMutes.communityId })
    .from(notificationMutes)
    .where(and(eq(notificationMutes.userId, userId), inArray(notificationMutes.communityId, [...communityIds])));
  return rows.map((r) => r.communityId);
}

// ---- fan-outs ----

/** Records a fan-out unless one with its `dedupeKey` exists; true when recorded. */
export async function insertFanout(
  tx: Executor,
  values: { audience: FanoutAudience; kind: NotificationKind; communityId: string; actorId: string | null; eventId: string | null; dedupeKey: string; data: Record<string, unknown>; at: Date },
): Promise<boolean> {
  const rows = await tx
    .insert(notificationFanouts)
    .values({ ...values, createdAt: values.at })
    .onConflictDoNothing({ target: notificationFanouts.dedupeKey })
    .returning({ id: notificationFanouts.id });
  return rows.length > 0;
}

/** The oldest unfinished fan-out no other worker holds, locked until the transaction ends. */
export async function lockPendingFanout(tx: Executor): Promise<NotificationFanout | undefined> {
  const [row] = await tx
    .select()
    .from(notificationFanouts)
    .where(isNull(notificationFanouts.doneAt))
    .orderBy(notificationFanouts.createdAt)
    .limit(1)
    .for('update', { skipLocked: true });
  return row;
}

/** Records how far a fan-out got, and whether it is done. */
export async function advanceFanout(tx: Executor, id: string, afterUserId: string | null, doneAt: Date | null): Promise<void> {
  await tx.update(notificationFanouts).set({ afterUserId, doneAt }).where(eq(notificationFanouts.id, id));
}

/** Which of `dedupeKeys` have a fan-out already. */
export async function existingFanouts(db: Executor, dedupeKeys: readonly string[]): Promise<string[]> {
  if (dedupeKeys.length === 0) return [];
  const rows = await db
    .select({ key: notificationFanouts.dedupeKey })
    .from(notificationFanouts)
    .where(inArray(notificationFanouts.dedupeKey, [...dedupeKeys]));
  return rows.map((r) => r.key);
}

// ---- email digest ----

/**
 * Unread notifications updated after `since` of the kinds whose EMAIL preference is on for their recipient (their
 * preference, else the default), for at most `userLimit` recipients in user-id order after `afterUserId`; each
 * recipient's newest first, at most `perUser` each. One statement.
 */
export async function unreadForEmail(
  db: Executor,
  opts: { since: Date; afterUserId: string | null; userLimit: number; perUser: number },
): Promise<Notification[]> {
  const emailDefaults = NOTIFICATION_KINDS.filter((k) => DEFAULT_PREFERENCES[k].email);
  const emailOn = sql`coalesce((select p.enabled from notification_preferences p
                                 where p.user_id = n.user_id and p.kind = n.kind and p.channel = 'email'),
                               n.kind = any(${sql.param(emailDefaults)}::text[]))`;
  const result = await db.execute(sql`
    with recipients as (
      select distinct n.user_id from notifications n
       where n.read_at is null and n.updated_at > ${iso(opts.since)} and ${emailOn}
         ${opts.afterUserId ? sql`and n.user_id > ${opts.afterUserId}::uuid` : sql``}
       order by n.user_id
       limit ${opts.userLimit}
    )
    select x.* from recipients r
    cross join lateral (
      select n.* from notifications n
       where n.user_id = r.user_id and n.read_at is null and n.updated_at > ${iso(opts.since)} and ${emailOn}
       order by n.updated_at desc, n.id desc
       limit ${opts.perUser}
    ) x
    order by x.user_id, x.updated_at desc, x.id desc`);
  return rowsOf(result).map(fromRow);
}

const asDate = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));
const asArray = (v: unknown): string[] => {
  if (Array.isArray(v)) return v.map(String);
  if (typeof v === 'string') return v.replace(/^\{|\}$/g, '').split(',').filter(Boolean);
  return [];
};
const idOrNull = (v: unknown): string | null => (v == null ? null : String(v));

/** A raw `notifications` row (snake case, from `execute`) as a `Notification`. */
function fromRow(r: Record<string, unknown>): Notification {
  return {
    id: String(r.id),
    userId: String(r.user_id),
    kind: String(r.kind) as NotificationKind,
    communityId: idOrNull(r.community_id),
    actorIds: asArray(r.actor_ids),
    actorCount: Number(r.actor_count),
    postId: idOrNull(r.post_id),
    commentId: idOrNull(r.comment_id),
    eventId: idOrNull(r.event_id),
    winId: idOrNull(r.win_id),
    courseId: idOrNull(r.course_id),
    conversationId: idOrNull(r.conversation_id),
    data: (typeof r.data === 'string' ? JSON.parse(r.data) : (r.data ?? {})) as Record<string, unknown>,
    aggregateKey: r.aggregate_key == null ? null : String(r.aggregate_key),
    dedupeKey: r.dedupe_key == null ? null : String(r.dedupe_key),
    readAt: r.read_at == null ? null : asDate(r.read_at),
    createdAt: asDate(r.created_at),
    updatedAt: asDate(r.updated_at),
  };
}
