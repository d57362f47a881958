import { Router, type Request } from 'express';
import type { OperationRunner, OperationVariables, TypedDocumentString } from '../../../gateway/src/graph.js';
import type { AppDeps } from '../../../subgraphs/kernel/index.js';
import type { DeliveryFields, EndpointFields } from '../application/webhooks.js';
import { present, unwrap } from '../errors.js';
import { contextOf, handle } from '../http.js';
import { WebhookDocs } from '../webhooks.documents.js';
import { objectBody, pageParams, pick } from './params.js';
import { listBody } from './shapes.js';

/** A webhook endpoint as a resource-API record (`is_active` is the endpoint's `enabled`). */
export const webhookRecord = (e: EndpointFields) => ({
  id: e.id,
  community_id: e.community.id,
  url: e.url,
  events: e.events,
  description: e.description,
  is_active: e.enabled,
  secret: e.secret,
  created_at: e.createdAt,
  updated_at: e.updatedAt,
});

/** A delivery log row: the spec's five fields, then the rest of the delivery's state. */
export const webhookLogRecord = (d: DeliveryFields) => ({
  id: d.id,
  event: d.event,
  status_code: d.responseStatus,
  response_time_ms: d.responseTimeMs,
  created_at: d.createdAt,
  status: d.status,
  attempts: d.attempts,
  last_error: d.lastError,
  next_attempt_at: d.nextAttemptAt,
  delivered_at: d.deliveredAt,
});

const FIELDS = { url: 'url', events: 'events', description: 'description', is_active: 'enabled' };
// The resource API's paging rule (spec 4.4, README): 20 a page by default, at most 50; the control plane's is 25 and 100.
const PER_PAGE_DEFAULT = 20;
const PER_PAGE_MAX = 50;

/** `/v1/communities/:cid/webhooks...` (spec 4.5), mounted inside the resource API's signed-in router. */
export function webhookResources(app: AppDeps, run: OperationRunner): Router {
  const r = Router({ mergeParams: true });
  // Every webhook document takes the tribe as `$communityId` or `$handle`: here always the id of the path.
  const exec = async <R, V>(req: Request, doc: TypedDocumentString<R, V>, variables: OperationVariables<V>) =>
    unwrap(await run(contextOf(app, req), doc, { communityId: String(req.params.cid), ...variables }));

  r.get('/', handle(async (req, res) => {
    res.json({ data: (await exec(req, WebhookDocs.list, {})).webhookEndpoints.map(webhookRecord) });
  }));
  r.post('/', handle(async (req, res) => {
    const data = await exec(req, WebhookDocs.create, { input: pick(objectBody(req), FIELDS) });
    res.status(201).json({ data: webhookRecord(data.createWebhookEndpoint) });
  }));
  r.get('/:id', handle(async (req, res) => {
    res.json({ data: webhookRecord(present((await exec(req, WebhookDocs.get, { id: String(req.params.id) })).webhookEndpoint)) });
  }));
  r.patch('/:id', handle(async (req, res) => {
    const data = await exec(req, WebhookDocs.update, { id: String(req.params.id), input: pick(objectBody(req), FIELDS) });
    res.json({ data: webhookRecord(data.updateWebhookEndpoint) });
  }));
  r.delete('/:id', handle(async (req, res) => {
    await exec(req, WebhookDocs.delete, { id: String(req.params.id) });
    res.status(204).end();
  }));
  r.post('/:id/test', handle(async (req, res) => {
    const out = (await exec(req, WebhookDocs.test, { id: String(req.params.id) })).testWebhookEndpoint;
    res.json({
      data: {
        success: out.ok,
        status_code: out.statusCode,
        response_time_ms: out.responseTimeMs,
        error: out.error,
        delivery_id: out.delivery?.id ?? null,
      },
    });
  }));
  r.get('/:id/logs', handle(async (req, res) => {
    const { page, perPage = PER_PAGE_DEFAULT } = pageParams(req);
    const vars = { endpointId: String(req.params.id), page, perPage: Math.min(perPage, PER_PAGE_MAX) };
    res.json(listBody((await exec(req, WebhookDocs.deliveries, vars)).webhookDeliveries, webhookLogRecord));
  }));
  return r;
}
