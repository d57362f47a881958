import type { Executor } from '../../db/src/index.js';
import type { AppDeps } from '../kernel/index.js';
import { forgetRecipient } from '../mail/index.js';
import * as repo from './identity.repository.js';
import * as accounts from './idp-webhooks.repository.js';
import * as personalKeys from './personal-keys.repository.js';
import { announceSignedOut } from './identity.service.js';

/** The display name of a deleted account, wherever its kept content names its author. */
export const DELETED_USER_NAME = 'Deleted user';

/** The username and address a deleted account keeps: unique, derived from its id, saying nothing about the person. */
export function deletedPlaceholder(userId: string): { displayName: string; username: string; email: string } {
  const tag = userId.replace(/-/g, '').slice(0, 20);
  return { displayName: DELETED_USER_NAME, username: `deleted_${tag}`, email: `deleted_${userId}@deleted.invalid` };
}

/**
 * Deletes an account inside `tx`, all at once when it commits:
 * - every credential stops: sessions (`svc_session`) revoked, refresh tokens revoked (so every access token of their
 *   families is refused from the next request on, announced by migration 0028's triggers), personal API keys revoked,
 *   WebSockets closed (4401);
 *   the password is erased, so sign-in answers `invalid_credentials`;
 * - personal data erased: email, username, display name, avatar, bio, location, links, email tokens, and every mail to
 *   the old address (queued or sent);
 * - content kept: the row stays, named "Deleted user" (`deleted_<id>`), so posts, comments, messages and orders keep
 *   an author and tribes keep their history.
 * A deleted account stays deleted: calling this again changes nothing. Returns false when the user does not exist
 * or was deleted before.
 */
export async function deleteAccount(app: AppDeps, tx: Executor, userId: string): Promise<boolean> {
  const [user] = await repo.findUsersByIds(tx, [userId]);
  if (!user || user.deletedAt) return false;
  const now = app.clock();
  await accounts.eraseAccount(tx, userId, deletedPlaceholder(userId), now);
  await accounts.revokeAllSessions(tx, userId, now);
  await repo.revokeUserRefreshTokens(tx, userId, now);
  await personalKeys.revokeAllOfUser(tx, userId, now);
  await accounts.deleteEmailTokens(tx, userId);
  await forgetRecipient(tx, user.email);
  await announceSignedOut(tx, userId);
  return true;
}
