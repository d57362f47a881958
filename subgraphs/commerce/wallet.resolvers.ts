// GraphQL resolvers of the wallet (merged into commerce.resolvers.ts). See docs/wallet.md.
import { ref } from '../kernel/graphql.js';
import type { MutationResolvers, PayoutResolvers, QueryResolvers, WalletResolvers, WalletTransactionResolvers } from './commerce.generated.js';
import { orderById } from './commerce.service.js';
import * as wallet from './wallet.service.js';

export const walletQuery: Pick<QueryResolvers, 'wallet' | 'walletTransactions' | 'payouts'> = {
  wallet: (_, a, ctx) => wallet.wallet(ctx, a.communityId),
  walletTransactions: (_, a, ctx) => wallet.walletTransactions(ctx, a.communityId, a),
  payouts: (_, a, ctx) => wallet.payouts(ctx, a),
};

export const walletMutation: Pick<MutationResolvers, 'requestPayout' | 'markPayoutPaid' | 'rejectPayout'> = {
  requestPayout: (_, a, ctx) => wallet.requestPayout(ctx, a),
  markPayoutPaid: (_, a, ctx) => wallet.markPayoutPaid(ctx, a.id),
  rejectPayout: (_, a, ctx) => wallet.rejectPayout(ctx, a.id, { reason: a.reason }),
};

export const Wallet: WalletResolvers = {
  community: (w) => ref('Community', w.communityId),
};

const KIND = {
  order_paid: 'ORDER_PAID',
  release: 'RELEASE',
  refund: 'REFUND',
  payout_requested: 'PAYOUT_REQUESTED',
  payout_paid: 'PAYOUT_PAID',
  payout_rejected: 'PAYOUT_REJECTED',
} as const;

export const WalletTransaction: WalletTransactionResolvers = {
  kind: (t) => KIND[t.kind],
  order: (t, _, ctx) => (t.orderId ? orderById(ctx, t.orderId) : null),
  payout: (t, _, ctx) => (t.payoutId ? wallet.payoutById(ctx, t.payoutId) : null),
};

export const Payout: PayoutResolvers = {
  community: (p) => ref('Community', p.communityId),
  status: (p) => wallet.payoutStatusName(p.status),
  requestedBy: (p) => ref('User', p.requestedBy),
  decidedBy: (p) => ref('User', p.decidedBy),
};
