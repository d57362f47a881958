import { createAccount, type User } from '../identity/index.js';
import type { AppDeps } from '../kernel/index.js';
import { joinByInvite } from '../members/index.js';

/**
 * Signs a user up and opens a session; with an invite code, the new user joins the code's tribe in the
 * transaction that creates them (an unknown or revoked code creates no user: `invalid_invite`).
 */
export function signup(app: AppDeps, raw: unknown): Promise<{ user: User; sessionToken: string }> {
  return createAccount(app, raw, async (tx, userId, input) => {
    if (input.inviteCode) await joinByInvite(app, tx, userId, input.inviteCode);
  });
}
