import { ref } from '../kernel/graphql.js';
import * as service from './automod.service.js';
import type { Resolvers } from './content.generated.js';

/** Automod: a tribe's settings, its held posts and comments, and the moderators' review. */
export const automodResolvers = {
  Query: {
    moderationSettings: (_, a, ctx) => service.moderationSettings(ctx, a.communityId),
    heldContent: (_, a, ctx) => service.heldContent(ctx, a.communityId, a),
  },
  Mutation: {
    updateModerationSettings: (_, a, ctx) => service.updateModerationSettings(ctx, a.communityId, a.input),
    reviewHeldContent: (_, a, ctx) => service.reviewHeldContent(ctx, a.communityId, a.target, a.approve),
  },
  ModerationSettings: {
    community: (s) => ref('Community', s.communityId),
  },
  CommunitySettings: {
    __resolveReference: (r) => ({ communityId: r.communityId }),
    moderation: (s, _, ctx) => service.readableModerationSettings(ctx, s.communityId),
  },
  HeldContent: {
    post: (h) => (h.kind === 'post' ? h.post : null),
    comment: (h) => (h.kind === 'comment' ? h.comment : null),
    reason: (h) => (h.kind === 'post' ? h.post.heldReason : h.comment.heldReason) ?? 'approval_required',
  },
} satisfies Resolvers;
