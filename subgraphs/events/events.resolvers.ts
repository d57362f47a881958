import { fromCents } from '../commerce/index.js';
import { DateTime, loadTypeDefs, nonNull, ref } from '../kernel/graphql.js';
import * as service from './events.service.js';
import type { Resolvers } from './events.generated.js';

export const typeDefs = loadTypeDefs(import.meta.url);

export const resolvers: Resolvers = {
  DateTime,
  Query: {
    platformEvents: (_, a, ctx) => service.platformEvents(ctx, a),
    events: (_, a, ctx) => service.listEvents(ctx, a.communityId, a),
    event: (_, a, ctx) => service.getEvent(ctx, a.id, a.communityId),
  },
  Mutation: {
    createEvent: (_, a, ctx) => service.createEvent(ctx, a.communityId, a.input),
    registerForEvent: (_, a, ctx) => service.register(ctx, a.communityId, a.eventId),
    checkInEvent: (_, a, ctx) => service.checkIn(ctx, a.communityId, a.eventId, a.ticketCode),
  },
  Event: {
    __resolveReference: (r, ctx) => service.readableEvent(ctx, r.id),
    community: (e) => ref('Community', e.communityId),
    price: (e) => fromCents(e.priceCents),
    createdBy: (e) => ref('User', e.createdBy),
    registeredCount: (e, _, ctx) => service.registeredCount(ctx, e.id),
    spotsLeft: (e, _, ctx) => service.spotsLeft(ctx, e),
    viewerRegistration: (e, _, ctx) => service.viewerRegistration(ctx, e.id),
  },
  EventRegistration: {
    event: async (r, _, ctx, info) => nonNull(await service.eventOfRegistration(ctx, r), info),
    user: (r) => ref('User', r.userId),
    order: (r) => ref('Order', r.orderId),
  },
  EventRegisterResult: {
    order: (r) => ref('Order', r.order?.id),
  },
};
