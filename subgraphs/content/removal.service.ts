import type { Executor } from '../../db/src/index.js';
import * as repo from './removal.repository.js';

export type { ModeratedRow as ModeratedContent } from './removal.repository.js';

/** What moderation acts on in the content domain. */
export type ContentKind = 'post' | 'comment';

/**
 * Posts or comments by id with their current text and removal, whatever their visibility (the moderation queue shows
 * moderators the target as it is now; the caller authorizes). Missing ids are absent.
 */
export function contentForModeration(db: Executor, kind: ContentKind, ids: readonly string[]): Promise<repo.ModeratedRow[]> {
  return kind === 'post' ? repo.postsByIds(db, ids) : repo.commentsByIds(db, ids);
}

/**
 * Removes a post or comment by moderation inside the caller's transaction: it stays in the database but is hidden from
 * everyone except moderators and above and its author (feeds, lists, reads, search). False when already removed or gone.
 */
export function removeContent(tx: Executor, kind: ContentKind, id: string, by: string, reason: string | null, at: Date): Promise<boolean> {
  return repo.markRemoved(tx, kind, id, by, reason, at);
}

/** Reverses `removeContent`; false when the post or comment was not removed. */
export function restoreContent(tx: Executor, kind: ContentKind, id: string): Promise<boolean> {
  return repo.clearRemoved(tx, kind, id);
}
