import { DateTime, loadTypeDefs, ref } from '../kernel/graphql.js';
import * as admin from './admin.service.js';
import * as apiKeys from './api-keys.service.js';
import type { Resolvers } from './platform.generated.js';

export const typeDefs = loadTypeDefs(import.meta.url);

export const resolvers: Resolvers = {
  DateTime,
  Query: {
    apiKeys: (_, a, ctx) => apiKeys.listApiKeys(ctx, a.handle),
    platformMe: (_, __, ctx) => apiKeys.platformMe(ctx),
    platformStats: (_, __, ctx) => admin.platformStats(ctx),
    platformAuditLog: (_, a, ctx) => admin.platformAuditLog(ctx, a),
  },
  Mutation: {
    createApiKey: (_, a, ctx) => apiKeys.createApiKey(ctx, a.handle, a.input),
    revokeApiKey: (_, a, ctx) => apiKeys.revokeApiKey(ctx, a.handle, a.id),
    suspendUser: async (_, a, ctx) => ref('User', (await admin.suspendUser(ctx, a.userId, a)).id),
    unsuspendUser: async (_, a, ctx) => ref('User', (await admin.unsuspendUser(ctx, a.userId)).id),
    suspendCommunity: (_, a, ctx) => admin.suspendCommunity(ctx, a.communityId, a),
    unsuspendCommunity: (_, a, ctx) => admin.unsuspendCommunity(ctx, a.communityId),
    featureCommunity: (_, a, ctx) => admin.featureCommunity(ctx, a.communityId, a.featured),
  },
  ApiKeyIdentity: {
    community: (k) => ref('Community', k.communityId),
  },
  Community: {
    __resolveReference: (r) => ({ id: r.id }),
    suspended: async (c, _, ctx) => (await admin.communityState(ctx, c.id)).suspendedAt !== null,
    suspensionReason: (c, _, ctx) => admin.communitySuspensionReason(ctx, c.id),
    featured: async (c, _, ctx) => (await admin.communityState(ctx, c.id)).featuredAt !== null,
  },
  User: {
    __resolveReference: (r) => ({ id: r.id }),
    suspension: (u, _, ctx) => admin.suspensionOf(ctx, u.id),
    isPlatformStaff: (u, _, ctx) => admin.userIsStaff(ctx, u.id),
  },
  PlatformAuditEntry: {
    actor: (e) => ref('User', e.actorId),
    targetUser: (e) => (e.targetType === 'user' ? ref('User', e.targetId) : null),
    targetCommunity: (e) => (e.targetType === 'community' ? ref('Community', e.targetId) : null),
    until: (e) => (typeof e.details.until === 'string' ? new Date(e.details.until) : null),
  },
};
