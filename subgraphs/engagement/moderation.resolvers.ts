import { ref } from '../kernel/graphql.js';
import type { Resolvers } from './engagement.generated.js';
import * as service from './moderation.service.js';
import type { AuditAction, ReportReason, TargetType } from './moderation.tables.js';

/** GraphQL spells the moderation enums in upper case; the tables in lower case. */
const up = <T extends string>(value: string) => value.toUpperCase() as Uppercase<T>;
const down = <T extends string>(value: string) => value.toLowerCase() as T;

/** Reports, the moderation queue and its actions, undo actions, the audit log, the viewer's standing. */
export const moderationResolvers = {
  Query: {
    moderationQueue: (_, a, ctx) => service.moderationQueue(ctx, a.communityId, { ...a, status: a.status ? down<'open' | 'resolved'>(a.status) : null }),
    auditLog: (_, a, ctx) => service.auditLog(ctx, a.communityId, a),
    myModerationStatus: (_, a, ctx) => service.myModerationStatus(ctx, a.communityId),
  },
  Mutation: {
    report: (_, a, ctx) => service.report(ctx, a.communityId, { target: a.target, reason: down<ReportReason>(a.reason), note: a.note }),
    resolveReports: (_, a, ctx) =>
      service.resolveReports(ctx, a.communityId, a.targetId, { action: down(a.action), reason: a.reason, durationHours: a.durationHours }),
    restoreContent: (_, a, ctx) => service.restoreContent(ctx, a.communityId, a, a.reason),
    unbanMember: (_, a, ctx) => service.unbanMember(ctx, a.communityId, a.userId, a.reason),
    unmuteMember: (_, a, ctx) => service.unmuteMember(ctx, a.communityId, a.userId, a.reason),
  },
  Report: {
    community: (r) => ref('Community', r.communityId),
    targetType: (r) => up<TargetType>(r.targetType),
    reason: (r) => up<ReportReason>(r.reason),
  },
  ModerationItem: {
    community: (i) => ref('Community', i.communityId),
    targetType: (i) => up<TargetType>(i.targetType),
    subject: (i) => ref('User', i.subjectUserId),
    status: (i) => up<'open' | 'resolved'>(i.status),
    reasons: (i) => i.reasons.map((r) => up<ReportReason>(r)),
    post: (i) => ref('Post', i.postId),
    lastReportedAt: (i) => i.lastReportAt,
    resolvedBy: (i) => ref('User', i.resolvedBy),
    action: (i) => (i.action ? up<AuditAction>(i.action) : null),
  },
  AuditLogEntry: {
    actor: (e) => ref('User', e.actorId),
    action: (e) => up<AuditAction>(e.action),
    targetType: (e) => up<TargetType>(e.targetType),
  },
} satisfies Resolvers;
