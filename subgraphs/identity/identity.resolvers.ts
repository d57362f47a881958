import { DateTime, loadTypeDefs } from '../kernel/graphql.js';
import { byIdReference } from '../kernel/index.js';
import { changePassword, findUsersByIds, me, updateProfile, userByUsername, type User } from './identity.service.js';
import { createPersonalApiKey, listPersonalApiKeys, personalKeyScopes, revokePersonalApiKey } from './personal-keys.service.js';
import { requestEmailVerification, requestPasswordReset, resetPassword, verifyEmail } from './email-tokens.service.js';
import type { Resolvers } from './identity.generated.js';

export const typeDefs = loadTypeDefs(import.meta.url);

const userReference = byIdReference<User>('identity.userById', (ctx, ids) => findUsersByIds(ctx.app, ids));

export const resolvers: Resolvers = {
  DateTime,
  Query: {
    me: (_, __, ctx) => (ctx.caller ? me(ctx) : null),
    user: (_, a, ctx) => userByUsername(ctx, a.username),
    personalApiKeyScopes: () => personalKeyScopes(),
  },
  Mutation: {
    updateProfile: (_, a, ctx) => updateProfile(ctx, a.input),
    changePassword: (_, a, ctx) => changePassword(ctx, a),
    requestEmailVerification: (_, __, ctx) => requestEmailVerification(ctx),
    verifyEmail: (_, a, ctx) => verifyEmail(ctx, a),
    requestPasswordReset: (_, a, ctx) => requestPasswordReset(ctx.app, a),
    resetPassword: (_, a, ctx) => resetPassword(ctx.app, a, ctx.clientAddress),
    createPersonalApiKey: (_, a, ctx) => createPersonalApiKey(ctx, a.input),
    revokePersonalApiKey: (_, a, ctx) => revokePersonalApiKey(ctx, a.id),
  },
  User: {
    __resolveReference: userReference,
    email: (user, _, ctx) => (ctx.caller?.userId === user.id ? user.email : null),
    emailVerified: (user, _, ctx) => (ctx.caller?.userId === user.id ? user.emailVerifiedAt !== null : null),
    personalApiKeys: (user, _, ctx) => (ctx.caller?.userId === user.id ? listPersonalApiKeys(ctx) : null),
  },
};
