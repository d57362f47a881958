import { and, asc, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import { supportTicketReplies, supportTickets, type SupportReply, type SupportTicket, type TicketStatus } from './support.tables.js';

export async function insertTicket(db: Executor, values: typeof supportTickets.$inferInsert): Promise<SupportTicket> {
  const [row] = await db.insert(supportTickets).values(values).returning();
  return row;
}

export async function findTicket(db: Executor, id: string): Promise<SupportTicket | undefined> {
  const [row] = await db.select().from(supportTickets).where(eq(supportTickets.id, id)).limit(1);
  return row;
}

/** The ticket, locked until the transaction ends (a reply and a status change take turns). */
export async function lockTicket(tx: Executor, id: string): Promise<SupportTicket | undefined> {
  const [row] = await tx.select().from(supportTickets).where(eq(supportTickets.id, id)).for('update');
  return row;
}

export async function setStatus(db: Executor, id: string, status: TicketStatus, at: Date): Promise<SupportTicket> {
  const [row] = await db.update(supportTickets).set({ status, updatedAt: at }).where(eq(supportTickets.id, id)).returning();
  return row;
}

/**
 * A page of tickets, newest first (keyset on created_at, id): the user's own when `userId` is given, else everyone's
 * (platform staff); only `status` when given.
 */
export async function pageTickets(
  db: Executor,
  opts: { userId: string | null; status: TicketStatus | null; after: [string, string] | null; limit: number },
): Promise<SupportTicket[]> {
  return db
    .select()
    .from(supportTickets)
    .where(
      and(
        opts.userId ? eq(supportTickets.userId, opts.userId) : undefined,
        opts.status ? eq(supportTickets.status, opts.status) : undefined,
        opts.after ? sql`(${supportTickets.createdAt}, ${supportTickets.id}) < (${opts.after[0]}::timestamptz, ${opts.after[1]}::uuid)` : undefined,
      ),
    )
    .orderBy(desc(supportTickets.createdAt), desc(supportTickets.id))
    .limit(opts.limit);
}

export async function insertReply(db: Executor, values: typeof supportTicketReplies.$inferInsert): Promise<SupportReply> {
  const [row] = await db.insert(supportTicketReplies).values(values).returning();
  return row;
}

/** The replies of some tickets, oldest first (one statement for a page of tickets). */
export async function repliesOf(db: Executor, ticketIds: readonly string[]): Promise<SupportReply[]> {
  if (ticketIds.length === 0) return [];
  return db
    .select()
    .from(supportTicketReplies)
    .where(inArray(supportTicketReplies.ticketId, [...ticketIds]))
    .orderBy(asc(supportTicketReplies.createdAt), asc(supportTicketReplies.id));
}
