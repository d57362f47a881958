// The daily email digest of unread notifications, and the one-click unsubscribe that turns a kind's email off. A use
// case over identity (addresses, names), members (which tribes the user is still in), engagement (notifications and
// preferences) and mail (the outbox): it reads each only through its index.
import {
  type Notification,
  type NotificationKind,
  emailEnabledKinds,
  notificationSentence,
  setEmailPreference,
  unreadForEmailDigest,
} from '../engagement/index.js';
import { findUsersByIds } from '../identity/index.js';
import { type AppDeps, type RequestContext, acceptedSecrets, invalid } from '../kernel/index.js';
import { enqueueMail } from '../mail/index.js';
import { viewerTribes } from '../members/index.js';
import * as repo from './digest.repository.js';
import { signUnsubscribe, verifyUnsubscribe } from './unsubscribe.js';

/** A user's first digest covers the notifications of the last day; later ones, those since the previous digest. */
export const FIRST_DIGEST_WINDOW_MS = 24 * 3_600_000;
/** Notifications older than this are never mailed (a digest missed for two days is not made up for). */
export const DIGEST_LOOKBACK_MS = 48 * 3_600_000;
/** Notifications listed in one digest (the newest); the mail says how many more are waiting. */
export const DIGEST_MAX_ITEMS = 20;
/** Recipients read per page of the job. */
const USERS_PER_PAGE = 100;

/** How the digest names a kind ("Stop emails about replies"). */
export const KIND_LABELS: Record<NotificationKind, string> = {
  reply: 'replies',
  mention: 'mentions',
  reaction: 'reactions',
  event_created: 'new events',
  event_reminder: 'event reminders',
  role_changed: 'role changes',
  win_approved: 'approved wins',
  course_completed: 'completed courses',
  message: 'messages',
  moderation_warning: 'moderator warnings',
  refund_required: 'refunds to make',
};

/** The one-click unsubscribe URL of `kinds` for `userId` (POST for one click, GET for a confirmation page). */
export function unsubscribeUrl(app: AppDeps, userId: string, kinds: NotificationKind[]): string {
  return `${app.config.publicUrl}/unsubscribe?token=${signUnsubscribe(app.config.jwtSecret, { userId, kinds })}`;
}

/** What one digest run did. */
export interface DigestResult {
  /** Users with unread, email-enabled notifications read. */
  considered: number;
  /** Digests queued. */
  queued: number;
}

class AlreadySent extends Error {}

/**
 * The `mail.digest` job: queues to each user one mail listing their unread notifications (newest first, at most
 * `DIGEST_MAX_ITEMS`) of the kinds whose EMAIL preference is on, updated since their previous digest (the first: the last
 * day), leaving out tribes they left. At most one digest per user per UTC day (the outbox's dedupe key), and a
 * notification is mailed once (a per-user watermark moved in the mail's transaction; a reaction notification that
 * gathered more reactions since comes again). The mail's `List-Unsubscribe` one-click link turns off email for every
 * kind the digest was sent for (those email-enabled when it was built); its body links each listed kind's own.
 */
export async function sendDigests(app: AppDeps): Promise<DigestResult> {
  const db = app.database.db;
  const now = app.clock();
  const day = now.toISOString().slice(0, 10);
  const result: DigestResult = { considered: 0, queued: 0 };
  let after: string | null = null;
  for (;;) {
    const page = await unreadForEmailDigest(db, {
      since: new Date(now.getTime() - DIGEST_LOOKBACK_MS),
      afterUserId: after,
      userLimit: USERS_PER_PAGE,
      perUser: DIGEST_MAX_ITEMS + 1,
    });
    if (page.length === 0) break;
    after = page[page.length - 1].userId;
    const users = new Map((await findUsersByIds(app, page.map((e) => e.userId))).map((u) => [u.id, u]));
    const watermarks = await repo.watermarksOf(db, page.map((e) => e.userId));
    const actorIds = [...new Set(page.flatMap((e) => e.notifications.map((n) => n.actorIds[0]).filter(Boolean)))];
    const actors = new Map((await findUsersByIds(app, actorIds)).map((u) => [u.id, u.displayName || u.username]));
    for (const entry of page) {
      const user = users.get(entry.userId);
      if (!user) continue;
      result.considered += 1;
      const from = watermarks.get(user.id) ?? new Date(now.getTime() - FIRST_DIGEST_WINDOW_MS);
      let items = entry.notifications.filter((n) => n.updatedAt > from && n.updatedAt <= now);
      if (items.length === 0) continue;
      // Only tribes the user is still in (a notification of a tribe left since stays out of the mail).
      const ctx: RequestContext = { app, caller: { userId: user.id }, requestId: `digest-${user.id}` };
      const tribes = new Set((await viewerTribes(ctx)).map((t) => t.communityId));
      items = items.filter((n) => !n.communityId || tribes.has(n.communityId));
      if (items.length === 0) continue;
      const kinds = await emailEnabledKinds(db, user.id);
      if (kinds.length === 0) continue;
      const mail = composeDigest(app, user, items, kinds, actors);
      try {
        await db.transaction(async (tx) => {
          if (!(await repo.advance(tx, user.id, now, now))) throw new AlreadySent();
          const id = await enqueueMail(tx, { ...mail, kind: 'digest', to: user.email, dedupeKey: `digest:${user.id}:${day}`, now });
          if (!id) throw new AlreadySent();
        });
        result.queued += 1;
      } catch (error) {
        if (!(error instanceof AlreadySent)) throw error;
      }
    }
    if (page.length < USERS_PER_PAGE) break;
  }
  return result;
}

/** The subject, text and unsubscribe link of one user's digest. */
function composeDigest(
  app: AppDeps,
  user: { id: string; displayName: string },
  items: Notification[],
  enabledKinds: NotificationKind[],
  actors: Map<string, string>,
): { subject: string; text: string; unsubscribeUrl: string } {
  const shown = items.slice(0, DIGEST_MAX_ITEMS);
  const count = items.length > DIGEST_MAX_ITEMS ? `${DIGEST_MAX_ITEMS}+` : String(items.length);
  const subject = `You have ${count} unread notification${items.length === 1 ? '' : 's'}`;
  const lines = shown.map((n) => `- ${notificationSentence(n, n.actorIds[0] ? (actors.get(n.actorIds[0]) ?? null) : null)}`);
  const listed = [...new Set(shown.map((n) => n.kind))];
  const all = unsubscribeUrl(app, user.id, enabledKinds);
  const text = [
    `Hello ${user.displayName},`,
    '',
    `Here is what happened while you were away:`,
    '',
    ...lines,
    ...(items.length > DIGEST_MAX_ITEMS ? ['- and more'] : []),
    '',
    `See them all: ${app.config.publicUrl}/notifications`,
    '',
    '--',
    `You get this daily digest because email is on for ${enabledKinds.map((k) => KIND_LABELS[k]).join(', ')}.`,
    ...listed.map((k) => `Stop emails about ${KIND_LABELS[k]}: ${unsubscribeUrl(app, user.id, [k])}`),
    `Stop all of these emails: ${all}`,
    `Or choose in your notification settings: ${app.config.publicUrl}/settings/notifications`,
    '',
  ].join('\n');
  return { subject, text, unsubscribeUrl: all };
}

/** The kinds and user an unsubscribe token names, or BAD_USER_INPUT invalid_token (tampered, malformed, other secret). */
export function readUnsubscribeToken(app: AppDeps, token: unknown): { userId: string; kinds: NotificationKind[] } {
  const claim = verifyUnsubscribe(acceptedSecrets(app.config.jwtSecret, app.config.jwtSecretPrevious), token);
  if (!claim) throw invalid('invalid_token', 'This unsubscribe link is not valid.');
  return claim;
}

/**
 * The one-click unsubscribe (RFC 8058): turns the EMAIL preference of the token's kinds off for its user (no session:
 * the signed token is the authority). Idempotent. Returns the kinds turned off; BAD_USER_INPUT invalid_token otherwise.
 */
export async function unsubscribe(app: AppDeps, token: unknown): Promise<NotificationKind[]> {
  const { userId, kinds } = readUnsubscribeToken(app, token);
  const [user] = await findUsersByIds(app, [userId]);
  if (!user) return kinds; // the account is gone: nothing is mailed to it any more
  const at = app.clock();
  await app.database.db.transaction(async (tx) => {
    for (const kind of kinds) await setEmailPreference(tx, userId, kind, false, at);
  });
  return kinds;
}
