import { z } from 'zod';
import type { Executor } from '../../db/src/index.js';
import { getCommunity } from '../communities/index.js';
import {
  type Connection,
  type RequestContext,
  isTimeAndId,
  isUuid,
  notFound,
  pageRequest,
  parseInput,
  rateLimited,
  text,
  toConnection,
} from '../kernel/index.js';
import { getMember, RANK, requireRole, viewerRole, type Role } from '../members/index.js';
import { emitEvent } from '../outbox/index.js';
import { AUTOMOD_LIMITS, findBlockedDomain, findBlockedWord, normaliseDomain, normaliseWords, type HeldReason } from './automod.js';
import * as repo from './automod.repository.js';
import * as comments from './comments.repository.js';
import { bumpPostCounters, deletePost, findPostsByIds, publishedScores } from './content.repository.js';
import type { Comment, Post } from './content.tables.js';
import { syncMentions } from './mentions.service.js';

export type { HeldReason } from './automod.js';

/** A tribe's automod settings as the web app shows them. */
export interface ModerationSettings {
  communityId: string;
  blockedWords: string[];
  blockedDomains: string[];
  newMemberPostLimit: number;
  requireApproval: boolean;
  updatedAt: Date | null;
}

/** The settings of a tribe that never changed them (`newMemberPostLimit`: `NEW_MEMBER_POST_LIMIT`, default 3). */
export const defaultModerationSettings = (ctx: RequestContext) => ({
  blockedWords: [] as string[],
  blockedDomains: [] as string[],
  newMemberPostLimit: ctx.app.config.automod.newMemberPostLimit,
  requireApproval: false,
});

/** How long a member counts as new in a tribe (the window of `newMemberPostLimit`). */
export const NEW_MEMBER_WINDOW_MS = 24 * 60 * 60 * 1000;

async function settingsOf(ctx: RequestContext, communityId: string): Promise<ModerationSettings> {
  const row = await repo.findSettings(ctx.app.database.db, communityId);
  if (!row) return { communityId, ...defaultModerationSettings(ctx), updatedAt: null };
  return {
    communityId,
    blockedWords: row.blockedWords,
    blockedDomains: row.blockedDomains,
    newMemberPostLimit: row.newMemberPostLimit,
    requireApproval: row.requireApproval,
    updatedAt: row.updatedAt,
  };
}

/** A tribe's automod settings: moderators and above read them. */
export async function moderationSettings(ctx: RequestContext, communityId: string): Promise<ModerationSettings> {
  const community = await getCommunity(ctx, communityId);
  await requireRole(ctx, community.id, 'moderator');
  return settingsOf(ctx, community.id);
}

/**
 * A tribe's automod settings when the caller may read them (moderators and above, as `moderationSettings`), else
 * null: what `Community.settings.moderation` answers, so everyone else sees no blocked words or domains.
 */
export async function readableModerationSettings(ctx: RequestContext, communityId: string): Promise<ModerationSettings | null> {
  const role = await viewerRole(ctx, communityId);
  return role && RANK[role] >= RANK.moderator ? settingsOf(ctx, communityId) : null;
}

const entry = text({ max: AUTOMOD_LIMITS.domainChars });
const list = z.array(entry).max(AUTOMOD_LIMITS.entries, `at most ${AUTOMOD_LIMITS.entries} entries`);
const settingsInput = z.object({
  blockedWords: list
    .transform(normaliseWords)
    .refine((ws) => ws.every((w) => w.length <= AUTOMOD_LIMITS.wordChars), `each word at most ${AUTOMOD_LIMITS.wordChars} characters`)
    .nullish(),
  blockedDomains: list
    .transform((ds, c) => {
      const out: string[] = [];
      for (const d of ds) {
        if (!d.trim()) continue;
        const host = normaliseDomain(d);
        if (!host) {
          c.addIssue({ code: 'custom', message: `"${d.slice(0, 100)}" is not a domain name (for example spam.example)` });
          return z.NEVER;
        }
        if (!out.includes(host)) out.push(host);
      }
      return out;
    })
    .nullish(),
  newMemberPostLimit: z.number().int('must be a whole number').min(0, 'must be 0 or more').max(1000, 'at most 1000').nullish(),
  requireApproval: z.boolean().nullish(),
});

/**
 * Changes some of a tribe's automod settings (owner and admins); the others keep theirs. Lists replace the stored
 * ones: words lower-cased and de-duplicated, domains reduced to their host name. Returns the settings.
 */
export async function updateModerationSettings(ctx: RequestContext, communityId: string, raw: unknown): Promise<ModerationSettings> {
  const community = await getCommunity(ctx, communityId);
  const { userId } = await requireRole(ctx, community.id, 'admin');
  const input = parseInput(settingsInput, raw);
  const db = ctx.app.database.db;
  const current = await settingsOf(ctx, community.id);
  await repo.upsertSettings(db, {
    communityId: community.id,
    blockedWords: input.blockedWords ?? current.blockedWords,
    blockedDomains: input.blockedDomains ?? current.blockedDomains,
    newMemberPostLimit: input.newMemberPostLimit ?? current.newMemberPostLimit,
    requireApproval: input.requireApproval ?? current.requireApproval,
    updatedBy: userId,
    updatedAt: ctx.app.clock(),
  });
  return settingsOf(ctx, community.id);
}

/** A post or comment automod holds, as the moderation queue is told of it. */
export interface HeldTarget {
  communityId: string;
  kind: 'post' | 'comment';
  id: string;
  authorId: string | null;
}

/**
 * Where held content goes besides `heldContent`: the tribe's moderation queue (the engagement domain's, which content
 * must not import; `server/deps.ts` wires it). Both calls run in the transaction of the change they announce.
 */
export interface HeldContentQueue {
  /** A post or comment was just held for review. */
  held(tx: Executor, target: HeldTarget, reason: HeldReason, at: Date): Promise<void>;
  /** A moderator approved (published) or rejected (deleted) a held post or comment. */
  reviewed(tx: Executor, target: HeldTarget, decision: { by: string; approved: boolean }, at: Date): Promise<void>;
}

declare module '../kernel/context.js' {
  interface AppDeps {
    /** The moderation queue held content enters (content/automod.service.ts); unset: only `heldContent` lists it. */
    heldContentQueue?: HeldContentQueue;
  }
}

/** Tells the moderation queue that `target` was just held (in the transaction that stored it). */
export async function reportHeld(ctx: RequestContext, tx: Executor, target: HeldTarget, reason: HeldReason, at: Date): Promise<void> {
  await ctx.app.heldContentQueue?.held(tx, target, reason, at);
}

/** What automod decided about a new post or comment: publish it, or hold it for review and why. */
export type Screening = { held: false } | { held: true; reason: HeldReason };

const exempt = (role: Role) => RANK[role] >= RANK.moderator;

function screenText(settings: ModerationSettings, html: string): Screening {
  if (findBlockedWord(html, settings.blockedWords)) return { held: true, reason: 'blocked_word' };
  if (findBlockedDomain(html, settings.blockedDomains)) return { held: true, reason: 'blocked_domain' };
  return { held: false };
}

/**
 * Automod on a post about to be published by `userId` with `role` (moderators and above are exempt from all of it):
 * a text with a blocked word or domain, or any post while `requireApproval` is on, is held for review. A new post
 * must also pass `newMemberPostCheck` in the transaction that writes it.
 */
export async function screenPost(ctx: RequestContext, communityId: string, role: Role, html: string): Promise<Screening> {
  if (exempt(role)) return { held: false };
  const settings = await settingsOf(ctx, communityId);
  const screened = screenText(settings, html);
  if (screened.held) return screened;
  return settings.requireApproval ? { held: true, reason: 'approval_required' } : { held: false };
}

/**
 * The new-member limit for a new post by `userId`: the returned check refuses it past the tribe's
 * `newMemberPostLimit` posts within 24 hours of joining (`new_member_post_limit`, RATE_LIMITED, with the seconds
 * until the 24 hours end); moderators and above are exempt. The member and the settings are read now; the check
 * counts in the transaction that inserts the post, after `requireUnderPostingLimit` took the author's lock, so it
 * sees every post of the author committed before it and concurrent posts cannot all pass (nor does it need a second
 * connection while others wait on the lock).
 */
export async function newMemberPostCheck(ctx: RequestContext, communityId: string, userId: string, role: Role, now: Date): Promise<(tx: Executor) => Promise<void>> {
  const pass = async () => undefined;
  if (exempt(role)) return pass;
  const { joinedAt } = await getMember(ctx, communityId, userId);
  const newUntil = joinedAt.getTime() + NEW_MEMBER_WINDOW_MS;
  if (newUntil <= now.getTime()) return pass;
  const limit = (await settingsOf(ctx, communityId)).newMemberPostLimit;
  return async (tx) => {
    if ((await repo.postsSince(tx, communityId, userId, joinedAt)) < limit) return;
    const retryAfterSeconds = Math.max(1, Math.ceil((newUntil - now.getTime()) / 1000));
    throw rateLimited('new_member_post_limit', `New members post at most ${limit} times in their first 24 hours in this tribe: wait ${retryAfterSeconds} s.`, retryAfterSeconds);
  };
}

/** Automod on a comment by the caller (a member): held for review when it has a blocked word or domain. */
export async function screenComment(ctx: RequestContext, communityId: string, html: string): Promise<Screening> {
  const role = await viewerRole(ctx, communityId);
  if (!role || exempt(role)) return { held: false };
  return screenText(await settingsOf(ctx, communityId), html);
}

// ---- review: moderators approve or reject held content ----

/** A held post or comment of a tribe's review list. */
export type HeldItem = { kind: 'post'; post: Post; createdAt: Date } | { kind: 'comment'; comment: Comment; createdAt: Date };

/**
 * The tribe's held posts and comments (moderators and above), oldest first, Relay cursors: what waits for review.
 * Three statements a page.
 */
export async function heldContent(
  ctx: RequestContext,
  communityId: string,
  args: { first?: number | null; after?: string | null },
): Promise<Connection<HeldItem>> {
  const community = await getCommunity(ctx, communityId);
  await requireRole(ctx, community.id, 'moderator');
  const listName = `heldContent:${community.id}`;
  const { limit, after } = pageRequest(ctx, listName, args, isTimeAndId);
  const db = ctx.app.database.db;
  const rows = await repo.heldPage(db, community.id, after, limit + 1);
  const [posts, found] = await Promise.all([
    findPostsByIds(db, rows.filter((r) => r.kind === 'post').map((r) => r.id)),
    repo.findCommentsByIds(db, rows.filter((r) => r.kind === 'comment').map((r) => r.id)),
  ]);
  const postById = new Map(posts.map((p) => [p.id, p]));
  const commentById = new Map(found.map((c) => [c.id, c]));
  const items: HeldItem[] = rows.flatMap((r): HeldItem[] => {
    if (r.kind === 'post') {
      const post = postById.get(r.id);
      return post ? [{ kind: 'post', post, createdAt: r.createdAt }] : [];
    }
    const comment = commentById.get(r.id);
    return comment ? [{ kind: 'comment', comment, createdAt: r.createdAt }] : [];
  });
  return toConnection(ctx, listName, items, limit, (i) => [i.createdAt.toISOString(), i.kind === 'post' ? i.post.id : i.comment.id]);
}

const targetInput = z
  .object({ postId: z.string().refine(isUuid, 'postId must be a UUID').nullish(), commentId: z.string().refine(isUuid, 'commentId must be a UUID').nullish() })
  .refine((t) => !!t.postId !== !!t.commentId, 'name exactly one of postId and commentId');

/**
 * A moderator's decision on a held post or comment of their tribe (moderators and above; `not_found` unless it is held
 * in that tribe). Approving publishes it as if it had just been posted: a post gets its publication time, its
 * `post.created` event and its mentions; a comment counts on its post, notifies whom it replies to and its mentions.
 * Rejecting deletes it. The moderation queue hears of the decision (`HeldContentQueue.reviewed`). Returns true.
 */
export async function reviewHeldContent(
  ctx: RequestContext,
  communityId: string,
  target: { postId?: string | null; commentId?: string | null },
  approve: boolean,
): Promise<boolean> {
  const community = await getCommunity(ctx, communityId);
  const { userId } = await requireRole(ctx, community.id, 'moderator');
  const t = parseInput(targetInput, target);
  const now = ctx.app.clock();
  await ctx.app.database.db.transaction(async (tx) => {
    const decided = await decideHeld(tx, community, t.postId ? 'post' : 'comment', (t.postId ?? t.commentId)!, approve, now);
    if (!decided) throw notFound(t.postId ? 'Held post' : 'Held comment');
    await ctx.app.heldContentQueue?.reviewed(tx, decided, { by: userId, approved: approve }, now);
  });
  return true;
}

/**
 * Approves (publishes) or rejects (deletes) a held post or comment of `community` inside `tx`, as `reviewHeldContent`
 * does, without authorization (the caller authorizes: the moderation queue's actions). Returns what was decided, or
 * null when it is not held in that tribe.
 */
export async function decideHeld(
  tx: Executor,
  community: { id: string; handle: string },
  kind: 'post' | 'comment',
  id: string,
  approve: boolean,
  now: Date,
): Promise<HeldTarget | null> {
  if (kind === 'post') {
    const post = await repo.lockHeldPost(tx, id);
    if (!post || post.communityId !== community.id) return null;
    const target: HeldTarget = { communityId: community.id, kind, id: post.id, authorId: post.authorId };
    if (!approve) {
      await deletePost(tx, post.id);
      return target;
    }
    const published = await repo.publishPost(tx, post.id, { publishedAt: now, ...publishedScores(now) });
    await syncMentions(tx, { communityId: community.id, postId: post.id, commentId: null, authorId: post.authorId, html: published.body }, now, true);
    await emitEvent(tx, community.id, 'post.created', { postId: post.id, authorId: post.authorId, handle: community.handle });
    return target;
  }
  const comment = await repo.lockHeldComment(tx, id);
  if (!comment || comment.communityId !== community.id) return null;
  const target: HeldTarget = { communityId: community.id, kind, id: comment.id, authorId: comment.authorId };
  if (!approve) {
    await comments.deleteComment(tx, comment.id);
    return target;
  }
  await repo.publishComment(tx, comment.id);
  await announceComment(tx, comment, now);
  return target;
}

/**
 * What a comment's publication does besides its row (its creation, or a moderator approving it): counts on its post,
 * resolves its mentions and emits `comment.replied` to the parent comment's author (a reply) or the post's author,
 * unless that is the commenter. In the caller's transaction.
 */
export async function announceComment(tx: Executor, comment: Comment, now: Date): Promise<void> {
  const [post] = await findPostsByIds(tx, [comment.postId]);
  if (!post) return;
  let recipientUserId = post.authorId;
  if (comment.parentId) recipientUserId = (await comments.findComment(tx, comment.parentId))?.authorId ?? null;
  await bumpPostCounters(tx, post.id, { comments: 1, activeAt: now });
  await syncMentions(tx, { communityId: post.communityId, postId: post.id, commentId: comment.id, authorId: comment.authorId, html: comment.body ?? '' }, now, true);
  if (recipientUserId && recipientUserId !== comment.authorId) {
    await emitEvent(tx, post.communityId, 'comment.replied', {
      commentId: comment.id,
      postId: post.id,
      parentId: comment.parentId,
      authorId: comment.authorId,
      recipientUserId,
    });
  }
}
