import { DateTime, loadTypeDefs, ref } from '../kernel/graphql.js';
import * as service from './webhooks.service.js';
import type { Resolvers } from './webhooks.generated.js';

export const typeDefs = loadTypeDefs(import.meta.url);

const tribe = (a: service.TribeRef): service.TribeRef => ({ communityId: a.communityId, handle: a.handle });

export const resolvers: Resolvers = {
  DateTime,
  Query: {
    webhookEndpoints: (_, a, ctx) => service.listEndpoints(ctx, tribe(a)),
    webhookEndpoint: (_, a, ctx) => service.getEndpoint(ctx, tribe(a), a.id),
    webhookDeliveries: (_, a, ctx) => service.listDeliveries(ctx, tribe(a), a.endpointId, a),
    webhookEventTypes: () => service.subscribableEvents(),
  },
  Mutation: {
    createWebhookEndpoint: (_, a, ctx) => service.createEndpoint(ctx, tribe(a), a.input),
    updateWebhookEndpoint: (_, a, ctx) => service.updateEndpoint(ctx, tribe(a), a.id, a.input),
    deleteWebhookEndpoint: (_, a, ctx) => service.deleteEndpoint(ctx, tribe(a), a.id),
    testWebhookEndpoint: (_, a, ctx) => service.testEndpoint(ctx, tribe(a), a.id),
    resendWebhookDelivery: (_, a, ctx) =>
      service.resendDelivery(ctx, tribe(a), a.endpointId, a.deliveryId),
  },
  WebhookEndpoint: {
    community: (e) => ref('Community', e.communityId),
  },
  WebhookDelivery: {
    // The stored payload, as sent: read with the row (no query of its own).
    body: (d) => d.payload,
  },
  WebhookTestResult: {
    statusCode: (r) => r.status,
    responseTimeMs: (r) => r.timeMs,
  },
};
