import { boolean, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** What a ticket is about (the GraphQL enum `SupportTicketCategory` spells them in upper case). */
export const TICKET_CATEGORIES = ['account', 'billing', 'bug', 'abuse', 'other'] as const;
export type TicketCategory = (typeof TICKET_CATEGORIES)[number];

/** open → pending (waiting on the user) → resolved → closed; the user's reply on pending or resolved opens it again. */
export const TICKET_STATUSES = ['open', 'pending', 'resolved', 'closed'] as const;
export type TicketStatus = (typeof TICKET_STATUSES)[number];

/** A support ticket of one user (migration 0015). */
export const supportTickets = pgTable('support_tickets', {
  id: uuid('id').primaryKey().defaultRandom(),
  userId: uuid('user_id').notNull(),
  communityId: uuid('community_id'),
  category: text('category').$type<TicketCategory>().notNull(),
  subject: text('subject').notNull(),
  body: text('body').notNull(),
  status: text('status').$type<TicketStatus>().notNull().default('open'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/** A reply on a ticket, by its owner or by platform staff (`fromStaff`). */
export const supportTicketReplies = pgTable('support_ticket_replies', {
  id: uuid('id').primaryKey().defaultRandom(),
  ticketId: uuid('ticket_id').notNull(),
  authorId: uuid('author_id'),
  fromStaff: boolean('from_staff').notNull(),
  body: text('body').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

export type SupportTicket = typeof supportTickets.$inferSelect;
export type SupportReply = typeof supportTicketReplies.$inferSelect;
