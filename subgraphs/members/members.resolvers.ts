import { DateTime, loadTypeDefs, ref } from '../kernel/graphql.js';
import type { RequestContext } from '../kernel/index.js';
import { viewerRole } from './members.access.js';
import * as service from './members.service.js';
import type { Member } from './members.tables.js';

export const typeDefs = loadTypeDefs(import.meta.url);

type Args = Record<string, any>;

export const resolvers = {
  DateTime,
  Query: {
    members: (_: unknown, a: Args, ctx: RequestContext) => service.listMembers(ctx, a.communityId, a),
    member: (_: unknown, a: Args, ctx: RequestContext) => service.getMember(ctx, a.communityId, a.userId),
    platformMembers: (_: unknown, a: Args, ctx: RequestContext) => service.platformMembers(ctx, a),
    platformMember: (_: unknown, a: Args, ctx: RequestContext) => service.platformMember(ctx, a.username),
  },
  Mutation: {
    joinCommunity: (_: unknown, a: Args, ctx: RequestContext) => service.joinCommunity(ctx, a.handle, a.inviteCode),
    leaveCommunity: (_: unknown, a: Args, ctx: RequestContext) => service.leaveCommunity(ctx, a.handle),
    updateMemberRole: (_: unknown, a: Args, ctx: RequestContext) => service.updateMemberRole(ctx, a.communityId, a.userId, a.role),
    removeMember: (_: unknown, a: Args, ctx: RequestContext) => service.removeMember(ctx, a.communityId, a.userId),
    createInvite: (_: unknown, a: Args, ctx: RequestContext) => service.createInvite(ctx, a.communityId),
  },
  Community: {
    __resolveReference: (r: { id: string }) => r,
    memberCount: (c: { id: string }, _: unknown, ctx: RequestContext) => service.memberCount(ctx, c.id),
    viewerRole: (c: { id: string }, _: unknown, ctx: RequestContext) => viewerRole(ctx, c.id),
  },
  Member: {
    __resolveReference: (r: { id: string }, ctx: RequestContext) => service.memberById(ctx, r.id),
    community: (m: Member) => ref('Community', m.communityId),
    user: (m: Member) => ref('User', m.userId),
  },
};
