import { fromCents } from '../commerce/index.js';
import { DateTime, loadTypeDefs, ref } from '../kernel/graphql.js';
import type { RequestContext } from '../kernel/index.js';
import * as service from './events.service.js';
import type { EventRegistration, TribeEvent } from './events.tables.js';

export const typeDefs = loadTypeDefs(import.meta.url);

type Args = Record<string, any>;

export const resolvers = {
  DateTime,
  Query: {
    platformEvents: (_: unknown, a: Args, ctx: RequestContext) => service.platformEvents(ctx, a),
    events: (_: unknown, a: Args, ctx: RequestContext) => service.listEvents(ctx, a.communityId, a),
    event: (_: unknown, a: Args, ctx: RequestContext) => service.getEvent(ctx, a.id, a.communityId),
  },
  Mutation: {
    createEvent: (_: unknown, a: Args, ctx: RequestContext) => service.createEvent(ctx, a.communityId, a.input),
    registerForEvent: (_: unknown, a: Args, ctx: RequestContext) => service.register(ctx, a.communityId, a.eventId),
    checkInEvent: (_: unknown, a: Args, ctx: RequestContext) => service.checkIn(ctx, a.communityId, a.eventId, a.ticketCode),
  },
  Event: {
    __resolveReference: (r: { id: string }, ctx: RequestContext) => service.eventById(ctx, r.id),
    community: (e: TribeEvent) => ref('Community', e.communityId),
    price: (e: TribeEvent) => fromCents(e.priceCents),
    createdBy: (e: TribeEvent) => ref('User', e.createdBy),
    registeredCount: (e: TribeEvent, _: unknown, ctx: RequestContext) => service.registeredCount(ctx, e.id),
    spotsLeft: (e: TribeEvent, _: unknown, ctx: RequestContext) => service.spotsLeft(ctx, e),
    viewerRegistration: (e: TribeEvent, _: unknown, ctx: RequestContext) => service.viewerRegistration(ctx, e.id),
  },
  EventRegistration: {
    event: (r: EventRegistration, _: unknown, ctx: RequestContext) => service.eventOfRegistration(ctx, r),
    user: (r: EventRegistration) => ref('User', r.userId),
    order: (r: EventRegistration) => ref('Order', r.orderId),
  },
  EventRegisterResult: {
    order: (r: service.RegisterResult) => ref('Order', r.order?.id),
  },
};
