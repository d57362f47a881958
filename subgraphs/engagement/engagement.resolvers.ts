import { DateTime, loadTypeDefs } from '../kernel/graphql.js';
import type { Resolvers } from './engagement.generated.js';
import { messagesResolvers } from './messages.resolvers.js';
import { moderationResolvers } from './moderation.resolvers.js';
import { notificationsResolvers } from './notifications.resolvers.js';
import { realtimeResolvers } from './realtime.resolvers.js';
import { supportResolvers } from './support.resolvers.js';

export const typeDefs = loadTypeDefs(import.meta.url);

/** The engagement subgraph: each area's resolvers, merged (an area owns its own types and root fields). */
export const resolvers: Resolvers = {
  DateTime,
  ...notificationsResolvers,
  ...messagesResolvers,
  ...supportResolvers,
  ...moderationResolvers,
  Query: { ...notificationsResolvers.Query, ...messagesResolvers.Query, ...realtimeResolvers.Query, ...supportResolvers.Query, ...moderationResolvers.Query },
  Mutation: { ...notificationsResolvers.Mutation, ...messagesResolvers.Mutation, ...supportResolvers.Mutation, ...moderationResolvers.Mutation },
};
