import { DateTime, loadTypeDefs, ref } from '../kernel/graphql.js';
import type { RequestContext } from '../kernel/index.js';
import * as service from './content.service.js';
import type { Comment, Post } from './content.tables.js';

export const typeDefs = loadTypeDefs(import.meta.url);

type Args = Record<string, any>;

export const resolvers = {
  DateTime,
  Query: {
    posts: (_: unknown, a: Args, ctx: RequestContext) => service.listPosts(ctx, a.communityId, a),
    post: (_: unknown, a: Args, ctx: RequestContext) => service.getPost(ctx, a.id, a.communityId),
    comments: (_: unknown, a: Args, ctx: RequestContext) => service.listComments(ctx, a.communityId, a.postId, a),
    platformPosts: (_: unknown, a: Args, ctx: RequestContext) => service.platformPosts(ctx, a),
  },
  Mutation: {
    createPost: (_: unknown, a: Args, ctx: RequestContext) => service.createPost(ctx, a.communityId, a.input),
    updatePost: (_: unknown, a: Args, ctx: RequestContext) => service.updatePost(ctx, a.communityId, a.id, a.input),
    deletePost: (_: unknown, a: Args, ctx: RequestContext) => service.deletePost(ctx, a.communityId, a.id),
    createComment: (_: unknown, a: Args, ctx: RequestContext) => service.createComment(ctx, a.communityId, a.postId, a.input),
  },
  Post: {
    __resolveReference: (r: { id: string }, ctx: RequestContext) => service.postById(ctx, r.id),
    community: (p: Post) => ref('Community', p.communityId),
    author: (p: Post) => ref('User', p.authorId),
    isPinned: (p: Post) => p.pinnedAt !== null,
  },
  Comment: {
    post: (c: Comment, _: unknown, ctx: RequestContext) => service.postById(ctx, c.postId),
    author: (c: Comment) => ref('User', c.authorId),
  },
};
