import { DateTime, loadTypeDefs, ref } from '../kernel/graphql.js';
import * as service from './affiliate.service.js';
import type { Resolvers } from './affiliate.generated.js';

export const typeDefs = loadTypeDefs(import.meta.url);

export const resolvers: Resolvers = {
  DateTime,
  Mutation: {
    myAffiliateCode: (_, a, ctx) => service.myAffiliateCode(ctx, a.communityId),
  },
  AffiliateCode: {
    community: (c) => ref('Community', c.communityId),
    user: (c) => ref('User', c.userId),
    clickCount: (c, _, ctx) => service.clickCount(ctx, c.id),
  },
};
