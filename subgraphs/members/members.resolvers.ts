import { DateTime, loadTypeDefs, ref } from '../kernel/graphql.js';
import { viewerRole } from './members.access.js';
import * as service from './members.service.js';
import type { Resolvers } from './members.generated.js';

export const typeDefs = loadTypeDefs(import.meta.url);

export const resolvers: Resolvers = {
  DateTime,
  Query: {
    members: (_, a, ctx) => service.listMembers(ctx, a.communityId, a),
    member: (_, a, ctx) => service.getMember(ctx, a.communityId, a.userId),
    platformMembers: (_, a, ctx) => service.platformMembers(ctx, a),
    platformMember: (_, a, ctx) => service.platformMember(ctx, a.username),
  },
  Mutation: {
    joinCommunity: (_, a, ctx) => service.joinCommunity(ctx, a.handle, a.inviteCode),
    leaveCommunity: (_, a, ctx) => service.leaveCommunity(ctx, a.handle),
    updateMemberRole: (_, a, ctx) => service.updateMemberRole(ctx, a.communityId, a.userId, a.role),
    removeMember: (_, a, ctx) => service.removeMember(ctx, a.communityId, a.userId),
    createInvite: (_, a, ctx) => service.createInvite(ctx, a.communityId),
  },
  Community: {
    __resolveReference: (r) => r,
    memberCount: (c, _, ctx) => service.memberCount(ctx, c.id),
    viewerRole: (c, _, ctx) => viewerRole(ctx, c.id),
  },
  User: {
    __resolveReference: (r) => ({ id: r.id }),
    memberships: (u, a, ctx) => service.memberships(ctx, u.id, a),
  },
  Member: {
    __resolveReference: (r, ctx) => service.readableMember(ctx, r.id),
    community: (m) => ref('Community', m.communityId),
    user: (m) => ref('User', m.userId),
  },
};
