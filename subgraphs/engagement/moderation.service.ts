import { z } from 'zod';
import type { Executor } from '../../db/src/index.js';
import { getCommunity } from '../communities/index.js';
import { contentForModeration, decideHeld, getPost, removeContent, restoreContent as restoreRemoved, type ContentKind } from '../content/index.js';
import {
  type Connection,
  type RequestContext,
  invalid,
  isTimeAndId,
  isUuid,
  notFound,
  pageRequest,
  parseInput,
  requireUser,
  text,
  toConnection,
} from '../kernel/index.js';
import {
  banMember,
  getMember,
  muteMember,
  requireOutranks,
  requireRole,
  sanctionOf,
  unbanMember as liftBan,
  unmuteMember as endMute,
} from '../members/index.js';
import { messageForViewer } from './messages.service.js';
import * as repo from './moderation.repository.js';
import { notify } from './notifications.service.js';
import {
  REPORT_REASONS,
  type AuditAction,
  type AuditEntry,
  type ModerationItem,
  type ModerationWarning,
  type Report,
  type ReportReason,
  type TargetType,
} from './moderation.tables.js';

export type { AuditEntry, ModerationWarning, Report } from './moderation.tables.js';

/** A mute lasts from 1 hour to 30 days. */
export const MUTE_HOURS = { min: 1, max: 30 * 24 } as const;

/** The actions of `resolveReports`. */
export const QUEUE_ACTIONS = ['dismiss', 'remove_content', 'warn', 'mute', 'ban'] as const;
export type QueueAction = (typeof QUEUE_ACTIONS)[number];

const uuid = (field: string) => z.string().refine(isUuid, `${field} must be a UUID`);
const reasonText = text({ max: 1000, trim: true });

const reportInput = z.object({
  target: z
    .object({
      postId: uuid('target.postId').optional().nullable(),
      commentId: uuid('target.commentId').optional().nullable(),
      userId: uuid('target.userId').optional().nullable(),
      messageId: uuid('target.messageId').optional().nullable(),
    })
    .refine((t) => [t.postId, t.commentId, t.userId, t.messageId].filter(Boolean).length === 1, 'target: name exactly one of postId, commentId, userId, messageId'),
  reason: z.enum(REPORT_REASONS),
  note: reasonText.optional().nullable(),
});

const resolveInput = z.object({
  action: z.enum(QUEUE_ACTIONS),
  reason: reasonText.optional().nullable(),
  durationHours: z.number().int().optional().nullable(),
});

/** A queue item as moderators see it: the item, its reports and the target's current content. */
export interface QueueItem extends ModerationItem {
  reportCount: number;
  reasons: ReportReason[];
  /** A post's or comment's current text (also while removed); a message's text at its first report; null for a user. */
  content: string | null;
  /** The post a post or comment target belongs to. */
  postId: string | null;
  /** When moderators removed the post or comment (now), else null. */
  removedAt: Date | null;
}

/** What a report names, resolved: its type, id and the user an action on it reaches. */
interface Target {
  type: TargetType;
  id: string;
  subjectUserId: string | null;
  snapshot: string | null;
}

/**
 * Resolves a report's target as the reporter sees it: a post or comment they can see in the tribe, a member of the
 * tribe, or a message of a conversation they take part in whose author is a member of the tribe. Otherwise `not_found`.
 */
async function reportedTarget(ctx: RequestContext, communityId: string, t: z.output<typeof reportInput>['target']): Promise<Target> {
  const db = ctx.app.database.db;
  if (t.postId) {
    const post = await getPost(ctx, t.postId, communityId);
    return { type: 'post', id: post.id, subjectUserId: post.authorId, snapshot: null };
  }
  if (t.commentId) {
    const [comment] = await contentForModeration(db, 'comment', [t.commentId]);
    if (!comment || comment.communityId !== communityId || (comment.removedAt && comment.authorId !== ctx.caller?.userId)) throw notFound('Comment');
    await getPost(ctx, comment.postId!, communityId);
    return { type: 'comment', id: comment.id, subjectUserId: comment.authorId, snapshot: null };
  }
  if (t.userId) {
    const member = await getMember(ctx, communityId, t.userId);
    return { type: 'user', id: member.userId, subjectUserId: member.userId, snapshot: null };
  }
  const message = await messageForViewer(ctx, t.messageId!);
  if (!message || !message.authorId) throw notFound('Message');
  await getMember(ctx, communityId, message.authorId).catch(() => {
    throw invalid('not_in_tribe', "target.messageId: the message's author is not a member of this tribe.");
  });
  return { type: 'message', id: message.id, subjectUserId: message.authorId, snapshot: message.body };
}

/**
 * Reports a post, comment, user or message to the tribe's moderators (any member of the tribe). One open report per
 * reporter per target: reporting again returns the open report and changes nothing. The target's queue item opens
 * (again, if it had been resolved).
 */
export async function report(ctx: RequestContext, communityId: string, raw: unknown): Promise<Report> {
  const community = await getCommunity(ctx, communityId);
  const { userId } = await requireRole(ctx, community.id, 'member');
  const input = parseInput(reportInput, raw);
  const target = await reportedTarget(ctx, community.id, input.target);
  if (target.subjectUserId === userId) throw invalid('cannot_report_self', 'You cannot report yourself or your own content.');
  const now = ctx.app.clock();
  return ctx.app.database.db.transaction(async (tx) => {
    const created = await repo.insertReport(tx, {
      communityId: community.id,
      reporterId: userId,
      targetType: target.type,
      targetId: target.id,
      subjectUserId: target.subjectUserId,
      reason: input.reason,
      note: input.note ?? null,
      createdAt: now,
    });
    if (!created) return (await repo.findOpenReport(tx, userId, target.type, target.id))!;
    await repo.openItem(tx, { communityId: community.id, targetType: target.type, targetId: target.id, subjectUserId: target.subjectUserId, snapshot: target.snapshot }, now);
    return created;
  });
}

/** Adds report counts, reasons and the targets' current content to queue items (three statements a page). */
async function enrich(db: Executor, items: readonly ModerationItem[]): Promise<QueueItem[]> {
  const ids = (type: ContentKind) => items.filter((i) => i.targetType === type).map((i) => i.targetId);
  const [summaries, posts, comments] = await Promise.all([
    repo.reportSummaries(db, items),
    contentForModeration(db, 'post', ids('post')),
    contentForModeration(db, 'comment', ids('comment')),
  ]);
  const content = new Map([...posts, ...comments].map((c) => [c.id, c]));
  return items.map((item) => {
    const c = content.get(item.targetId);
    const s = summaries.get(item.id);
    return {
      ...item,
      reportCount: s?.count ?? 0,
      reasons: s?.reasons ?? [],
      content: c ? c.body : item.snapshot,
      postId: c?.postId ?? null,
      removedAt: c?.removedAt ?? null,
    };
  });
}

/**
 * The tribe's moderation queue (moderators and above): one item per target, OPEN ones by latest report, RESOLVED ones
 * by resolution, newest first, with report count, reasons and the target's current content. Relay cursors.
 */
export async function moderationQueue(
  ctx: RequestContext,
  communityId: string,
  args: { status?: 'open' | 'resolved' | null; first?: number | null; after?: string | null },
): Promise<Connection<QueueItem>> {
  const community = await getCommunity(ctx, communityId);
  await requireRole(ctx, community.id, 'moderator');
  const status = args.status ?? 'open';
  const list = `moderationQueue:${community.id}:${status}`;
  const { limit, after } = pageRequest(ctx, list, args, isTimeAndId);
  const db = ctx.app.database.db;
  const rows = await enrich(db, await repo.queuePage(db, community.id, status, after, limit + 1));
  return toConnection(ctx, list, rows, limit, (r) => [((status === 'open' ? r.lastReportAt : r.resolvedAt) ?? new Date(0)).toISOString(), r.id]);
}

/** The target of `resolveReports`: its queue item's, or a member of the tribe acted on directly. */
async function actionTarget(ctx: RequestContext, communityId: string, targetId: string): Promise<Target> {
  if (!isUuid(targetId)) throw notFound('Report target');
  const item = await repo.findItem(ctx.app.database.db, communityId, targetId);
  if (item) return { type: item.targetType, id: item.targetId, subjectUserId: item.subjectUserId, snapshot: null };
  const member = await getMember(ctx, communityId, targetId).catch(() => null);
  if (!member) throw notFound('Report target');
  return { type: 'user', id: member.userId, subjectUserId: member.userId, snapshot: null };
}

/**
 * Resolves every open report of a target with one action (moderators and above), or acts directly on a member nobody
 * reported: DISMISS (a post or comment automod held is published); REMOVE_CONTENT (posts and comments); WARN (stored for
 * the user, `myModerationStatus`, and a `moderation_warning` notification that ignores mutes and preferences); MUTE for
 * `durationHours` (1 to 720); BAN (removed, cannot rejoin). Actions on a user, and removing a user's content, reach only
 * members of a lower role than the caller's. Appends the action to the audit log; returns the resolved item.
 */
export async function resolveReports(
  ctx: RequestContext,
  communityId: string,
  targetId: string,
  raw: { action: unknown; reason?: unknown; durationHours?: unknown },
): Promise<QueueItem> {
  const community = await getCommunity(ctx, communityId);
  const { userId } = await requireRole(ctx, community.id, 'moderator');
  const input = parseInput(resolveInput, raw);
  const target = await actionTarget(ctx, community.id, targetId);
  const action = input.action;
  if (action !== 'dismiss' && target.subjectUserId) await requireOutranks(ctx, community.id, target.subjectUserId);
  if (action === 'remove_content' && target.type !== 'post' && target.type !== 'comment') {
    throw invalid('invalid_action', 'REMOVE_CONTENT applies to posts and comments only.');
  }
  if ((action === 'warn' || action === 'mute' || action === 'ban') && !target.subjectUserId) {
    throw invalid('invalid_action', 'The target has no user to act on (their account is gone).');
  }
  let durationHours: number | null = null;
  if (action === 'mute') {
    durationHours = input.durationHours ?? null;
    if (durationHours === null || durationHours < MUTE_HOURS.min || durationHours > MUTE_HOURS.max) {
      throw invalid('invalid_duration', `durationHours: a mute lasts from ${MUTE_HOURS.min} to ${MUTE_HOURS.max} hours.`);
    }
  }
  const reason = input.reason ?? null;
  const now = ctx.app.clock();
  const db = ctx.app.database.db;
  const item = await db.transaction(async (tx) => {
    const subject = target.subjectUserId!;
    if (action === 'remove_content') await removeContent(tx, target.type as ContentKind, target.id, userId, reason, now);
    // Dismissing a post or comment automod holds means it is fine: it is published (nothing happens when it is not held).
    if (action === 'dismiss' && (target.type === 'post' || target.type === 'comment')) await decideHeld(tx, community, target.type, target.id, true, now);
    if (action === 'warn') {
      await repo.insertWarning(tx, { communityId: community.id, userId: subject, warnedBy: userId, reason, createdAt: now });
      await notify(tx, { kind: 'moderation_warning', recipientIds: [subject], actorId: userId, communityId: community.id, data: { reason }, at: now });
    }
    if (action === 'mute') await muteMember(tx, community.id, subject, new Date(now.getTime() + durationHours! * 3_600_000));
    if (action === 'ban') await banMember(tx, community, subject, now);
    await audit(tx, community.id, userId, action, target, reason, now, durationHours);
    return repo.resolveItem(
      tx,
      { communityId: community.id, targetType: target.type, targetId: target.id, subjectUserId: target.subjectUserId },
      { by: userId, action, reason, at: now },
    );
  });
  return (await enrich(db, [item]))[0];
}

function audit(tx: Executor, communityId: string, actorId: string, action: AuditAction, target: { type: TargetType; id: string }, reason: string | null, at: Date, durationHours: number | null = null) {
  return repo.appendAudit(tx, { communityId, actorId, action, targetType: target.type, targetId: target.id, reason, durationHours, createdAt: at });
}

const undoInput = z.object({ reason: reasonText.optional().nullable() });

/**
 * Restores a post or comment moderators removed (moderators and above, over authors of a lower role). True when it was
 * removed and is visible again; false when it was not removed (nothing is logged then).
 */
export async function restoreContent(
  ctx: RequestContext,
  communityId: string,
  target: { postId?: string | null; commentId?: string | null },
  rawReason: unknown,
): Promise<boolean> {
  const community = await getCommunity(ctx, communityId);
  const { userId } = await requireRole(ctx, community.id, 'moderator');
  const { reason } = parseInput(undoInput, { reason: rawReason });
  const kind: ContentKind | null = target.postId && !target.commentId ? 'post' : target.commentId && !target.postId ? 'comment' : null;
  if (!kind) throw invalid('invalid_input', 'target: name exactly one of postId, commentId.');
  const id = (kind === 'post' ? target.postId : target.commentId)!;
  const [row] = isUuid(id) ? await contentForModeration(ctx.app.database.db, kind, [id]) : [];
  if (!row || row.communityId !== community.id) throw notFound(kind === 'post' ? 'Post' : 'Comment');
  if (row.authorId) await requireOutranks(ctx, community.id, row.authorId);
  const now = ctx.app.clock();
  return ctx.app.database.db.transaction(async (tx) => {
    if (!(await restoreRemoved(tx, kind, row.id))) return false;
    await audit(tx, community.id, userId, 'restore_content', { type: kind, id: row.id }, reason ?? null, now);
    return true;
  });
}

/** Lifts a ban (moderators and above): true when the user was banned; they may join again like anyone. */
export async function unbanMember(ctx: RequestContext, communityId: string, targetUserId: string, rawReason?: unknown): Promise<boolean> {
  const community = await getCommunity(ctx, communityId);
  const { userId } = await requireOutranks(ctx, community.id, targetUserId);
  const { reason } = parseInput(undoInput, { reason: rawReason });
  if (!isUuid(targetUserId)) throw notFound('Ban');
  const now = ctx.app.clock();
  return ctx.app.database.db.transaction(async (tx) => {
    if (!(await liftBan(tx, community.id, targetUserId))) return false;
    await audit(tx, community.id, userId, 'unban', { type: 'user', id: targetUserId }, reason ?? null, now);
    return true;
  });
}

/** Ends a mute at once (moderators and above, over members of a lower role): true when the member was muted. */
export async function unmuteMember(ctx: RequestContext, communityId: string, targetUserId: string, rawReason?: unknown): Promise<boolean> {
  const community = await getCommunity(ctx, communityId);
  const { userId } = await requireOutranks(ctx, community.id, targetUserId);
  const { reason } = parseInput(undoInput, { reason: rawReason });
  if (!isUuid(targetUserId)) throw notFound('Member');
  const now = ctx.app.clock();
  return ctx.app.database.db.transaction(async (tx) => {
    if (!(await endMute(tx, community.id, targetUserId, now))) return false;
    await audit(tx, community.id, userId, 'unmute', { type: 'user', id: targetUserId }, reason ?? null, now);
    return true;
  });
}

/** The tribe's audit log (owner and admins), newest first, Relay cursors. Rows are never changed or deleted. */
export async function auditLog(ctx: RequestContext, communityId: string, args: { first?: number | null; after?: string | null }): Promise<Connection<AuditEntry>> {
  const community = await getCommunity(ctx, communityId);
  await requireRole(ctx, community.id, 'admin');
  const list = `auditLog:${community.id}`;
  const { limit, after } = pageRequest(ctx, list, args, isTimeAndId);
  const rows = await repo.auditPage(ctx.app.database.db, community.id, after, limit + 1);
  return toConnection(ctx, list, rows, limit, (r) => [r.createdAt.toISOString(), r.id]);
}

/** The caller's own warnings in a tribe, newest first (the latest 50), and until when they are muted there. */
export async function myModerationStatus(
  ctx: RequestContext,
  communityId: string,
): Promise<{ warnings: ModerationWarning[]; mutedUntil: Date | null; banned: boolean }> {
  const userId = requireUser(ctx);
  const community = await getCommunity(ctx, communityId);
  const db = ctx.app.database.db;
  const [warnings, sanction] = await Promise.all([repo.warningsOf(db, community.id, userId, 50), sanctionOf(db, community.id, userId)]);
  const mutedUntil = sanction.mutedUntil && sanction.mutedUntil > ctx.app.clock() ? sanction.mutedUntil : null;
  return { warnings, mutedUntil, banned: !!sanction.bannedAt };
}
