import { DateTime, loadTypeDefs, ref } from '../kernel/graphql.js';
import type { RequestContext } from '../kernel/index.js';
import { markOrderPaidManually } from './checkout.js';
import * as service from './commerce.service.js';
import type { Order } from './commerce.tables.js';

export const typeDefs = loadTypeDefs(import.meta.url);

type Args = Record<string, any>;

export const resolvers = {
  DateTime,
  Query: {
    platformOrders: (_: unknown, a: Args, ctx: RequestContext) => service.platformOrders(ctx, a),
  },
  Mutation: {
    markOrderPaid: (_: unknown, a: Args, ctx: RequestContext) => markOrderPaidManually(ctx, a.orderId),
  },
  Order: {
    __resolveReference: (r: { id: string }, ctx: RequestContext) => service.orderById(ctx, r.id),
    community: (o: Order) => ref('Community', o.communityId),
    buyer: (o: Order) => ref('User', o.buyerId),
  },
};
