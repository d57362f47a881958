import { ref } from '../kernel/graphql.js';
import type { NotificationChannel, Resolvers } from './engagement.generated.js';
import * as service from './notifications.service.js';
import type { Channel } from './notifications.tables.js';

const toChannel = (c: Channel): NotificationChannel => (c === 'in_app' ? 'IN_APP' : 'EMAIL');
const fromChannel = (c: NotificationChannel): Channel => (c === 'IN_APP' ? 'in_app' : 'email');
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** In-app notifications: the caller's list, unread count, read marks, preferences and muted tribes. */
export const notificationsResolvers = {
  Query: {
    notifications: (_, a, ctx) => service.listNotifications(ctx, a),
    unreadNotificationCount: (_, _a, ctx) => service.unreadNotificationCount(ctx),
    notification: (_, a, ctx) => service.notificationById(ctx, a.id),
    notificationPreferences: (_, _a, ctx) => service.notificationPreferences(ctx),
  },
  Mutation: {
    markNotificationsRead: (_, a, ctx) => service.markNotificationsRead(ctx, a),
    updateNotificationPreferences: (_, a, ctx) =>
      service.updateNotificationPreferences(
        ctx,
        a.preferences.map((p) => ({ kind: p.kind, channel: fromChannel(p.channel), enabled: p.enabled })),
      ),
    muteCommunity: (_, a, ctx) => service.muteCommunity(ctx, a.communityId, a.muted),
  },
  Notification: {
    read: (n) => n.readAt !== null,
    community: (n) => ref('Community', n.communityId),
    actors: (n) => service.actorsOf(n).map((id) => ref('User', id)),
    text: (n, _a, ctx) => service.notificationText(ctx, n),
    post: (n) => ref('Post', n.postId),
    event: (n) => ref('Event', n.eventId),
    win: (n) => ref('Win', n.winId),
    course: (n) => ref('Course', n.courseId),
    reaction: (n) => (n.kind === 'reaction' ? str(n.data.reaction) : null),
    role: (n) => (n.kind === 'role_changed' ? str(n.data.role) : null),
  },
  NotificationPreference: {
    channel: (p) => toChannel(p.channel),
  },
} satisfies Resolvers;
