import type { Resolvers } from './engagement.generated.js';

/** Placeholder until the direct-messages area lands its resolvers (helper C replaces this file). */
export const messagesResolvers = { Query: {}, Mutation: {} } satisfies Resolvers;
