import { fromCents } from '../commerce/index.js';
import { DateTime, loadTypeDefs, nonNull, ref } from '../kernel/graphql.js';
import * as service from './challenges.service.js';
import type { Resolvers } from './challenges.generated.js';

export const typeDefs = loadTypeDefs(import.meta.url);

export const resolvers: Resolvers = {
  DateTime,
  Query: {
    challenges: (_, a, ctx) => service.listChallenges(ctx, a.communityId, a),
    challenge: (_, a, ctx) => service.getChallenge(ctx, a.id, a.communityId),
    challengeProgress: (_, a, ctx) => service.progress(ctx, a.communityId, a.challengeId),
    challengeLeaderboard: (_, a, ctx) => service.leaderboard(ctx, a.communityId, a.challengeId, a),
  },
  Mutation: {
    createChallenge: (_, a, ctx) => service.createChallenge(ctx, a.communityId, a.input),
    enrollChallenge: (_, a, ctx) => service.enroll(ctx, a.communityId, a.challengeId),
    checkIn: (_, a, ctx) => service.checkIn(ctx, a.communityId, a.challengeId, a.input),
  },
  Challenge: {
    __resolveReference: (r, ctx) => service.readableChallenge(ctx, r.id),
    community: (c) => ref('Community', c.communityId),
    price: (c) => fromCents(c.priceCents),
    createdBy: (c) => ref('User', c.createdBy),
    viewerEnrollment: (c, _, ctx) => service.viewerEnrollment(ctx, c.id),
  },
  ChallengeEnrollment: {
    challenge: async (e, _, ctx, info) => nonNull(await service.readableChallenge(ctx, e.challengeId), info),
    user: (e) => ref('User', e.userId),
  },
  ChallengeCheckin: {
    challenge: async (c, _, ctx, info) => nonNull(await service.readableChallenge(ctx, c.challengeId), info),
    user: (c) => ref('User', c.userId),
  },
  ChallengeEnrollResult: {
    order: (r) => ref('Order', r.order?.id),
  },
};
