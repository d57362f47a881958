// Live updates of the engagement domain: what the gateway's subscriptions read besides the notification and message
// queries (the Subscription type is subscriptions.graphql, served by gateway/src/subscriptions.ts).
import { type AppDeps, type RequestContext, requireUser } from '../kernel/index.js';
import { type Conversation, participantsOf, unreadMessageCount } from './messages.service.js';
import { unreadNotificationCount } from './notifications.service.js';

/** The viewer's unread notifications and direct messages. */
export interface UnreadCounts {
  notifications: number;
  messages: number;
}

/** The signed-in viewer's unread counts (`unauthorized` for nobody); two statements, never cached. */
export async function unreadCounts(ctx: RequestContext): Promise<UnreadCounts> {
  requireUser(ctx);
  const [notifications, messages] = await Promise.all([unreadNotificationCount(ctx), unreadMessageCount(ctx)]);
  return { notifications, messages };
}

/**
 * Who hears a change of a conversation (`conversationUpdated`): its current participants, read now. Not a viewer's
 * read: the realtime router calls it once per signal, and each participant's push is then re-read as that participant.
 */
export function conversationAudience(app: AppDeps, conversationId: string): Promise<string[]> {
  const system: RequestContext = { app, caller: null, requestId: `realtime-audience-${conversationId}` };
  return participantsOf(system, { id: conversationId } as Conversation);
}
