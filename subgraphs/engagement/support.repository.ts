import { and, asc, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import { supportTicketReplies, supportTickets, type SupportReply, type SupportTicket, type TicketStatus } from './support.tables.js';

/** Takes the user's ticket lock until the transaction ends: two tickets of one user are counted one after the other. */
export async function lockUser(tx: Executor, userId: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`support:${userId}`}, 0))`);
}

/**
 * The user's tickets not yet resolved or closed, and those opened after `since` with the oldest of their opening times,
 * in one statement.
 */
export async function ticketCounts(tx: Executor, userId: string, since: Date): Promise<{ open: number; recent: number; oldestRecent: Date | null }> {
  const at = since.toISOString();
  const [row] = await tx
    .select({
      open: sql<number>`(count(*) filter (where ${supportTickets.status} in ('open', 'pending')))::int`,
      recent: sql<number>`(count(*) filter (where ${supportTickets.createdAt} > ${at}::timestamptz))::int`,
      oldestRecent: sql<Date | string | null>`min(${supportTickets.createdAt}) filter (where ${supportTickets.createdAt} > ${at}::timestamptz)`,
    })
    .from(supportTickets)
    .where(eq(supportTickets.userId, userId));
  return {
    open: Number(row?.open ?? 0),
    recent: Number(row?.recent ?? 0),
    oldestRecent: row?.oldestRecent == null ? null : new Date(row.oldestRecent),
  };
}

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
