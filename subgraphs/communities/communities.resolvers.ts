import { DateTime, JSONScalar, loadTypeDefs } from '../kernel/graphql.js';
import { invalid } from '../kernel/index.js';
import * as service from './communities.service.js';
import type { Resolvers } from './communities.generated.js';

export const typeDefs = loadTypeDefs(import.meta.url);

export const resolvers: Resolvers = {
  DateTime,
  Query: {
    community: (_, a, ctx) => {
      if (a.id) return service.getCommunity(ctx, a.id);
      if (a.handle) return service.getCommunityByHandle(ctx, a.handle);
      throw invalid('invalid_input', 'Pass handle or id.');
    },
    communities: (_, a, ctx) => service.listCommunities(ctx, a),
    discoverCommunities: (_, a, ctx) => service.discoverCommunities(ctx, a),
    communityCategories: (_, _a, ctx) => service.communityCategories(ctx),
  },
  Mutation: {
    createCommunity: (_, a, ctx) => service.createCommunity(ctx, a.input),
    updateCommunity: (_, a, ctx) => service.updateCommunity(ctx, a.id, a.input),
    deleteCommunity: (_, a, ctx) => service.deleteCommunity(ctx, a.id),
  },
  JSON: JSONScalar,
  Community: {
    __resolveReference: (ref, ctx) => service.findCommunity(ctx, ref.id),
    settings: (c) => service.communitySettings(c),
    metadata: (c) => c.metadata ?? {},
  },
  CommunitySettings: {
    __resolveReference: async (ref, ctx) => {
      const community = await service.findCommunity(ctx, ref.communityId);
      return community ? service.communitySettings(community) : null;
    },
  },
};
