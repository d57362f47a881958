/**
 * Resource API routes of tribe events (spec 4.5): fixed GraphQL documents through the gateway, snake_case
 * records in `{data}` / `{data, pagination}`. Money is the spec's number in major units (49.9).
 */
import type { Router } from 'express';
import { EVENT_LIST_STATUSES } from '../../../subgraphs/events/index.js';
import { fromCents } from '../../../subgraphs/commerce/index.js';
import { present } from '../errors.js';
import type { CheckInEventMutation, GetEventQuery, ListEventsQuery } from '../generated.js';
import { handle } from '../http.js';
import { choiceParam, objectBody, pageParams, pick } from './params.js';
import { ORDER, PAGE } from './documents.js';
import { accessResponse, listBody } from './shapes.js';
import { restDocument, type RequestRunner } from '../typed-document.js';

type Registration = CheckInEventMutation['checkInEvent'];
/** An event as the list selects it, or with the viewer's registration as a single event is read. */
type Event = ListEventsQuery['events']['items'][number] | NonNullable<GetEventQuery['event']>;

// ---- documents ----

const REGISTRATION = 'id event { id } user { id } status ticketCode order { id } createdAt checkedInAt';
const EVENT = `id community { id } title description eventType location startsAt endsAt maxAttendees priceCents currency
  createdBy { id } createdAt updatedAt registeredCount spotsLeft viewerRegistration { ${REGISTRATION} }`;

export const EventDocs = {
  listEvents: restDocument(`query ListEvents($communityId: ID!, $status: String, $page: Int, $perPage: Int) {
    events(communityId: $communityId, status: $status, page: $page, perPage: $perPage) { items { ${EVENT} } ${PAGE} } }`),
  getEvent: restDocument(`query GetEvent($id: ID!, $communityId: ID) { event(id: $id, communityId: $communityId) { ${EVENT} } }`),
  createEvent: restDocument(`mutation CreateEvent($communityId: ID!, $input: CreateEventInput!) {
    createEvent(communityId: $communityId, input: $input) { ${EVENT} } }`),
  register: restDocument(`mutation RegisterForEvent($eventId: ID!, $communityId: ID) {
    registerForEvent(eventId: $eventId, communityId: $communityId) {
      status created registration { ${REGISTRATION} } ${ORDER} } }`),
  checkIn: restDocument(`mutation CheckInEvent($eventId: ID!, $communityId: ID, $ticketCode: String) {
    checkInEvent(eventId: $eventId, communityId: $communityId, ticketCode: $ticketCode) { ${REGISTRATION} } }`),
} as const;

// ---- shapes ----

/** A registration (ticket): `ticket_code` is shown to its holder and to the staff checking it in. */
export const registrationRecord = (r: Registration) => ({
  id: r.id,
  event_id: r.event.id,
  user_id: r.user.id,
  status: r.status,
  ticket_code: r.ticketCode,
  order_id: r.order?.id ?? null,
  created_at: r.createdAt,
  checked_in_at: r.checkedInAt,
});

export const eventRecord = (e: Event) => ({
  id: e.id,
  community_id: e.community.id,
  title: e.title,
  description: e.description,
  event_type: e.eventType,
  location: e.location,
  starts_at: e.startsAt,
  ends_at: e.endsAt,
  max_attendees: e.maxAttendees,
  price: fromCents(e.priceCents),
  currency: e.currency,
  registered_count: e.registeredCount,
  spots_left: e.spotsLeft,
  created_by: e.createdBy?.id ?? null,
  created_at: e.createdAt,
  updated_at: e.updatedAt,
  viewer_registration: e.viewerRegistration ? registrationRecord(e.viewerRegistration) : null,
});

// ---- routes ----

/** Mounts the event routes on the `/v1/communities` router (`:cid` is the tribe id). */
export function mountEvents(c: Router, exec: RequestRunner): void {
  c.get('/:cid/events', handle(async (req, res) => {
    const vars = {
      communityId: String(req.params.cid),
      status: choiceParam(req, 'status', EVENT_LIST_STATUSES),
      ...pageParams(req),
    };
    res.json(listBody((await exec(req, EventDocs.listEvents, vars)).events, eventRecord));
  }));
  c.post('/:cid/events', handle(async (req, res) => {
    const input = pick(objectBody(req), {
      title: 'title',
      description: 'description',
      event_type: 'eventType',
      location: 'location',
      starts_at: 'startsAt',
      ends_at: 'endsAt',
      max_attendees: 'maxAttendees',
      price: 'price',
      currency: 'currency',
    });
    const data = await exec(req, EventDocs.createEvent, { communityId: String(req.params.cid), input });
    res.status(201).json({ data: eventRecord(data.createEvent) });
  }));
  c.get('/:cid/events/:id', handle(async (req, res) => {
    res.json({ data: eventRecord(present((await exec(req, EventDocs.getEvent, { id: String(req.params.id), communityId: String(req.params.cid) })).event)) });
  }));
  c.post('/:cid/events/:id/register', handle(async (req, res) => {
    const data = await exec(req, EventDocs.register, { eventId: String(req.params.id), communityId: String(req.params.cid) });
    const out = accessResponse(data.registerForEvent, (r) => registrationRecord(present(r.registration)));
    res.status(out.status).json(out.body);
  }));
  c.post('/:cid/events/:id/checkin', handle(async (req, res) => {
    const { ticket_code: ticketCode } = objectBody(req);
    // A ticket code of the wrong type reaches the service as absent: it answers after its role check.
    const vars = { eventId: String(req.params.id), communityId: String(req.params.cid), ticketCode: typeof ticketCode === 'string' ? ticketCode : null };
    res.json({ data: registrationRecord((await exec(req, EventDocs.checkIn, vars)).checkInEvent) });
  }));
}
