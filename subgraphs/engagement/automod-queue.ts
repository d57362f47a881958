import type { HeldContentQueue } from '../content/index.js';
import * as repo from './moderation.repository.js';

/**
 * The moderation queue as automod's `HeldContentQueue` (wired in server/deps.ts as `AppDeps.heldContentQueue`):
 * a post or comment automod holds opens its queue item (no report: `reportCount` 0; its `post`/`comment` shows status
 * `pending_review` and `heldReason`); a moderator's review resolves the item (approving as `dismiss`, rejecting as
 * `remove_content`, reason `automod: approved` / `automod: rejected`) and is appended to the tribe's audit log.
 */
export const heldContentQueue: HeldContentQueue = {
  async held(tx, target, _reason, at) {
    await repo.openItem(
      tx,
      { communityId: target.communityId, targetType: target.kind, targetId: target.id, subjectUserId: target.authorId, snapshot: null },
      at,
    );
  },
  async reviewed(tx, target, decision, at) {
    const action = decision.approved ? 'dismiss' : 'remove_content';
    const reason = decision.approved ? 'automod: approved' : 'automod: rejected';
    await repo.resolveItem(
      tx,
      { communityId: target.communityId, targetType: target.kind, targetId: target.id, subjectUserId: target.authorId },
      { by: decision.by, action, reason, at },
    );
    await repo.appendAudit(tx, { communityId: target.communityId, actorId: decision.by, action, targetType: target.kind, targetId: target.id, reason, createdAt: at });
  },
};
