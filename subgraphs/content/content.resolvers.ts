import { DateTime, loadTypeDefs, nonNull, ref } from '../kernel/graphql.js';
import { automodResolvers } from './automod.resolvers.js';
import * as comments from './comments.service.js';
import * as service from './content.service.js';
import * as feed from './feed.service.js';
import * as reactions from './reactions.service.js';
import * as searching from './search.service.js';
import { commentMentions, postMentions } from './mentions.service.js';
import { presentMediaUrls } from '../media/index.js';
import type { Resolvers } from './content.generated.js';

export const typeDefs = loadTypeDefs(import.meta.url);

export const resolvers: Resolvers = {
  DateTime,
  Query: {
    posts: (_, a, ctx) => service.listPosts(ctx, a.communityId, a),
    post: (_, a, ctx) => service.getPost(ctx, a.id, a.communityId),
    comments: (_, a, ctx) => comments.listComments(ctx, a.communityId, a.postId, a),
    platformPosts: (_, a, ctx) => service.platformPosts(ctx, a),
    homeFeed: (_, a, ctx) => feed.homeFeed(ctx, a),
    communityFeed: (_, a, ctx) => feed.communityFeed(ctx, a.communityId, a),
    search: (_, a, ctx) => searching.search(ctx, a),
    ...automodResolvers.Query,
  },
  Mutation: {
    createPost: (_, a, ctx) => service.createPost(ctx, a.communityId, a.input),
    updatePost: (_, a, ctx) => service.updatePost(ctx, a.communityId, a.id, a.input),
    deletePost: (_, a, ctx) => service.deletePost(ctx, a.communityId, a.id),
    createComment: (_, a, ctx) => comments.createComment(ctx, a.communityId, a.postId, a.input),
    updateComment: (_, a, ctx) => comments.updateComment(ctx, a.communityId, a.id, a.input),
    deleteComment: (_, a, ctx) => comments.deleteComment(ctx, a.communityId, a.id),
    react: (_, a, ctx) => reactions.react(ctx, a.target, a.kind),
    unreact: (_, a, ctx) => reactions.unreact(ctx, a.target),
    ...automodResolvers.Mutation,
  },
  ModerationSettings: automodResolvers.ModerationSettings,
  HeldContent: automodResolvers.HeldContent,
  CommunitySettings: automodResolvers.CommunitySettings,
  Post: {
    __resolveReference: (r, ctx) => service.readablePost(ctx, r.id),
    community: (p) => ref('Community', p.communityId),
    author: (p) => ref('User', p.authorId),
    isPinned: (p) => p.pinnedAt !== null,
    // Uploaded media come back signed: whoever reads the post may fetch them (private tribes' media need it).
    mediaUrls: (p, _, ctx) => presentMediaUrls(ctx.app, p.mediaUrls),
    reactions: (p, _, ctx) => reactions.reactionsOf(ctx, { postId: p.id }),
    mentions: async (p, _, ctx) => (await postMentions(ctx, p.id)).map((id) => ref('User', id)),
    moderation: (p) => (p.removedAt ? { removedAt: p.removedAt, reason: p.removedReason } : null),
  },
  Comment: {
    post: async (c, _, ctx, info) => nonNull(await service.readablePost(ctx, c.postId), info),
    author: (c) => ref('User', c.authorId),
    reactions: (c, _, ctx) => reactions.reactionsOf(ctx, { commentId: c.id }),
    mentions: async (c, _, ctx) => (await commentMentions(ctx, c.id)).map((id) => ref('User', id)),
    moderation: (c) => (c.removedAt ? { removedAt: c.removedAt, reason: c.removedReason } : null),
  },
};
