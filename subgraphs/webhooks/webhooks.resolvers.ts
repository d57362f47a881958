import { DateTime, loadTypeDefs, ref } from '../kernel/graphql.js';
import type { RequestContext } from '../kernel/index.js';
import * as service from './webhooks.service.js';
import type { WebhookEndpoint } from './webhooks.tables.js';

export const typeDefs = loadTypeDefs(import.meta.url);

type Args = Record<string, any>;
const tribe = (a: Args): service.TribeRef => ({ communityId: a.communityId, handle: a.handle });

export const resolvers = {
  DateTime,
  Query: {
    webhookEndpoints: (_: unknown, a: Args, ctx: RequestContext) => service.listEndpoints(ctx, tribe(a)),
    webhookEndpoint: (_: unknown, a: Args, ctx: RequestContext) => service.getEndpoint(ctx, tribe(a), a.id),
    webhookDeliveries: (_: unknown, a: Args, ctx: RequestContext) => service.listDeliveries(ctx, tribe(a), a.endpointId, a),
    webhookEventTypes: () => service.subscribableEvents(),
  },
  Mutation: {
    createWebhookEndpoint: (_: unknown, a: Args, ctx: RequestContext) => service.createEndpoint(ctx, tribe(a), a.input),
    updateWebhookEndpoint: (_: unknown, a: Args, ctx: RequestContext) => service.updateEndpoint(ctx, tribe(a), a.id, a.input),
    deleteWebhookEndpoint: (_: unknown, a: Args, ctx: RequestContext) => service.deleteEndpoint(ctx, tribe(a), a.id),
    testWebhookEndpoint: (_: unknown, a: Args, ctx: RequestContext) => service.testEndpoint(ctx, tribe(a), a.id),
    resendWebhookDelivery: (_: unknown, a: Args, ctx: RequestContext) =>
      service.resendDelivery(ctx, tribe(a), a.endpointId, a.deliveryId),
  },
  WebhookEndpoint: {
    community: (e: WebhookEndpoint) => ref('Community', e.communityId),
  },
  WebhookTestResult: {
    statusCode: (r: service.PingOutcome) => r.status,
    responseTimeMs: (r: service.PingOutcome) => r.timeMs,
  },
};
