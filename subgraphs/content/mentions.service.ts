import DataLoader from 'dataloader';
import type { Executor } from '../../db/src/index.js';
import { type RequestContext, requestScoped } from '../kernel/index.js';
import { memberIdsByUsernames } from '../members/index.js';
import { emitEvent } from '../outbox/index.js';
import { mentionedUsernames } from './mentions.js';
import * as repo from './mentions.repository.js';
import type { MentionTarget } from './mentions.tables.js';

/** The text whose mentions are (re)resolved, and where it sits. */
export interface MentionSource {
  communityId: string;
  postId: string;
  /** Set for a comment's text, null for the post's own text. */
  commentId: string | null;
  /** The text's author: mentioning themself is ignored; the events name them. */
  authorId: string | null;
  /** The sanitized HTML as stored. */
  html: string;
}

/**
 * Resolves the `@username`s of a text to members of its tribe, once, at write time, inside the write's transaction
 * `tx`: newly mentioned users are recorded and each gets one internal `post.mentioned` outbox event; users no longer
 * mentioned are removed; unknown names and non-members stay plain text. Pass `isNew` for a text just inserted (no
 * stored mentions to compare with). Returns the user ids now mentioned.
 */
export async function syncMentions(tx: Executor, source: MentionSource, at: Date, isNew = false): Promise<string[]> {
  const target: MentionTarget = source.commentId ? { commentId: source.commentId } : { postId: source.postId };
  const names = mentionedUsernames(source.html);
  const found = names.length ? await memberIdsByUsernames(tx, source.communityId, names) : [];
  const wanted = [...new Set(found.map((m) => m.userId))].filter((id) => id !== source.authorId);
  const stored = isNew ? [] : await repo.mentionedUserIds(tx, target);
  const added = wanted.filter((id) => !stored.includes(id));
  const removed = stored.filter((id) => !wanted.includes(id));
  await repo.deleteMentions(tx, target, removed);
  await repo.insertMentions(tx, source.communityId, target, added, at);
  for (const mentionedUserId of added) {
    await emitEvent(tx, source.communityId, 'post.mentioned', {
      postId: source.postId,
      commentId: source.commentId,
      mentionedUserId,
      authorId: source.authorId,
    });
  }
  return wanted;
}

/** Removes every mention in a comment's text (a comment becoming a tombstone). */
export const clearCommentMentions = (tx: Executor, commentId: string): Promise<void> => repo.deleteMentions(tx, { commentId });

const mentionLoader = (ctx: RequestContext, of: 'post' | 'comment') =>
  requestScoped(ctx, `content.mentionsOf.${of}`, () =>
    new DataLoader<string, string[]>(async (ids) => {
      const byId = await repo.mentionsOf(ctx.app.database.db, of, ids);
      return ids.map((id) => byId.get(id) ?? []);
    }),
  );

/** The users mentioned in a post's text: one statement per request for every post of a page. */
export const postMentions = (ctx: RequestContext, postId: string): Promise<string[]> => mentionLoader(ctx, 'post').load(postId);

/** The users mentioned in a comment's text: one statement per request for every comment of a page. */
export const commentMentions = (ctx: RequestContext, commentId: string): Promise<string[]> => mentionLoader(ctx, 'comment').load(commentId);
