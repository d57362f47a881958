import { DateTime, loadTypeDefs } from '../kernel/graphql.js';
import { type RequestContext, idLoader } from '../kernel/index.js';
import { findUsersByIds, me, type User } from './identity.service.js';

export const typeDefs = loadTypeDefs(import.meta.url);

const userLoader = (ctx: RequestContext) => idLoader<User>(ctx, 'identity.userById', (ids) => findUsersByIds(ctx.app, ids));

export const resolvers = {
  DateTime,
  Query: {
    me: (_: unknown, __: unknown, ctx: RequestContext) => (ctx.caller ? me(ctx) : null),
  },
  User: {
    __resolveReference: (ref: { id: string }, ctx: RequestContext) => userLoader(ctx).load(ref.id),
    email: (user: User, _: unknown, ctx: RequestContext) => (ctx.caller?.userId === user.id ? user.email : null),
  },
};
