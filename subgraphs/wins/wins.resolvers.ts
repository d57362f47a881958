import { DateTime, loadTypeDefs, ref } from '../kernel/graphql.js';
import * as service from './wins.service.js';
import type { Resolvers } from './wins.generated.js';

export const typeDefs = loadTypeDefs(import.meta.url);

export const resolvers: Resolvers = {
  DateTime,
  Query: {
    wins: (_, a, ctx) => service.listWins(ctx, a.communityId, a),
    win: (_, a, ctx) => service.getWin(ctx, a.id, a.communityId),
  },
  Mutation: {
    postWin: (_, a, ctx) => service.postWin(ctx, a.communityId, a.input),
    approveWin: (_, a, ctx) => service.approveWin(ctx, a.communityId, a.id),
  },
  Win: {
    __resolveReference: (r, ctx) => service.readableWin(ctx, r.id),
    community: (w) => ref('Community', w.communityId),
    author: (w) => ref('User', w.authorId),
    approvedBy: (w) => ref('User', w.approvedBy),
  },
};
