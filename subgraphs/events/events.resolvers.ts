import { DateTime, loadTypeDefs, ref } from '../kernel/graphql.js';
import type { RequestContext } from '../kernel/index.js';
import * as service from './events.service.js';
import type { TribeEvent } from './events.tables.js';

export const typeDefs = loadTypeDefs(import.meta.url);

type Args = Record<string, any>;

export const resolvers = {
  DateTime,
  Query: {
    platformEvents: (_: unknown, a: Args, ctx: RequestContext) => service.platformEvents(ctx, a),
  },
  Event: {
    __resolveReference: (r: { id: string }, ctx: RequestContext) => service.eventById(ctx, r.id),
    community: (e: TribeEvent) => ref('Community', e.communityId),
  },
};
