import DataLoader from 'dataloader';
import { type RequestContext, invalid, isUuid, notFound, requestScoped, requireUser } from '../kernel/index.js';
import { recordActivity, requireRole } from '../members/index.js';
import { emitEvent } from '../outbox/index.js';
import { bumpPostCounters } from './content.repository.js';
import { getPost } from './content.service.js';
import * as repo from './reactions.repository.js';
import type { ReactionTargetRef } from './reactions.repository.js';
import { REACTION_KINDS, type ReactionKind } from './reactions.tables.js';

export { REACTION_KINDS, type ReactionKind } from './reactions.tables.js';

/** The reactions of a post or comment as the viewer sees them (`Reactions` in the schema). */
export interface Reactions {
  total: number;
  /** Kinds with at least one reaction, in the order of `REACTION_KINDS`. */
  counts: Array<{ kind: ReactionKind; count: number }>;
  /** The signed-in viewer's own reaction, or null. */
  viewerReaction: ReactionKind | null;
}

/** Loader key of a target: `p:<postId>` or `c:<commentId>`. */
const keyOf = (t: ReactionTargetRef) => (t.postId !== undefined ? `p:${t.postId}` : `c:${t.commentId}`);

/** Splits loader keys into post and comment ids. */
function idsOf(keys: readonly string[]): { postIds: string[]; commentIds: string[] } {
  const postIds: string[] = [];
  const commentIds: string[] = [];
  for (const k of keys) (k.startsWith('p:') ? postIds : commentIds).push(k.slice(2));
  return { postIds, commentIds };
}

const rowKey = (r: { postId: string | null; commentId: string | null }) => (r.postId ? `p:${r.postId}` : `c:${r.commentId}`);

/** What one target's reactions are: the count per kind, and the kind the viewer reacted with (null if none). */
interface TargetReactions {
  byKind: Map<ReactionKind, number>;
  mine: ReactionKind | null;
}

/** Counts per kind and the viewer's own reaction for every target loaded in this request, in one SQL statement. */
const reactionsLoader = (ctx: RequestContext) =>
  requestScoped(ctx, 'content.reactions', () =>
    new DataLoader<string, TargetReactions>(async (keys) => {
      const { postIds, commentIds } = idsOf(keys);
      const byKey = new Map<string, TargetReactions>();
      for (const r of await repo.countsFor(ctx.app.database.db, ctx.caller?.userId ?? null, postIds, commentIds)) {
        const key = rowKey(r);
        if (!byKey.has(key)) byKey.set(key, { byKind: new Map(), mine: null });
        const target = byKey.get(key)!;
        target.byKind.set(r.kind, r.n);
        if (r.mine) target.mine = r.kind;
      }
      return keys.map((k) => byKey.get(k) ?? { byKind: new Map(), mine: null });
    }),
  );

/** The reactions of a post or comment, batched with every other target of the request (one statement in all). */
export async function reactionsOf(ctx: RequestContext, target: ReactionTargetRef): Promise<Reactions> {
  const { byKind, mine } = await reactionsLoader(ctx).load(keyOf(target));
  const counts = REACTION_KINDS.filter((kind) => (byKind.get(kind) ?? 0) > 0).map((kind) => ({ kind, count: byKind.get(kind)! }));
  return { total: counts.reduce((sum, c) => sum + c.count, 0), counts, viewerReaction: mine };
}

/** `{ postId | commentId }` with exactly one set, else `invalid_target`. */
function parseTarget(raw: { postId?: string | null; commentId?: string | null }): ReactionTargetRef {
  const hasPost = raw.postId !== undefined && raw.postId !== null;
  const hasComment = raw.commentId !== undefined && raw.commentId !== null;
  if (hasPost === hasComment) throw invalid('invalid_target', 'target: set exactly one of postId and commentId.');
  return hasPost ? { postId: raw.postId! } : { commentId: raw.commentId! };
}

interface ResolvedTarget {
  ref: ReactionTargetRef;
  postId: string;
  communityId: string;
  /** The author of the post or comment reacted to. */
  authorId: string | null;
}

/**
 * The target as the caller may react to it: visible (`getPost`; a comment through its post), published, not a
 * tombstone (else `not_found`), and the caller a member of its tribe (else `forbidden`).
 */
async function resolveTarget(ctx: RequestContext, raw: { postId?: string | null; commentId?: string | null }): Promise<ResolvedTarget & { userId: string }> {
  requireUser(ctx);
  const ref = parseTarget(raw);
  let resolved: ResolvedTarget;
  if (ref.postId !== undefined) {
    const post = await getPost(ctx, ref.postId);
    if (post.status !== 'published') throw notFound('Post');
    resolved = { ref: { postId: post.id }, postId: post.id, communityId: post.communityId, authorId: post.authorId };
  } else {
    const comment = isUuid(ref.commentId) ? await repo.findCommentTarget(ctx.app.database.db, ref.commentId) : undefined;
    if (!comment) throw notFound('Comment');
    const post = await getPost(ctx, comment.postId);
    if (comment.deletedAt || post.status !== 'published') throw notFound('Comment');
    resolved = { ref: { commentId: comment.id }, postId: post.id, communityId: post.communityId, authorId: comment.authorId };
  }
  const { userId } = await requireRole(ctx, resolved.communityId, 'member');
  return { ...resolved, userId };
}

/** Forgets what this request loaded about a target after it changed. */
function forget(ctx: RequestContext, ref: ReactionTargetRef): void {
  reactionsLoader(ctx).clear(keyOf(ref));
}

/**
 * Sets the caller's reaction on a post or comment of their tribe (members only): one per user per target, reacting
 * again with another kind replaces it. A new reaction counts on the target and, on a post, emits `post.reacted`.
 */
export async function react(ctx: RequestContext, rawTarget: { postId?: string | null; commentId?: string | null }, kind: ReactionKind): Promise<Reactions> {
  const target = await resolveTarget(ctx, rawTarget);
  if (!REACTION_KINDS.includes(kind)) throw invalid('invalid_kind', `kind: must be one of ${REACTION_KINDS.join(', ')}.`);
  const now = ctx.app.clock();
  await ctx.app.database.db.transaction(async (tx) => {
    const added = await repo.upsertReaction(tx, { communityId: target.communityId, userId: target.userId, kind, ...target.ref });
    if (added) {
      if (target.ref.postId !== undefined) await bumpPostCounters(tx, target.postId, { reactions: 1 });
      else await repo.bumpCommentReactions(tx, target.ref.commentId, 1);
      await emitEvent(tx, target.communityId, 'post.reacted', {
        postId: target.postId,
        ...(target.ref.commentId !== undefined ? { commentId: target.ref.commentId } : {}),
        userId: target.userId,
        kind,
        authorId: target.authorId,
      });
    }
    await recordActivity(tx, target.communityId, target.userId, now);
  });
  forget(ctx, target.ref);
  return reactionsOf(ctx, target.ref);
}

/** Removes the caller's reaction from a post or comment (members only); nothing changes when there is none. */
export async function unreact(ctx: RequestContext, rawTarget: { postId?: string | null; commentId?: string | null }): Promise<Reactions> {
  const target = await resolveTarget(ctx, rawTarget);
  await ctx.app.database.db.transaction(async (tx) => {
    if (!(await repo.deleteReaction(tx, target.userId, target.ref))) return;
    if (target.ref.postId !== undefined) await bumpPostCounters(tx, target.postId, { reactions: -1 });
    else await repo.bumpCommentReactions(tx, target.ref.commentId, -1);
  });
  forget(ctx, target.ref);
  return reactionsOf(ctx, target.ref);
}
