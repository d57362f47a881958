import { DateTime, loadTypeDefs, ref } from '../kernel/graphql.js';
import * as apiKeys from './api-keys.service.js';
import type { Resolvers } from './platform.generated.js';

export const typeDefs = loadTypeDefs(import.meta.url);

export const resolvers: Resolvers = {
  DateTime,
  Query: {
    apiKeys: (_, a, ctx) => apiKeys.listApiKeys(ctx, a.handle),
    platformMe: (_, __, ctx) => apiKeys.platformMe(ctx),
  },
  Mutation: {
    createApiKey: (_, a, ctx) => apiKeys.createApiKey(ctx, a.handle, a.input),
    revokeApiKey: (_, a, ctx) => apiKeys.revokeApiKey(ctx, a.handle, a.id),
  },
  ApiKeyIdentity: {
    community: (k) => ref('Community', k.communityId),
  },
};
