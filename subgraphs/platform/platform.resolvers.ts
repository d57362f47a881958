import { DateTime, loadTypeDefs, ref } from '../kernel/graphql.js';
import type { RequestContext } from '../kernel/index.js';
import * as apiKeys from './api-keys.service.js';

export const typeDefs = loadTypeDefs(import.meta.url);

type Args = Record<string, any>;

export const resolvers = {
  DateTime,
  Query: {
    apiKeys: (_: unknown, a: Args, ctx: RequestContext) => apiKeys.listApiKeys(ctx, a.handle),
    platformMe: (_: unknown, __: Args, ctx: RequestContext) => apiKeys.platformMe(ctx),
  },
  Mutation: {
    createApiKey: (_: unknown, a: Args, ctx: RequestContext) => apiKeys.createApiKey(ctx, a.handle, a.input),
    revokeApiKey: (_: unknown, a: Args, ctx: RequestContext) => apiKeys.revokeApiKey(ctx, a.handle, a.id),
  },
  ApiKeyIdentity: {
    community: (k: apiKeys.ApiKeyIdentity) => ref('Community', k.communityId),
  },
};
