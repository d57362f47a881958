import { Router, type Request } from 'express';
import type { OperationRunner, OperationVariables, TypedDocumentString } from '../../../gateway/src/graph.js';
import type { AppDeps } from '../../../subgraphs/kernel/index.js';
import { present, unwrap } from '../errors.js';
import { contextOf, handle } from '../http.js';
import { objectBody, pageParams, pick } from '../resource/params.js';
import type { WebhookEndpointsQuery, WebhookDeliveriesQuery } from '../generated.js';
import { WebhookDocs } from '../webhooks.documents.js';

/** An endpoint as the webhook documents select it. */
export type EndpointFields = WebhookEndpointsQuery['webhookEndpoints'][number];
/** A delivery as the webhook documents select it. */
export type DeliveryFields = WebhookDeliveriesQuery['webhookDeliveries']['items'][number];

/** An endpoint as the control plane shows it (the secret stays visible). */
export const endpointBody = (e: EndpointFields) => ({
  id: e.id,
  url: e.url,
  events: e.events,
  description: e.description,
  enabled: e.enabled,
  secret: e.secret,
  createdAt: e.createdAt,
  updatedAt: e.updatedAt,
});

/**
 * A delivery log row (spec 2.4a) plus the duration of the last attempt and `body`: the exact JSON text POSTed to the
 * receiver (the same on every attempt), for the console's log.
 */
export const deliveryRecord = (d: DeliveryFields) => ({
  id: d.id,
  event: d.event,
  status: d.status,
  attempts: d.attempts,
  responseStatus: d.responseStatus,
  responseTimeMs: d.responseTimeMs,
  lastError: d.lastError,
  nextAttemptAt: d.nextAttemptAt,
  deliveredAt: d.deliveredAt,
  createdAt: d.createdAt,
  body: d.body,
});

const FIELDS = { url: 'url', events: 'events', description: 'description', enabled: 'enabled' };

/**
 * Control plane for webhook endpoints, mounted at `/communities/:handle/webhooks` behind a session
 * (owner or admin of the tribe; flat errors).
 */
export function webhookRoutes(app: AppDeps, run: OperationRunner): Router {
  const r = Router({ mergeParams: true });
  // Every webhook document takes the tribe as `$communityId` or `$handle`: here always the handle of the path.
  const exec = async <R, V>(req: Request, doc: TypedDocumentString<R, V>, variables: OperationVariables<V>) =>
    unwrap(await run(contextOf(app, req), doc, { handle: String(req.params.handle), ...variables }));

  r.post('/', handle(async (req, res) => {
    const data = await exec(req, WebhookDocs.create, { input: pick(objectBody(req), FIELDS) });
    res.status(201).json(endpointBody(data.createWebhookEndpoint));
  }));
  r.get('/', handle(async (req, res) => {
    const data = await exec(req, WebhookDocs.list, {});
    res.json({ webhooks: data.webhookEndpoints.map(endpointBody), availableEvents: data.webhookEventTypes });
  }));
  r.get('/:id', handle(async (req, res) => {
    res.json(endpointBody(present((await exec(req, WebhookDocs.get, { id: String(req.params.id) })).webhookEndpoint)));
  }));
  r.patch('/:id', handle(async (req, res) => {
    const data = await exec(req, WebhookDocs.update, { id: String(req.params.id), input: pick(objectBody(req), FIELDS) });
    res.json(endpointBody(data.updateWebhookEndpoint));
  }));
  r.delete('/:id', handle(async (req, res) => {
    await exec(req, WebhookDocs.delete, { id: String(req.params.id) });
    res.json({ ok: true });
  }));
  r.post('/:id/test', handle(async (req, res) => {
    const out = (await exec(req, WebhookDocs.test, { id: String(req.params.id) })).testWebhookEndpoint;
    res.json({
      ok: out.ok,
      statusCode: out.statusCode,
      responseTimeMs: out.responseTimeMs,
      error: out.error,
      delivery: out.delivery ? deliveryRecord(out.delivery) : null,
    });
  }));
  r.get('/:id/deliveries', handle(async (req, res) => {
    const vars = { endpointId: String(req.params.id), ...pageParams(req, 'perPage') };
    const page = (await exec(req, WebhookDocs.deliveries, vars)).webhookDeliveries;
    res.json({ deliveries: page.items.map(deliveryRecord), page: page.page, perPage: page.perPage, hasMore: page.hasMore });
  }));
  r.post('/:id/deliveries/:deliveryId/resend', handle(async (req, res) => {
    const vars = { endpointId: String(req.params.id), deliveryId: String(req.params.deliveryId) };
    res.status(202).json({ delivery: deliveryRecord((await exec(req, WebhookDocs.resend, vars)).resendWebhookDelivery) });
  }));
  return r;
}
