import { and, asc, count, desc, eq, gt, inArray, isNull, lte } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import {
  eventRegistrations,
  tribeEvents,
  type EventListStatus,
  type EventRegistration,
  type TribeEvent,
} from './events.tables.js';

export async function findByIds(db: Executor, ids: readonly string[]): Promise<TribeEvent[]> {
  if (ids.length === 0) return [];
  return db.select().from(tribeEvents).where(inArray(tribeEvents.id, [...ids]));
}

/** Events of a tribe, latest start first. */
export async function listByCommunity(db: Executor, communityId: string, limit: number, offset: number): Promise<TribeEvent[]> {
  return db
    .select()
    .from(tribeEvents)
    .where(eq(tribeEvents.communityId, communityId))
    .orderBy(desc(tribeEvents.startsAt), desc(tribeEvents.id))
    .limit(limit)
    .offset(offset);
}

export async function insertEvent(db: Executor, values: typeof tribeEvents.$inferInsert): Promise<TribeEvent> {
  const [row] = await db.insert(tribeEvents).values(values).returning();
  return row;
}

/**
 * Events of a tribe by `status` at `now`: upcoming (not yet ended) soonest first; past (ended) latest first;
 * all latest start first.
 */
export async function listByStatus(
  db: Executor,
  communityId: string,
  status: EventListStatus,
  now: Date,
  limit: number,
  offset: number,
): Promise<TribeEvent[]> {
  const inTribe = eq(tribeEvents.communityId, communityId);
  const query = db.select().from(tribeEvents);
  if (status === 'upcoming') {
    return query
      .where(and(inTribe, gt(tribeEvents.endsAt, now)))
      .orderBy(asc(tribeEvents.startsAt), asc(tribeEvents.id))
      .limit(limit)
      .offset(offset);
  }
  return query
    .where(status === 'past' ? and(inTribe, lte(tribeEvents.endsAt, now)) : inTribe)
    .orderBy(desc(tribeEvents.startsAt), desc(tribeEvents.id))
    .limit(limit)
    .offset(offset);
}

/** The event row, locked until the transaction ends (serialises the seat count of one event). */
export async function lockEvent(tx: Executor, id: string): Promise<TribeEvent | undefined> {
  const [row] = await tx.select().from(tribeEvents).where(eq(tribeEvents.id, id)).for('update');
  return row;
}

/** Confirmed registrations per event (events without any are absent). */
export async function confirmedCounts(db: Executor, eventIds: readonly string[]): Promise<Map<string, number>> {
  if (eventIds.length === 0) return new Map();
  const rows = await db
    .select({ eventId: eventRegistrations.eventId, n: count() })
    .from(eventRegistrations)
    .where(and(inArray(eventRegistrations.eventId, [...eventIds]), eq(eventRegistrations.status, 'confirmed')))
    .groupBy(eventRegistrations.eventId);
  return new Map(rows.map((r) => [r.eventId, Number(r.n)]));
}

/** The user's registrations for the given events. */
export async function registrationsOf(db: Executor, userId: string, eventIds: readonly string[]): Promise<EventRegistration[]> {
  if (eventIds.length === 0) return [];
  return db
    .select()
    .from(eventRegistrations)
    .where(and(eq(eventRegistrations.userId, userId), inArray(eventRegistrations.eventId, [...eventIds])));
}

/** Inserts the registration unless the user holds one for that event; returns it only when inserted. */
export async function insertRegistration(
  db: Executor,
  values: typeof eventRegistrations.$inferInsert,
): Promise<EventRegistration | undefined> {
  const [row] = await db
    .insert(eventRegistrations)
    .values(values)
    .onConflictDoNothing({ target: [eventRegistrations.eventId, eventRegistrations.userId] })
    .returning();
  return row;
}

/** Checks a confirmed, not yet used ticket of the event in; undefined when no such ticket is waiting. */
export async function checkIn(
  db: Executor,
  eventId: string,
  ticketCode: string,
  by: string,
  at: Date,
): Promise<EventRegistration | undefined> {
  const [row] = await db
    .update(eventRegistrations)
    .set({ checkedInAt: at, checkedInBy: by })
    .where(
      and(
        eq(eventRegistrations.ticketCode, ticketCode),
        eq(eventRegistrations.eventId, eventId),
        eq(eventRegistrations.status, 'confirmed'),
        isNull(eventRegistrations.checkedInAt),
      ),
    )
    .returning();
  return row;
}

export async function findByTicket(db: Executor, ticketCode: string): Promise<EventRegistration | undefined> {
  const [row] = await db.select().from(eventRegistrations).where(eq(eventRegistrations.ticketCode, ticketCode)).limit(1);
  return row;
}

/** Events starting in `(from, to]`, soonest first (the `tribe_events_starts_idx` index). */
export async function startingBetween(db: Executor, from: Date, to: Date, limit: number): Promise<TribeEvent[]> {
  return db
    .select()
    .from(tribeEvents)
    .where(and(gt(tribeEvents.startsAt, from), lte(tribeEvents.startsAt, to)))
    .orderBy(asc(tribeEvents.startsAt), asc(tribeEvents.id))
    .limit(limit);
}

/** Confirmed registrants' user ids of an event after `afterUserId`, in user-id order (the `(event_id, user_id)` key). */
export async function registrantIdsPage(db: Executor, eventId: string, afterUserId: string | null, limit: number): Promise<string[]> {
  const rows = await db
    .select({ userId: eventRegistrations.userId })
    .from(eventRegistrations)
    .where(
      and(
        eq(eventRegistrations.eventId, eventId),
        eq(eventRegistrations.status, 'confirmed'),
        afterUserId ? gt(eventRegistrations.userId, afterUserId) : undefined,
      ),
    )
    .orderBy(asc(eventRegistrations.userId))
    .limit(limit);
  return rows.map((r) => r.userId);
}

/** Deletes the registration an order paid for (a full refund takes it back, freeing its seat); true when there was one. */
export async function deleteRegistrationOfOrder(tx: Executor, orderId: string): Promise<boolean> {
  const rows = await tx.delete(eventRegistrations).where(eq(eventRegistrations.orderId, orderId)).returning({ id: eventRegistrations.id });
  return rows.length > 0;
}
