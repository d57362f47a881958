import { DateTime, loadTypeDefs, ref } from '../kernel/graphql.js';
import { markOrderPaidManually } from './checkout.js';
import * as service from './commerce.service.js';
import { refundOrder, refundRequests, refundsOf } from './refunds.service.js';
import type { Resolvers } from './commerce.generated.js';
import { Payout, Wallet, WalletTransaction, walletMutation, walletQuery } from './wallet.resolvers.js';

export const typeDefs = loadTypeDefs(import.meta.url);

export const resolvers: Resolvers = {
  DateTime,
  Query: {
    platformOrders: (_, a, ctx) => service.platformOrders(ctx, a),
    refundRequests: (_, a, ctx) => refundRequests(ctx, a.communityId, a),
    ...walletQuery,
  },
  Mutation: {
    markOrderPaid: (_, a, ctx) => markOrderPaidManually(ctx, a.orderId),
    refundOrder: (_, a, ctx) => refundOrder(ctx, a),
    ...walletMutation,
  },
  Order: {
    __resolveReference: (r, ctx) => service.readableOrder(ctx, r.id),
    community: (o) => ref('Community', o.communityId),
    buyer: (o) => ref('User', o.buyerId),
    refundableCents: (o) => o.amountCents - o.refundedCents,
    refunds: (o, _, ctx) => refundsOf(ctx, o.id),
  },
  Wallet,
  WalletTransaction,
  Payout,
};
