import type { Resolvers } from './engagement.generated.js';
import { unreadCounts } from './realtime.service.js';

/** The realtime area's root fields. */
export const realtimeResolvers = {
  Query: {
    unreadCounts: (_, _a, ctx) => unreadCounts(ctx),
  },
} satisfies Resolvers;
