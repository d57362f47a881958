import { fromCents } from '../commerce/index.js';
import { DateTime, loadTypeDefs, ref } from '../kernel/graphql.js';
import type { RequestContext } from '../kernel/index.js';
import * as service from './challenges.service.js';
import type { Challenge, ChallengeCheckin, ChallengeEnrollment } from './challenges.tables.js';

export const typeDefs = loadTypeDefs(import.meta.url);

type Args = Record<string, any>;

export const resolvers = {
  DateTime,
  Query: {
    challenges: (_: unknown, a: Args, ctx: RequestContext) => service.listChallenges(ctx, a.communityId, a),
    challenge: (_: unknown, a: Args, ctx: RequestContext) => service.getChallenge(ctx, a.id, a.communityId),
    challengeProgress: (_: unknown, a: Args, ctx: RequestContext) => service.progress(ctx, a.communityId, a.challengeId),
    challengeLeaderboard: (_: unknown, a: Args, ctx: RequestContext) => service.leaderboard(ctx, a.communityId, a.challengeId, a),
  },
  Mutation: {
    createChallenge: (_: unknown, a: Args, ctx: RequestContext) => service.createChallenge(ctx, a.communityId, a.input),
    enrollChallenge: (_: unknown, a: Args, ctx: RequestContext) => service.enroll(ctx, a.communityId, a.challengeId),
    checkIn: (_: unknown, a: Args, ctx: RequestContext) => service.checkIn(ctx, a.communityId, a.challengeId, a.input),
  },
  Challenge: {
    __resolveReference: (r: { id: string }, ctx: RequestContext) => service.challengeById(ctx, r.id),
    community: (c: Challenge) => ref('Community', c.communityId),
    price: (c: Challenge) => fromCents(c.priceCents),
    createdBy: (c: Challenge) => ref('User', c.createdBy),
    viewerEnrollment: (c: Challenge, _: unknown, ctx: RequestContext) => service.viewerEnrollment(ctx, c.id),
  },
  ChallengeEnrollment: {
    challenge: (e: ChallengeEnrollment, _: unknown, ctx: RequestContext) => service.challengeById(ctx, e.challengeId),
    user: (e: ChallengeEnrollment) => ref('User', e.userId),
  },
  ChallengeCheckin: {
    challenge: (c: ChallengeCheckin, _: unknown, ctx: RequestContext) => service.challengeById(ctx, c.challengeId),
    user: (c: ChallengeCheckin) => ref('User', c.userId),
  },
  LeaderboardEntry: {
    user: (e: service.LeaderboardEntry) => ref('User', e.userId),
  },
  ChallengeEnrollResult: {
    order: (r: service.EnrollResult) => ref('Order', r.order?.id),
  },
};
