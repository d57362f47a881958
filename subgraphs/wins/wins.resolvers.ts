import { DateTime, loadTypeDefs, ref } from '../kernel/graphql.js';
import type { RequestContext } from '../kernel/index.js';
import * as service from './wins.service.js';
import type { Win } from './wins.tables.js';

export const typeDefs = loadTypeDefs(import.meta.url);

type Args = Record<string, any>;

export const resolvers = {
  DateTime,
  Query: {
    wins: (_: unknown, a: Args, ctx: RequestContext) => service.listWins(ctx, a.communityId, a),
    win: (_: unknown, a: Args, ctx: RequestContext) => service.getWin(ctx, a.id, a.communityId),
  },
  Mutation: {
    postWin: (_: unknown, a: Args, ctx: RequestContext) => service.postWin(ctx, a.communityId, a.input),
    approveWin: (_: unknown, a: Args, ctx: RequestContext) => service.approveWin(ctx, a.communityId, a.id),
  },
  Win: {
    __resolveReference: (r: { id: string }, ctx: RequestContext) => service.winById(ctx, r.id),
    community: (w: Win) => ref('Community', w.communityId),
    author: (w: Win) => ref('User', w.authorId),
    approvedBy: (w: Win) => ref('User', w.approvedBy),
  },
};
