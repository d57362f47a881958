import { DateTime, loadTypeDefs } from '../kernel/graphql.js';
import { type RequestContext, invalid } from '../kernel/index.js';
import * as service from './communities.service.js';

export const typeDefs = loadTypeDefs(import.meta.url);

type Args = Record<string, any>;

export const resolvers = {
  DateTime,
  Query: {
    community: (_: unknown, a: Args, ctx: RequestContext) => {
      if (a.id) return service.getCommunity(ctx, a.id);
      if (a.handle) return service.getCommunityByHandle(ctx, a.handle);
      throw invalid('invalid_input', 'Pass handle or id.');
    },
    communities: (_: unknown, a: Args, ctx: RequestContext) => service.listCommunities(ctx, a),
  },
  Mutation: {
    createCommunity: (_: unknown, a: Args, ctx: RequestContext) => service.createCommunity(ctx, a.input),
    updateCommunity: (_: unknown, a: Args, ctx: RequestContext) => service.updateCommunity(ctx, a.id, a.input),
    deleteCommunity: (_: unknown, a: Args, ctx: RequestContext) => service.deleteCommunity(ctx, a.id),
  },
  Community: {
    __resolveReference: (ref: { id: string }, ctx: RequestContext) => service.findCommunity(ctx, ref.id),
  },
};
