import { DateTime, loadTypeDefs, nonNull, ref } from '../kernel/graphql.js';
import * as service from './content.service.js';
import type { Resolvers } from './content.generated.js';

export const typeDefs = loadTypeDefs(import.meta.url);

export const resolvers: Resolvers = {
  DateTime,
  Query: {
    posts: (_, a, ctx) => service.listPosts(ctx, a.communityId, a),
    post: (_, a, ctx) => service.getPost(ctx, a.id, a.communityId),
    comments: (_, a, ctx) => service.listComments(ctx, a.communityId, a.postId, a),
    platformPosts: (_, a, ctx) => service.platformPosts(ctx, a),
  },
  Mutation: {
    createPost: (_, a, ctx) => service.createPost(ctx, a.communityId, a.input),
    updatePost: (_, a, ctx) => service.updatePost(ctx, a.communityId, a.id, a.input),
    deletePost: (_, a, ctx) => service.deletePost(ctx, a.communityId, a.id),
    createComment: (_, a, ctx) => service.createComment(ctx, a.communityId, a.postId, a.input),
  },
  Post: {
    __resolveReference: (r, ctx) => service.postById(ctx, r.id),
    community: (p) => ref('Community', p.communityId),
    author: (p) => ref('User', p.authorId),
    isPinned: (p) => p.pinnedAt !== null,
  },
  Comment: {
    post: async (c, _, ctx, info) => nonNull(await service.postById(ctx, c.postId), info),
    author: (c) => ref('User', c.authorId),
  },
};
