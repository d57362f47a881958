import DataLoader from 'dataloader';
import { DateTime, loadTypeDefs } from '../kernel/graphql.js';
import { type RequestContext, requestScoped } from '../kernel/index.js';
import { findUsersByIds, me, type User } from './identity.service.js';

export const typeDefs = loadTypeDefs(import.meta.url);

const userLoader = (ctx: RequestContext) =>
  requestScoped(ctx, 'identity.userById', () =>
    new DataLoader<string, User | null>(async (ids) => {
      const rows = await findUsersByIds(ctx.app, ids);
      const byId = new Map(rows.map((r) => [r.id, r]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
  );

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
