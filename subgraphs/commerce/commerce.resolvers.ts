import { DateTime, loadTypeDefs, ref } from '../kernel/graphql.js';
import { markOrderPaidManually } from './checkout.js';
import * as service from './commerce.service.js';
import type { Resolvers } from './commerce.generated.js';

export const typeDefs = loadTypeDefs(import.meta.url);

export const resolvers: Resolvers = {
  DateTime,
  Query: {
    platformOrders: (_, a, ctx) => service.platformOrders(ctx, a),
  },
  Mutation: {
    markOrderPaid: (_, a, ctx) => markOrderPaidManually(ctx, a.orderId),
  },
  Order: {
    __resolveReference: (r, ctx) => service.orderById(ctx, r.id),
    community: (o) => ref('Community', o.communityId),
    buyer: (o) => ref('User', o.buyerId),
  },
};
