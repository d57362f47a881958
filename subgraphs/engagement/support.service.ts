import DataLoader from 'dataloader';
import { z } from 'zod';
import type { Executor } from '../../db/src/index.js';
import { getCommunity } from '../communities/index.js';
import {
  type Connection,
  type RequestContext,
  conflict,
  DomainError,
  forbidden,
  isTimeAndId,
  isUuid,
  notFound,
  pageRequest,
  parseInput,
  rateLimited,
  requestScoped,
  requireUser,
  text,
  toConnection,
} from '../kernel/index.js';
import { isStaff } from '../platform/index.js';
import * as repo from './support.repository.js';
import { TICKET_CATEGORIES, TICKET_STATUSES, type SupportReply, type SupportTicket, type TicketStatus } from './support.tables.js';

export type { SupportReply, SupportTicket, TicketCategory, TicketStatus } from './support.tables.js';
export { TICKET_CATEGORIES, TICKET_STATUSES } from './support.tables.js';

/** Longest subject and body (characters, the kernel's text rule). */
export const MAX_TICKET_SUBJECT_CHARS = 200;
export const MAX_TICKET_BODY_CHARS = 10_000;

/** Whether the signed-in caller is platform staff (sees and answers every ticket, sets any status). */
export async function isSupportStaff(ctx: RequestContext): Promise<boolean> {
  return !!ctx.caller && isStaff(ctx, ctx.caller.userId);
}

const subjectText = text({ max: MAX_TICKET_SUBJECT_CHARS, min: 1, trim: true, required: 'a ticket needs a subject' });
const bodyText = text({ max: MAX_TICKET_BODY_CHARS, min: 1, trim: true, required: 'a ticket needs a message' });
const openInput = z.object({
  subject: subjectText,
  body: bodyText,
  category: z.enum(TICKET_CATEGORIES, { error: `category: must be one of ${TICKET_CATEGORIES.join(', ')}` }),
  communityId: z.string().refine(isUuid, 'community_id must be a tribe id').nullish(),
});
const replyInput = z.object({ body: bodyText });
const statusInput = z.enum(TICKET_STATUSES, { error: `status: must be one of ${TICKET_STATUSES.join(', ')}` });

const openTicketLimit = (limit: number) =>
  new DomainError(
    'conflict',
    'open_ticket_limit',
    `You have ${limit} open tickets, the most one account may have: resolve or close one before opening another.`,
    { limit },
  );

/** Refuses reopening a ticket when the user has `openTicketsPerUser` open already (call under `repo.lockUser`). */
async function requireUnderOpenCap(ctx: RequestContext, tx: Executor, userId: string, now: Date): Promise<void> {
  const limit = ctx.app.config.support.openTicketsPerUser;
  if ((await repo.ticketCounts(tx, userId, now)).open >= limit) throw openTicketLimit(limit);
}

/** The window of the tickets-per-hour limit: any 60 minutes. */
export const TICKET_WINDOW_SECONDS = 3600;

/**
 * Refuses a new ticket of `userId` past the per-user limits (`config.support`): `open_ticket_limit` (CONFLICT, with
 * `details.limit`) when the user has `openTicketsPerUser` tickets not yet resolved or closed, else
 * `support_ticket_rate_limited` (RATE_LIMITED, with the seconds until one more fits) after `ticketsPerHour` tickets in
 * the last hour. Counted under the user's lock inside the inserting transaction, so concurrent requests cannot pass it.
 */
async function requireUnderTicketLimits(ctx: RequestContext, tx: Executor, userId: string, now: Date): Promise<void> {
  const { openTicketsPerUser, ticketsPerHour } = ctx.app.config.support;
  await repo.lockUser(tx, userId);
  const counts = await repo.ticketCounts(tx, userId, new Date(now.getTime() - TICKET_WINDOW_SECONDS * 1000));
  if (counts.open >= openTicketsPerUser) throw openTicketLimit(openTicketsPerUser);
  if (counts.recent >= ticketsPerHour) {
    const freeAt = (counts.oldestRecent ?? now).getTime() + TICKET_WINDOW_SECONDS * 1000;
    const retryAfterSeconds = Math.max(1, Math.ceil((freeAt - now.getTime()) / 1000));
    throw rateLimited(
      'support_ticket_rate_limited',
      `You opened ${ticketsPerHour} tickets in the last hour: wait ${retryAfterSeconds} s before opening another.`,
      retryAfterSeconds,
    );
  }
}

/**
 * Opens a ticket of the caller, about a tribe they can see when `communityId` is given. Status `open`. Past the
 * per-user limits (`requireUnderTicketLimits`), nothing is written.
 */
export async function openSupportTicket(
  ctx: RequestContext,
  raw: { subject: string; body: string; category: string; communityId?: string | null },
): Promise<SupportTicket> {
  const userId = requireUser(ctx);
  const input = parseInput(openInput, raw);
  const communityId = input.communityId ? (await getCommunity(ctx, input.communityId)).id : null;
  const now = ctx.app.clock();
  return ctx.app.database.db.transaction(async (tx) => {
    await requireUnderTicketLimits(ctx, tx, userId, now);
    return repo.insertTicket(tx, {
      userId,
      communityId,
      category: input.category,
      subject: input.subject,
      body: input.body,
      status: 'open',
      createdAt: now,
      updatedAt: now,
    });
  });
}

/** A ticket the caller may read: their own, or any for staff; `not_found` otherwise (someone else's looks missing). */
async function readableTicket(ctx: RequestContext, id: string): Promise<{ ticket: SupportTicket; staff: boolean }> {
  const userId = requireUser(ctx);
  const ticket = isUuid(id) ? await repo.findTicket(ctx.app.database.db, id) : undefined;
  if (!ticket) throw notFound('Ticket');
  if (ticket.userId === userId) return { ticket, staff: await isSupportStaff(ctx) };
  if (await isSupportStaff(ctx)) return { ticket, staff: true };
  throw notFound('Ticket');
}

/** One ticket of the caller (staff: any ticket). */
export async function getSupportTicket(ctx: RequestContext, id: string): Promise<SupportTicket> {
  return (await readableTicket(ctx, id)).ticket;
}

const LIST = (scope: string, status: TicketStatus | null) => `supportTickets:${scope}:${status ?? 'all'}`;

/**
 * The caller's tickets, newest first, Relay cursor pages; `status` filters. Platform staff see every user's tickets.
 */
export async function listSupportTickets(
  ctx: RequestContext,
  args: { status?: string | null; first?: number | null; after?: string | null },
): Promise<Connection<SupportTicket>> {
  const userId = requireUser(ctx);
  const status = args.status == null ? null : parseInput(statusInput, args.status);
  const staff = await isSupportStaff(ctx);
  const list = LIST(staff ? 'staff' : userId, status);
  const { limit, after } = pageRequest(ctx, list, args, isTimeAndId);
  const rows = await repo.pageTickets(ctx.app.database.db, { userId: staff ? null : userId, status, after, limit: limit + 1 });
  return toConnection(ctx, list, rows, limit, (t) => [t.createdAt.toISOString(), t.id]);
}

/**
 * A reply on a ticket the caller may read. The owner's reply on a `pending` or `resolved` ticket opens it again (a
 * `resolved` one only while the owner has fewer open tickets than the cap: `open_ticket_limit`); a staff reply on an
 * `open` ticket makes it `pending` (waiting on the user). A `closed` ticket takes no reply (`ticket_closed`: open a new
 * one). Returns the ticket as it is now.
 */
export async function replyToTicket(ctx: RequestContext, ticketId: string, rawBody: string): Promise<SupportTicket> {
  const userId = requireUser(ctx);
  const { ticket: seen } = await readableTicket(ctx, ticketId);
  const { body } = parseInput(replyInput, { body: rawBody });
  const now = ctx.app.clock();
  const fromStaff = seen.userId !== userId;
  return ctx.app.database.db.transaction(async (tx) => {
    // The owner's reply may reopen a resolved ticket: it counts against the open-ticket cap, under the owner's lock.
    if (!fromStaff) await repo.lockUser(tx, userId);
    const ticket = await repo.lockTicket(tx, seen.id);
    if (!ticket) throw notFound('Ticket');
    if (ticket.status === 'closed') throw conflict('ticket_closed', 'This ticket is closed: open a new one.');
    if (!fromStaff && ticket.status === 'resolved') await requireUnderOpenCap(ctx, tx, userId, now);
    await repo.insertReply(tx, { ticketId: ticket.id, authorId: userId, fromStaff, body, createdAt: now });
    const next: TicketStatus = fromStaff ? (ticket.status === 'open' ? 'pending' : ticket.status) : 'open';
    return repo.setStatus(tx, ticket.id, next, now);
  });
}

/**
 * Sets a ticket's status. Platform staff set any status; the ticket's owner may only mark it `resolved` or `closed`
 * (reopening is by replying). Returns the ticket.
 */
export async function setTicketStatus(ctx: RequestContext, ticketId: string, rawStatus: string): Promise<SupportTicket> {
  const userId = requireUser(ctx);
  const { ticket, staff } = await readableTicket(ctx, ticketId);
  const status = parseInput(statusInput, rawStatus);
  if (!staff) {
    if (ticket.userId !== userId) throw notFound('Ticket');
    if (status !== 'resolved' && status !== 'closed') throw forbidden('Only support staff set this status; reply to reopen the ticket.');
    if (ticket.status === 'closed') throw conflict('ticket_closed', 'This ticket is closed: open a new one.');
  }
  return repo.setStatus(ctx.app.database.db, ticket.id, status, ctx.app.clock());
}

const repliesLoader = (ctx: RequestContext) =>
  requestScoped(ctx, 'support.replies', () =>
    new DataLoader<string, SupportReply[]>(async (ids) => {
      const rows = await repo.repliesOf(ctx.app.database.db, ids);
      return ids.map((id) => rows.filter((r) => r.ticketId === id));
    }),
  );

/** The replies of a ticket (already authorized through the ticket), oldest first; batched per request. */
export const repliesOf = (ctx: RequestContext, ticket: SupportTicket): Promise<SupportReply[]> => repliesLoader(ctx).load(ticket.id);
