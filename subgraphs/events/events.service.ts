import { z } from 'zod';
import type { Executor } from '../../db/src/index.js';
import {
  type CheckoutInfo,
  DEFAULT_CURRENCY,
  currencySchema,
  type FulfilmentHandler,
  type RevocationHandler,
  startCheckout,
  priceSchema,
  refinePriceToCurrency,
  type Order,
} from '../commerce/index.js';
import { getCommunity } from '../communities/index.js';
import {
  type Page,
  type RequestContext,
  conflict,
  invalid,
  notFound,
  paging,
  parseInput,
  platformPaging,
  randomToken,
  toPage,
  toPlatformPage,
  type PlatformPage,
  idLoader,
  countLoader,
  viewerLoader,
  text,
  requireScope,
} from '../kernel/index.js';
import { requireRole, requireView, requireVisible, visibleOrNull } from '../members/index.js';
import { emitEvent } from '../outbox/index.js';
import * as repo from './events.repository.js';
import {
  EVENT_LIST_STATUSES,
  EVENT_FORMATS,
  type EventListStatus,
  type EventRegistration,
  type TribeEvent,
} from './events.tables.js';

export type { EventListStatus, EventRegistration, RegistrationStatus, TribeEvent } from './events.tables.js';

/** Platform API (`events:read`): events of the key's tribe, latest start first. */
export async function platformEvents(
  ctx: RequestContext,
  raw: { page?: number | null; pageSize?: number | null },
): Promise<PlatformPage<TribeEvent>> {
  const communityId = requireScope(ctx, 'events:read');
  const p = platformPaging(raw.page, raw.pageSize);
  return toPlatformPage(await repo.listByCommunity(ctx.app.database.db, communityId, p.pageSize, p.offset), p);
}

/** An event by id without an access check (batched per request): for jobs and services that check access themselves. */
export function eventById(ctx: RequestContext, id: string): Promise<TribeEvent | null> {
  return eventLoader(ctx).load(id);
}

/**
 * The event when the caller may see it, by the rule of `getEvent` (the root field `event`: anyone who sees the
 * tribe's content), else null: what an entity reference from another subgraph (a notification's event) and a
 * registration's event answer, so that a private tribe's event never reaches an outsider through a seam.
 */
export async function readableEvent(ctx: RequestContext, id: string): Promise<TribeEvent | null> {
  return visibleOrNull(ctx, await eventLoader(ctx).load(id));
}

// ---- calendar events of the resource API and the web app (issue 5) ----

const isoDateTime = (field: string) =>
  z.iso.datetime({ offset: true, error: `${field} must be an ISO 8601 date-time with a time zone, e.g. 2030-05-01T18:00:00Z` });

const createInput = z
  .object({
    title: text({ max: 200, min: 1, trim: true, required: 'title is required' }),
    description: text({ max: 10_000 }).nullish(),
    eventType: z.enum(EVENT_FORMATS, { error: 'event_type must be online or in_person' }),
    location: text({ max: 500, trim: true }).nullish(),
    startsAt: isoDateTime('starts_at'),
    endsAt: isoDateTime('ends_at'),
    maxAttendees: z
      .number({ error: 'max_attendees must be an integer from 1 to 1000000, or omitted for unlimited' })
      .int('max_attendees must be an integer')
      .min(1, 'max_attendees must be at least 1 (omit it for unlimited)')
      .max(1_000_000, 'max_attendees must be at most 1000000')
      .nullish(),
    price: priceSchema.nullish(),
    currency: currencySchema.nullish(),
  })
  .superRefine((v, ctx) => {
    if (Date.parse(v.startsAt) >= Date.parse(v.endsAt)) {
      ctx.addIssue({ code: 'custom', path: ['endsAt'], message: 'ends_at must be after starts_at' });
    }
    refinePriceToCurrency(v, ctx);
  });

const listInput = z.object({ status: z.enum(EVENT_LIST_STATUSES, { error: 'status must be upcoming, past or all' }) });
const ticketInput = z.object({
  ticketCode: z
    .string({ error: 'ticket_code is required (a string)' })
    .trim()
    .min(1, 'ticket_code is required (a string)')
    .max(200, 'ticket_code is at most 200 characters'),
});

// Reads and entity references (`eventById`) share this one per-request batch.
const eventLoader = (ctx: RequestContext) =>
  idLoader<TribeEvent>(ctx, 'events.byId', (ids) => repo.findByIds(ctx.app.database.db, ids));

const confirmedCountLoader = (ctx: RequestContext) =>
  countLoader(ctx, 'events.confirmedCount', (ids) => repo.confirmedCounts(ctx.app.database.db, ids));

const viewerRegistrationLoader = (ctx: RequestContext) =>
  viewerLoader(ctx, 'events.viewerRegistration', (userId, ids) => repo.registrationsOf(ctx.app.database.db, userId, ids), (r) => r.eventId);

/** A new ticket code: 16 random bytes in base64url (22 characters, 128 bits: unguessable). */
const newTicketCode = (): string => randomToken(16);

/**
 * An event the caller may see (anyone who may see the tribe's content), or `not_found`, also when it belongs
 * to another tribe than `communityId`.
 */
export async function getEvent(ctx: RequestContext, id: string, communityId?: string | null): Promise<TribeEvent> {
  return requireVisible(ctx, await eventLoader(ctx).load(id), communityId, 'Event');
}

/**
 * Events of a tribe at the service clock's now: `upcoming` (default; not yet ended, in progress included)
 * soonest first, `past` (ended) latest first, `all` latest start first. Paged (per page at most 50).
 */
export async function listEvents(
  ctx: RequestContext,
  communityId: string,
  raw: { status?: string | null; page?: number | null; perPage?: number | null },
): Promise<Page<TribeEvent>> {
  const community = await getCommunity(ctx, communityId);
  await requireView(ctx, community);
  const status: EventListStatus = raw.status == null ? 'upcoming' : parseInput(listInput, { status: raw.status }, 'invalid_query').status;
  const p = paging(raw.page, raw.perPage);
  const rows = await repo.listByStatus(ctx.app.database.db, community.id, status, ctx.app.clock(), p.perPage + 1, p.offset);
  for (const row of rows) eventLoader(ctx).prime(row.id, row);
  return toPage(rows, p);
}

/**
 * Creates an event (moderators and above) and announces `event.created` `{eventId, handle}` in the same
 * transaction. `price` is in major units (0 or absent: free), `currency` defaults to BRL, `max_attendees`
 * absent or null means unlimited; `starts_at` must be before `ends_at`.
 */
export async function createEvent(ctx: RequestContext, communityId: string, raw: unknown): Promise<TribeEvent> {
  const community = await getCommunity(ctx, communityId);
  const userId = ctx.caller?.userId;
  await requireRole(ctx, community.id, 'moderator');
  const input = parseInput(createInput, raw);
  const now = ctx.app.clock();
  return ctx.app.database.db.transaction(async (tx) => {
    const event = await repo.insertEvent(tx, {
      communityId: community.id,
      title: input.title,
      description: input.description ?? '',
      eventType: input.eventType,
      location: input.location || null,
      startsAt: new Date(input.startsAt),
      endsAt: new Date(input.endsAt),
      maxAttendees: input.maxAttendees ?? null,
      priceCents: input.price ?? 0,
      currency: input.currency ?? DEFAULT_CURRENCY,
      createdBy: userId,
      createdAt: now,
      updatedAt: now,
    });
    await emitEvent(tx, community.id, 'event.created', { eventId: event.id, handle: community.handle });
    return event;
  });
}

/** Confirmed registrations of the event (batched per request). */
export const registeredCount = (ctx: RequestContext, eventId: string): Promise<number> => confirmedCountLoader(ctx).load(eventId);

/** Seats left (never below 0), or null for an unlimited event. */
export async function spotsLeft(ctx: RequestContext, event: TribeEvent): Promise<number | null> {
  if (event.maxAttendees === null) return null;
  return Math.max(0, event.maxAttendees - (await registeredCount(ctx, event.id)));
}

/** The caller's registration for the event, or null (batched per request). */
export const viewerRegistration = (ctx: RequestContext, eventId: string): Promise<EventRegistration | null> =>
  ctx.caller ? viewerRegistrationLoader(ctx).load(eventId) : Promise.resolve(null);

/** What registering answered: the registration, or for a paid event not paid yet, the pending order to pay. */
export interface RegisterResult {
  /** The registration's status, or `pending_payment` while the order waits for payment. */
  status: 'confirmed' | 'refund_required' | 'pending_payment';
  /** True when this call created the registration. */
  created: boolean;
  registration: EventRegistration | null;
  order: Order | null;
  checkout: CheckoutInfo | null;
}

type SeatClaim = { registration: EventRegistration; created: boolean } | { full: true };

/**
 * Takes a seat for the user inside `tx`: the event row is locked, so registrations racing for the last seat
 * are serialised and never exceed `max_attendees`. An existing registration is returned as it is.
 */
async function claimSeat(tx: Executor, eventId: string, userId: string, orderId: string | null, at: Date): Promise<SeatClaim | null> {
  const event = await repo.lockEvent(tx, eventId);
  if (!event) return null;
  const [existing] = await repo.registrationsOf(tx, userId, [event.id]);
  if (existing) return { registration: existing, created: false };
  if (event.maxAttendees !== null) {
    const taken = (await repo.confirmedCounts(tx, [event.id])).get(event.id) ?? 0;
    if (taken >= event.maxAttendees) return { full: true };
  }
  const registration = await repo.insertRegistration(tx, {
    eventId: event.id,
    communityId: event.communityId,
    userId,
    status: 'confirmed',
    ticketCode: newTicketCode(),
    orderId,
    createdAt: at,
  });
  return { registration: registration!, created: true };
}

const eventFull = () => conflict('event_full', 'The event is full: no seats are left.');

/**
 * Registers the caller (members of the tribe). A free event confirms at once and issues the ticket; a full
 * event is `event_full` (409); an ended event `event_ended` (409). A paid event answers its pending order (the
 * same one on every call) and registers when the order is paid. Registering again returns the registration.
 */
export async function register(ctx: RequestContext, communityId: string | null | undefined, eventId: string): Promise<RegisterResult> {
  const event = await getEvent(ctx, eventId, communityId);
  const { userId } = await requireRole(ctx, event.communityId, 'member');
  const db = ctx.app.database.db;
  const existing = await viewerRegistration(ctx, event.id);
  if (existing) return { status: existing.status, created: false, registration: existing, order: null, checkout: null };
  const now = ctx.app.clock();
  if (event.endsAt.getTime() <= now.getTime()) throw conflict('event_ended', 'The event has ended: registration is closed.');
  if (event.priceCents > 0) {
    // No order for a full event. A pending order holds no seat: the seat is taken when the payment arrives.
    if ((await spotsLeft(ctx, event)) === 0) throw eventFull();
    const { order, checkout } = await startCheckout(ctx.app, {
      communityId: event.communityId,
      buyerId: userId,
      itemType: 'event',
      itemId: event.id,
      amountCents: event.priceCents,
      currency: event.currency,
    });
    return { status: 'pending_payment', created: false, registration: null, order, checkout };
  }
  const claim = await db.transaction((tx) => claimSeat(tx, event.id, userId, null, now));
  if (!claim) throw notFound('Event');
  if ('full' in claim) throw eventFull();
  viewerRegistrationLoader(ctx).clear(event.id).prime(event.id, claim.registration);
  confirmedCountLoader(ctx).clear(event.id);
  return { status: claim.registration.status, created: claim.created, registration: claim.registration, order: null, checkout: null };
}

/**
 * Checks a ticket in at the door (moderators and above). A ticket is used once: a repeat is
 * `already_checked_in` (400). A ticket that is unknown or belongs to another event is `not_found` (404, the
 * same answer, so a code of another event reveals nothing); a paid-but-seatless (`refund_required`)
 * registration is `ticket_not_valid` (400).
 */
export async function checkIn(
  ctx: RequestContext,
  communityId: string | null | undefined,
  eventId: string,
  ticketCode: unknown,
): Promise<EventRegistration> {
  const event = await getEvent(ctx, eventId, communityId);
  const { userId } = await requireRole(ctx, event.communityId, 'moderator');
  const { ticketCode: code } = parseInput(ticketInput, { ticketCode });
  const db = ctx.app.database.db;
  const done = await repo.checkIn(db, event.id, code, userId, ctx.app.clock());
  if (done) return done;
  const found = await repo.findByTicket(db, code);
  if (!found || found.eventId !== event.id) throw notFound('Ticket');
  if (found.checkedInAt) throw invalid('already_checked_in', 'This ticket was already used to check in.');
  throw invalid('ticket_not_valid', 'This registration holds no seat (its payment arrived after the event filled up).');
}

/** A registration's `event`: the event when the caller may see it (`readableEvent`), batched per request. */
export const eventOfRegistration = (ctx: RequestContext, r: EventRegistration): Promise<TribeEvent | null> => readableEvent(ctx, r.eventId);

/**
 * A paid event order registers its buyer, in the transaction that marks the order paid (`AppDeps.fulfilments.event`).
 * The seat is checked again under the event's lock: when the event filled up while the buyer was paying, the order
 * stays paid, the registration is `refund_required` (no seat, no check-in), and the order is marked for the owner to
 * refund (the answer `refundRequired`).
 */
export const fulfilEventOrder: FulfilmentHandler = async (tx, order, paidAt) => {
  if (!order.buyerId || !order.productId) return;
  const claim = await claimSeat(tx, order.productId, order.buyerId, order.id, paidAt);
  if (!claim || !('full' in claim)) return;
  const [event] = await repo.findByIds(tx, [order.productId]);
  await repo.insertRegistration(tx, {
    eventId: event.id,
    communityId: event.communityId,
    userId: order.buyerId,
    status: 'refund_required',
    ticketCode: newTicketCode(),
    orderId: order.id,
    createdAt: paidAt,
  });
  return { refundRequired: 'event_full: the event filled up while the buyer was paying' };
};

/**
 * A fully refunded event order cancels its registration (deleted: its seat is free and its ticket no longer valid; the
 * buyer may register again), in the refund's transaction: `AppDeps.revocations.event`.
 */
export const revokeEventOrder: RevocationHandler = async (tx, order) => {
  await repo.deleteRegistrationOfOrder(tx, order.id);
};

/** Events (of every tribe) starting after `from` and at most at `to`, soonest first, at most `limit`: event reminders. */
export function eventsStartingBetween(db: Executor, from: Date, to: Date, limit: number): Promise<TribeEvent[]> {
  return repo.startingBetween(db, from, to, limit);
}

/**
 * One page of an event's confirmed registrants (user ids in id order after `afterUserId`, null for the first page):
 * an event reminder walks them a chunk at a time.
 */
export function registrantIdsPage(db: Executor, eventId: string, afterUserId: string | null, limit: number): Promise<string[]> {
  return repo.registrantIdsPage(db, eventId, afterUserId, limit);
}
