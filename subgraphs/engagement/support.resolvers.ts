import { ref } from '../kernel/graphql.js';
import type { Resolvers, SupportTicketCategory, SupportTicketStatus } from './engagement.generated.js';
import * as service from './support.service.js';
import type { TicketCategory, TicketStatus } from './support.tables.js';

const lower = <T extends string>(v: string | null | undefined): T | null => (v == null ? null : (v.toLowerCase() as T));

/** Support tickets: the viewer's tickets (staff: all), opening, replies, statuses. */
export const supportResolvers = {
  Query: {
    supportTickets: (_, a, ctx) => service.listSupportTickets(ctx, { ...a, status: lower<TicketStatus>(a.status) }),
    supportTicket: (_, a, ctx) => service.getSupportTicket(ctx, a.id),
  },
  Mutation: {
    openSupportTicket: (_, a, ctx) => service.openSupportTicket(ctx, { ...a, category: lower<TicketCategory>(a.category) ?? '' }),
    replyToTicket: (_, a, ctx) => service.replyToTicket(ctx, a.ticketId, a.body),
    setTicketStatus: (_, a, ctx) => service.setTicketStatus(ctx, a.ticketId, lower<TicketStatus>(a.status) ?? ''),
  },
  SupportTicket: {
    author: (t) => ref('User', t.userId),
    community: (t) => ref('Community', t.communityId),
    category: (t) => t.category.toUpperCase() as SupportTicketCategory,
    status: (t) => t.status.toUpperCase() as SupportTicketStatus,
    replies: (t, _a, ctx) => service.repliesOf(ctx, t),
  },
  SupportTicketReply: {
    author: (r) => ref('User', r.authorId),
  },
} satisfies Resolvers;
