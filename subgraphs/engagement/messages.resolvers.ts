import { nonNull, ref } from '../kernel/graphql.js';
import type { Resolvers } from './engagement.generated.js';
import * as service from './messages.service.js';

/** Direct messages and blocks: conversations, messages, read marks, leaving, blocks. */
export const messagesResolvers = {
  Query: {
    conversations: (_, a, ctx) => service.listConversations(ctx, a),
    conversation: (_, a, ctx) => service.getConversation(ctx, a.id),
    messages: (_, a, ctx) => service.listMessages(ctx, a.conversationId, a),
    message: (_, a, ctx) => service.getMessage(ctx, a.id),
  },
  Mutation: {
    startConversation: (_, a, ctx) => service.startConversation(ctx, a),
    sendMessage: (_, a, ctx) => service.sendMessage(ctx, a.conversationId, a.body),
    editMessage: (_, a, ctx) => service.editMessage(ctx, a.id, a.body),
    deleteMessage: (_, a, ctx) => service.deleteMessage(ctx, a.id),
    markConversationRead: (_, a, ctx) => service.markConversationRead(ctx, a.conversationId, a.upToMessageId),
    leaveConversation: (_, a, ctx) => service.leaveConversation(ctx, a.conversationId),
    blockUser: (_, a, ctx) => service.blockUser(ctx, a.userId),
    unblockUser: (_, a, ctx) => service.unblockUser(ctx, a.userId),
  },
  Conversation: {
    __resolveReference: (r, ctx) => service.conversationForViewer(ctx, r.id),
    participants: async (c, _, ctx) => (await service.participantsOf(ctx, c)).map((id) => ref('User', id)),
    lastMessage: (c, _, ctx) => service.lastMessageOf(ctx, c),
    unreadCount: (c, _, ctx) => service.unreadCountOf(ctx, c),
    updatedAt: (c) => c.lastMessageAt,
  },
  Message: {
    __resolveReference: (r, ctx) => service.messageForViewer(ctx, r.id),
    conversation: async (m, _, ctx, info) => nonNull(await service.conversationOfMessage(ctx, m), info),
    author: (m) => ref('User', m.authorId),
  },
} satisfies Resolvers;
