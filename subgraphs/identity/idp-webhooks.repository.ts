import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import { emailTokens, sessions, users } from './identity.tables.js';
import { idpWebhookMessages } from './idp-webhooks.tables.js';

/**
 * Records a webhook message as processed; false when the same message id was recorded before (a replay). A concurrent
 * delivery of the same message waits on the primary key until the first transaction ends.
 */
export async function recordMessage(db: Executor, values: typeof idpWebhookMessages.$inferInsert): Promise<boolean> {
  const rows = await db.insert(idpWebhookMessages).values(values).onConflictDoNothing().returning({ id: idpWebhookMessages.messageId });
  return rows.length === 1;
}

/** What provisioning and linking need to know of an account. */
export interface IdpAccount {
  id: string;
  email: string;
  passwordHash: string | null;
  emailVerifiedAt: Date | null;
  idpSubject: string | null;
  deletedAt: Date | null;
}

const account = {
  id: users.id,
  email: users.email,
  passwordHash: users.passwordHash,
  emailVerifiedAt: users.emailVerifiedAt,
  idpSubject: users.idpSubject,
  deletedAt: users.deletedAt,
};

/** The account linked to the provider's user id, deleted or not, locked until the transaction ends. */
export async function findAccountBySubject(tx: Executor, subject: string): Promise<IdpAccount | undefined> {
  const [row] = await tx.select(account).from(users).where(eq(users.idpSubject, subject)).limit(1).for('update');
  return row;
}

/** The account with this email (case-insensitive), locked until the transaction ends. */
export async function findAccountByEmail(tx: Executor, email: string): Promise<IdpAccount | undefined> {
  const [row] = await tx.select(account).from(users).where(sql`lower(${users.email}) = lower(${email})`).limit(1).for('update');
  return row;
}

/** The fields of an account the provider's `user.updated` may change. */
export type IdpAccountPatch = Partial<{ email: string; emailVerifiedAt: Date | null; displayName: string; avatarUrl: string | null; idpSubject: string }>;

export async function updateAccount(tx: Executor, id: string, patch: IdpAccountPatch): Promise<void> {
  if (Object.keys(patch).length > 0) await tx.update(users).set(patch).where(eq(users.id, id));
}

/**
 * Erases the personal data of an account in place and marks it deleted: the placeholder name and an address and
 * username that say nothing (`deleted_<id>`), no password, avatar, bio, location, links, verification or suspension.
 * The provider's user id stays, so that a late message about the same user finds a deleted account (and changes
 * nothing) rather than provisioning a new one.
 */
export async function eraseAccount(tx: Executor, id: string, placeholder: { displayName: string; username: string; email: string }, now: Date): Promise<void> {
  await tx
    .update(users)
    .set({
      ...placeholder,
      avatarUrl: null,
      bio: '',
      location: null,
      links: [],
      passwordHash: null,
      emailVerifiedAt: null,
      suspendedAt: null,
      suspendedUntil: null,
      suspensionReason: null,
      deletedAt: now,
    })
    .where(eq(users.id, id));
}

/** Ends every live session of the user (none is kept). */
export async function revokeAllSessions(tx: Executor, userId: string, now: Date): Promise<void> {
  await tx.update(sessions).set({ revokedAt: now }).where(and(eq(sessions.userId, userId), isNull(sessions.revokedAt)));
}

/** Deletes the user's one-time email tokens (each holds the address it was sent to). */
export async function deleteEmailTokens(tx: Executor, userId: string): Promise<void> {
  await tx.delete(emailTokens).where(eq(emailTokens.userId, userId));
}
