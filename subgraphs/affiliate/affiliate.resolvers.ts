import { DateTime, loadTypeDefs, ref } from '../kernel/graphql.js';
import type { RequestContext } from '../kernel/index.js';
import * as service from './affiliate.service.js';
import type { AffiliateCode } from './affiliate.tables.js';

export const typeDefs = loadTypeDefs(import.meta.url);

type Args = Record<string, any>;

export const resolvers = {
  DateTime,
  Mutation: {
    myAffiliateCode: (_: unknown, a: Args, ctx: RequestContext) => service.myAffiliateCode(ctx, a.communityId),
  },
  AffiliateCode: {
    community: (c: AffiliateCode) => ref('Community', c.communityId),
    user: (c: AffiliateCode) => ref('User', c.userId),
    clickCount: (c: AffiliateCode, _: unknown, ctx: RequestContext) => service.clickCount(ctx, c.id),
  },
};
