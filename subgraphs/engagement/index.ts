// Engagement: in-app notifications and their preferences (notifications.*), direct messages and blocks (messages.*).

// ---- notifications ----
// `notify(tx, { kind, recipientIds, actorId, communityId, subject, data })` writes notifications inside the caller's
// transaction, applying the self, membership, mute and preference rules (the messages area calls it for `message`).
// `notificationById(ctx, id)` and `unreadNotificationCount(ctx)` read as the signed-in caller (live updates re-read
// with them). The digest reads `unreadForEmailDigest` / `emailEnabledKinds`; the one-click unsubscribe calls
// `setEmailPreference(db, userId, kind, false)`. `describe` writes a notification's sentence (the digest's too).
export {
  notify,
  notificationById,
  unreadNotificationCount,
  emailEnabledKinds,
  unreadForEmailDigest,
  setEmailPreference,
  describe as notificationSentence,
  notificationText,
  NOTIFICATION_KINDS,
  CHANNELS as NOTIFICATION_CHANNELS,
  DEFAULT_PREFERENCES as DEFAULT_NOTIFICATION_PREFERENCES,
  REACTION_WINDOW_MS,
} from './notifications.service.js';
export type { Channel as NotificationChannel, DigestEntry, Notification, NotificationKind, NotifyInput, NotificationSubject } from './notifications.service.js';
export { consumeNotifications, consumeOutbox, runFanouts, sendEventReminders, FANOUT_CHUNK, REMINDER_LEAD_MS } from './notifications.jobs.js';

// ---- messages ----
// Live updates re-read with `conversationForViewer(ctx, id)` and `messageForViewer(ctx, id)` (null unless the caller is
// a current participant; batched per request, so use a fresh context per check) and `unreadMessageCount(ctx)` (unread
// messages of others over the caller's current conversations, deleted ones excepted).
export {
  conversationForViewer,
  messageForViewer,
  unreadMessageCount,
  participantsOf,
  MAX_MESSAGE_CHARS,
  MAX_PARTICIPANTS,
  MESSAGE_RATE_LIMITS,
} from './messages.service.js';
export type { Conversation, Message } from './messages.service.js';

// ---- realtime ----
// `unreadCounts(ctx)`: the viewer's unread notifications and messages; `conversationAudience(app, id)`: who hears a
// conversation's changes (the gateway's subscription router reads it once per signal).
export { unreadCounts, conversationAudience } from './realtime.service.js';
export type { UnreadCounts } from './realtime.service.js';

// ---- automod's held content in the moderation queue (server/deps.ts wires it as `AppDeps.heldContentQueue`) ----
export { heldContentQueue } from './automod-queue.js';
