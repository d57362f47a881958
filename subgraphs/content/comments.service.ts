import { z } from 'zod';
import type { Executor } from '../../db/src/index.js';
import { type RequestContext, forbidden, invalid, isUuid, notFound, paging, parseInput, toPage, type Page, text } from '../kernel/index.js';
import { RANK, recordActivity, requireActiveMember, requireRole, viewerRole } from '../members/index.js';
import { emitEvent } from '../outbox/index.js';
import * as comments from './comments.repository.js';
import { bumpPostCounters } from './content.repository.js';
import { cleanBody, getPost, seesRemoved, withBody } from './content.service.js';
import type { Comment } from './content.tables.js';
import { clearCommentMentions, syncMentions } from './mentions.service.js';
import { requireUnderPostingLimit } from './posting-limit.js';
import { reportHeld, screenComment } from './automod.service.js';

const commentText = text({ max: 50_000 });
const commentInput = withBody({ parentId: z.string().refine(isUuid, 'parent_id must be a UUID or null').optional().nullable() }, commentText, true);
const updateCommentInput = withBody({}, commentText, true);

/**
 * Comments of a post the caller may see, oldest first (threads via `parentId`; tombstones keep their place). Comments
 * removed by moderators are listed for moderators and above and for their author only (a reply to one keeps its
 * `parentId`).
 */
export async function listComments(
  ctx: RequestContext,
  communityId: string | null | undefined,
  postId: string,
  raw: { page?: number | null; perPage?: number | null },
): Promise<Page<Comment>> {
  const post = await getPost(ctx, postId, communityId);
  const p = paging(raw.page, raw.perPage);
  const removedVisibleTo = seesRemoved(await viewerRole(ctx, post.communityId)) ? 'all' : (ctx.caller?.userId ?? null);
  return toPage(await comments.listComments(ctx.app.database.db, post.id, removedVisibleTo, p.perPage + 1, p.offset), p);
}

/**
 * Comments on a published post (members). A parent must be a live comment of the same post (a tombstone takes no
 * replies: `invalid_parent`). Bumps the post's counters, records the commenter's activity, resolves `@mentions` and
 * emits `comment.replied` to the parent comment's author (a reply) or the post's author (top level), unless that is
 * the commenter: all in one transaction.
 */
export async function createComment(
  ctx: RequestContext,
  communityId: string | null | undefined,
  postId: string,
  raw: unknown,
): Promise<Comment> {
  const post = await getPost(ctx, postId, communityId);
  const { userId } = await requireActiveMember(ctx, post.communityId);
  const input = parseInput(commentInput, raw);
  if (post.status !== 'published') throw invalid('invalid_input', 'Comments are open on published posts only.');
  const body = cleanBody(input.body ?? '', input.bodyField);
  const now = ctx.app.clock();
  const screened = await screenComment(ctx, post.communityId, body);
  return ctx.app.database.db.transaction(async (tx) => {
    await requireUnderPostingLimit(ctx, tx, userId, now);
    let recipientUserId = post.authorId;
    if (input.parentId) {
      // Locked so that a concurrent delete of the parent waits for this reply (and then leaves a tombstone).
      const parent = await comments.lockComment(tx, input.parentId, 'share');
      if (!parent || parent.postId !== post.id) throw invalid('invalid_parent', 'parent_id must be a comment of the same post.');
      if (parent.deletedAt) throw invalid('invalid_parent', 'parent_id names a deleted comment, which takes no replies.');
      if (parent.status !== 'published') throw invalid('invalid_parent', 'parent_id names a comment held for review, which takes no replies yet.');
      recipientUserId = parent.authorId;
    }
    const comment = await comments.insertComment(tx, {
      postId: post.id,
      communityId: post.communityId,
      authorId: userId,
      parentId: input.parentId ?? null,
      body,
      createdAt: now,
      ...(screened.held ? { status: 'pending_review' as const, heldReason: screened.reason } : {}),
    });
    await recordActivity(tx, post.communityId, userId, now);
    // A held comment counts, mentions and notifies when a moderator approves it (automod.service.ts announceComment).
    if (screened.held) {
      await reportHeld(ctx, tx, { communityId: post.communityId, kind: 'comment', id: comment.id, authorId: userId }, screened.reason, now);
      return comment;
    }
    await bumpPostCounters(tx, post.id, { comments: 1, activeAt: now });
    await syncMentions(tx, { communityId: post.communityId, postId: post.id, commentId: comment.id, authorId: userId, html: body }, now, true);
    if (recipientUserId && recipientUserId !== userId) {
      await emitEvent(tx, post.communityId, 'comment.replied', {
        commentId: comment.id,
        postId: post.id,
        parentId: comment.parentId,
        authorId: userId,
        recipientUserId,
      });
    }
    return comment;
  });
}

/**
 * A live comment the caller may change: visible to them (its post is), in `communityId` when given, not a tombstone,
 * and theirs or in a tribe where they are moderator or above. Missing, hidden, foreign and tombstoned comments are
 * `not_found`; someone else's comment for a plain member is `forbidden`; anonymous callers `unauthorized`.
 */
async function changeableComment(ctx: RequestContext, communityId: string | null | undefined, id: string): Promise<Comment> {
  const comment = isUuid(id) ? await comments.findComment(ctx.app.database.db, id) : undefined;
  if (!comment || (communityId && comment.communityId !== communityId)) throw notFound('Comment');
  await getPost(ctx, comment.postId, communityId);
  const { role, userId } = await requireRole(ctx, comment.communityId, 'member');
  if (comment.deletedAt) throw notFound('Comment');
  if (comment.authorId !== userId && RANK[role] < RANK.moderator) throw forbidden('Only the author or a moderator changes a comment.');
  return comment;
}

/**
 * Replaces a comment's text (the author, or moderators and above), sanitized and validated as on creation; sets
 * `updatedAt` and re-resolves its mentions (new ones are recorded and announced, dropped ones removed).
 */
export async function updateComment(ctx: RequestContext, communityId: string | null | undefined, id: string, raw: unknown): Promise<Comment> {
  const comment = await changeableComment(ctx, communityId, id);
  const input = parseInput(updateCommentInput, raw);
  const body = cleanBody(input.body ?? '', input.bodyField);
  const now = ctx.app.clock();
  return ctx.app.database.db.transaction(async (tx) => {
    const row = await comments.updateCommentBody(tx, comment.id, body, now);
    if (!row) throw notFound('Comment');
    await syncMentions(tx, { communityId: row.communityId, postId: row.postId, commentId: row.id, authorId: row.authorId, html: body }, now);
    return row;
  });
}

/**
 * Deletes a comment (the author, or moderators and above). One with replies becomes a tombstone (no text, no
 * mentions, `deletedAt` set) so the thread stays readable; one without is deleted, and so are tombstones above it
 * left without replies. The post's comment count drops by one, in the same transaction.
 */
export async function deleteComment(ctx: RequestContext, communityId: string | null | undefined, id: string): Promise<boolean> {
  const comment = await changeableComment(ctx, communityId, id);
  const now = ctx.app.clock();
  await ctx.app.database.db.transaction(async (tx) => {
    const locked = await comments.lockComment(tx, comment.id, 'update');
    if (!locked || locked.deletedAt) throw notFound('Comment');
    if (await comments.hasReplies(tx, locked.id)) {
      await comments.tombstoneComment(tx, locked.id, now);
      await clearCommentMentions(tx, locked.id);
    } else {
      await comments.deleteComment(tx, locked.id);
      await pruneTombstones(tx, locked.parentId);
    }
    await bumpPostCounters(tx, locked.postId, { comments: -1 });
  });
  return true;
}

/** Deletes the tombstone `id` and the tombstones above it once nothing replies to them any more. */
async function pruneTombstones(tx: Executor, id: string | null): Promise<void> {
  for (let at = id; at; ) {
    const parent = await comments.lockComment(tx, at, 'update');
    if (!parent?.deletedAt || (await comments.hasReplies(tx, parent.id))) return;
    await comments.deleteComment(tx, parent.id);
    at = parent.parentId;
  }
}
