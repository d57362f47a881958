import type { Db, Executor } from '../../db/src/index.js';
import { courseById } from '../courses/index.js';
import { eventById, eventsStartingBetween, registrantIdsPage } from '../events/index.js';
import { type AppDeps, type RequestContext, isForeignKeyViolation, isUuid } from '../kernel/index.js';
import { memberUserIdsAmong, memberUserIdsPage, ownerUserIds } from '../members/index.js';
import { claimUnnotifiedEvents, markEventsNotified, type OutboxEvent } from '../outbox/index.js';
import { publishAll } from '../realtime/index.js';
import { winById } from '../wins/index.js';
import * as repo from './notifications.repository.js';
import { notify, writeChunk, type NotifyInput } from './notifications.service.js';

/** Outbox events taken per consumer transaction. */
const CONSUME_BATCH = 200;
/** Recipients per fan-out chunk (one transaction each: a page of the audience, one insert, one announcement). */
export const FANOUT_CHUNK = 1_000;
/** How long before an event its registrants are reminded. */
export const REMINDER_LEAD_MS = 24 * 60 * 60 * 1000;
/** Events looked at per reminder run. */
const REMINDER_BATCH = 500;

/**
 * The service context of a job's transaction: no caller (entity lookups by id only), and the other domains' lookups
 * read through `tx` (PGlite has one connection: a read outside the open transaction would wait for it forever).
 */
const jobContext = (app: AppDeps, tx: Executor): RequestContext => ({
  app: { ...app, database: { ...app.database, db: tx as Db } },
  caller: null,
  requestId: 'notifications-job',
});

const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);
const id = (v: unknown): string | null => (isUuid(v) ? v : null);

/**
 * What one outbox event means for notifications: a `notify` for its recipients, a fan-out to record, a realtime
 * signal (a member who left: their unread count changed), or nothing.
 */
type Plan =
  | { notify: NotifyInput }
  | { fanout: Parameters<typeof repo.insertFanout>[1] }
  | { unreadChanged: string }
  | null;

async function planFor(ctx: RequestContext, e: OutboxEvent, at: Date): Promise<Plan> {
  const d = e.data;
  const communityId = e.communityId;
  if (!communityId) return null;
  switch (e.type) {
    case 'comment.replied': {
      const recipient = id(d.recipientUserId);
      if (!recipient) return null;
      return {
        notify: {
          kind: 'reply',
          recipientIds: [recipient],
          actorId: id(d.authorId),
          communityId,
          subject: { postId: id(d.postId), commentId: id(d.commentId) },
          data: { toComment: !!d.parentId },
          at,
        },
      };
    }
    case 'post.mentioned': {
      const recipient = id(d.mentionedUserId);
      if (!recipient) return null;
      return {
        notify: {
          kind: 'mention',
          recipientIds: [recipient],
          actorId: id(d.authorId),
          communityId,
          subject: { postId: id(d.postId), commentId: id(d.commentId) },
          at,
        },
      };
    }
    case 'post.reacted': {
      const recipient = id(d.authorId);
      if (!recipient) return null;
      return {
        notify: {
          kind: 'reaction',
          recipientIds: [recipient],
          actorId: id(d.userId),
          communityId,
          subject: { postId: id(d.postId), commentId: id(d.commentId) },
          data: { reaction: str(d.kind) },
          at,
        },
      };
    }
    case 'event.created': {
      const event = id(d.eventId) ? await eventById(ctx, d.eventId as string) : null;
      if (!event) return null;
      return {
        fanout: {
          audience: 'tribe',
          kind: 'event_created',
          communityId: event.communityId,
          actorId: event.createdBy,
          eventId: event.id,
          dedupeKey: `event_created:${event.id}`,
          data: { title: event.title, startsAt: event.startsAt.toISOString() },
          at,
        },
      };
    }
    case 'member.role_changed': {
      const recipient = id(d.userId);
      if (!recipient) return null;
      return {
        notify: {
          kind: 'role_changed',
          recipientIds: [recipient],
          actorId: id(d.changedBy),
          communityId,
          data: { role: str(d.role), previousRole: str(d.previousRole) },
          at,
        },
      };
    }
    case 'win.approved': {
      const win = id(d.winId) ? await winById(ctx, d.winId as string) : null;
      if (!win?.authorId) return null;
      return {
        notify: {
          kind: 'win_approved',
          recipientIds: [win.authorId],
          actorId: win.approvedBy,
          communityId,
          subject: { winId: win.id },
          data: { title: win.title },
          dedupeKey: `win_approved:${win.id}`,
          at,
        },
      };
    }
    case 'course.completed': {
      const course = id(d.courseId) ? await courseById(ctx, d.courseId as string) : null;
      const recipient = id(d.userId);
      if (!course || !recipient) return null;
      return {
        notify: {
          kind: 'course_completed',
          recipientIds: [recipient],
          actorId: null,
          communityId,
          subject: { courseId: course.id },
          data: { title: course.title },
          dedupeKey: `course_completed:${str(d.enrollmentId) ?? course.id}`,
          at,
        },
      };
    }
    case 'order.refund_required': {
      // The owners must refund a buyer whose paid registration got no seat (subject: the event, when it still exists).
      const orderId = id(d.orderId);
      if (!orderId) return null;
      const event = d.productType === 'event' && id(d.productId) ? await eventById(ctx, d.productId as string) : null;
      return {
        notify: {
          kind: 'refund_required',
          recipientIds: await ownerUserIds(ctx.app.database.db, communityId),
          actorId: null,
          communityId,
          subject: { eventId: event?.id ?? null },
          data: { orderId, amountCents: d.amount ?? null, currency: str(d.currency), title: event?.title ?? null, reason: str(d.reason) },
          dedupeKey: `refund_required:${orderId}`,
          at,
        },
      };
    }
    case 'member.left':
    case 'member.removed': {
      const who = id(d.userId);
      return who ? { unreadChanged: who } : null;
    }
    default:
      return null;
  }
}

/**
 * The `notifications.consume` job: `consumeOutbox`, then `runFanouts` until none is pending. Returns the notifications
 * written. `wait`: for a consumer that another is running, rather than return (the worker's run on an outbox signal).
 */
export async function consumeNotifications(app: AppDeps, options: { wait?: boolean } = {}): Promise<number> {
  return (await consumeOutbox(app, options)) + (await runFanouts(app));
}

/**
 * Turns every outbox event not yet taken into notifications (a reply, a mention, a reaction, a changed role, an approved
 * win, a completed course) or a recorded tribe-wide fan-out (a new event), a batch of events per transaction. Each event
 * runs in a savepoint: one whose subject was deleted meanwhile (a foreign-key violation) is skipped, not retried forever.
 * One consumer at a time (advisory lock); the webhook fan-out reads the same events with its own marker. Returns the
 * notifications written. `wait`: waits for a consumer running now, then takes what it left (else returns at once).
 */
export async function consumeOutbox(app: AppDeps, options: { wait?: boolean } = {}): Promise<number> {
  let written = 0;
  for (;;) {
    const { taken, n } = await app.database.db.transaction(async (tx) => {
      const ctx = jobContext(app, tx);
      const events = await claimUnnotifiedEvents(tx, CONSUME_BATCH, options.wait);
      if (events.length === 0) return { taken: 0, n: 0 };
      const at = app.clock();
      let n = 0;
      for (const e of events) n += await apply(tx, await planFor(ctx, e, at));
      await markEventsNotified(tx, events.map((e) => e.id), at);
      return { taken: events.length, n };
    });
    written += n;
    if (taken < CONSUME_BATCH) return written;
  }
}

async function apply(tx: Executor, plan: Plan): Promise<number> {
  if (!plan) return 0;
  if ('unreadChanged' in plan) {
    await publishAll(tx, [{ topic: 'unread', userId: plan.unreadChanged }]);
    return 0;
  }
  if ('fanout' in plan) {
    await repo.insertFanout(tx, plan.fanout);
    return 0;
  }
  try {
    return (await tx.transaction((sp) => notify(sp, plan.notify))).length;
  } catch (error) {
    if (isForeignKeyViolation(error)) return 0; // the post, comment, win or course is gone: nothing to tell
    throw error;
  }
}

/**
 * Writes pending fan-outs a chunk at a time until none is left: each chunk is one transaction that locks the fan-out,
 * reads the next `chunk` recipient ids of its audience (keyset over the members, or the event's registrants), inserts
 * their notifications in one statement (preferences and mutes applied in it), announces them in one more, and records
 * its position. A constant number of statements per chunk, whatever the tribe's size. `maxChunks` stops earlier (the
 * rest waits for the next run). Returns the notifications written.
 */
export async function runFanouts(app: AppDeps, options: { chunk?: number; maxChunks?: number } = {}): Promise<number> {
  const chunk = options.chunk ?? FANOUT_CHUNK;
  let written = 0;
  for (let chunks = 0; chunks < (options.maxChunks ?? Infinity); chunks += 1) {
    const step = await app.database.db.transaction(async (tx) => {
      const fanout = await repo.lockPendingFanout(tx);
      if (!fanout) return null;
      const at = app.clock();
      const page =
        fanout.audience === 'tribe'
          ? await memberUserIdsPage(tx, fanout.communityId, fanout.afterUserId, chunk)
          : await registrantIdsPage(tx, fanout.eventId!, fanout.afterUserId, chunk);
      // Registrants who left the tribe since are not reminded (one more statement per chunk, whatever its size).
      const recipients = fanout.audience === 'tribe' ? page : await memberUserIdsAmong(tx, fanout.communityId, page);
      const values: repo.NotificationValues = {
        kind: fanout.kind,
        communityId: fanout.communityId,
        actorId: fanout.actorId,
        eventId: fanout.eventId,
        data: fanout.data,
        dedupeKey: fanout.dedupeKey,
      };
      const n = await writeChunk(tx, values, recipients, at);
      await repo.advanceFanout(tx, fanout.id, page.at(-1) ?? fanout.afterUserId, page.length < chunk ? at : null);
      return n;
    });
    if (step === null) return written;
    written += step;
  }
  return written;
}

/**
 * The `notifications.event_reminders` job: for every event starting within the next 24 hours (at the service clock)
 * that has no reminder yet, records a reminder fan-out to its confirmed registrants (once per event), then writes the
 * pending fan-outs. An event created less than 24 hours ahead is reminded at the first run after its creation.
 * Returns the notifications written.
 */
export async function sendEventReminders(app: AppDeps): Promise<number> {
  const now = app.clock();
  const db = app.database.db;
  const events = await eventsStartingBetween(db, now, new Date(now.getTime() + REMINDER_LEAD_MS), REMINDER_BATCH);
  const done = new Set(await repo.existingFanouts(db, events.map((e) => `event_reminder:${e.id}`)));
  const due = events.filter((e) => !done.has(`event_reminder:${e.id}`));
  if (due.length > 0) {
    await db.transaction(async (tx) => {
      for (const e of due) {
        await repo.insertFanout(tx, {
          audience: 'event_registrants',
          kind: 'event_reminder',
          communityId: e.communityId,
          actorId: null,
          eventId: e.id,
          dedupeKey: `event_reminder:${e.id}`,
          data: { title: e.title, startsAt: e.startsAt.toISOString() },
          at: now,
        });
      }
    });
  }
  return runFanouts(app);
}
