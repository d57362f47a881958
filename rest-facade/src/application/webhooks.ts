import { Router, type Request } from 'express';
import type { Executor } from '../../../gateway/src/graph.js';
import type { AppDeps } from '../../../subgraphs/kernel/index.js';
import { unwrap } from '../errors.js';
import { contextOf, handle } from '../http.js';
import { objectBody, pageParams, pick } from '../resource/params.js';
import { WebhookDocs } from '../webhooks.documents.js';

type G = Record<string, any>;

/** An endpoint as the control plane shows it (the secret stays visible). */
export const endpointBody = (e: G) => ({
  id: e.id,
  url: e.url,
  events: e.events,
  description: e.description,
  enabled: e.enabled,
  secret: e.secret,
  createdAt: e.createdAt,
  updatedAt: e.updatedAt,
});

/** A delivery log row (spec 2.4a) plus the duration of the last attempt. */
export const deliveryBody = (d: G) => ({
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
});

const FIELDS = { url: 'url', events: 'events', description: 'description', enabled: 'enabled' };

/**
 * Control plane for webhook endpoints, mounted at `/communities/:handle/webhooks` behind a session
 * (owner or admin of the tribe; flat errors).
 */
export function webhookRoutes(app: AppDeps, run: Executor): Router {
  const r = Router({ mergeParams: true });
  const exec = async (req: Request, doc: string, variables: Record<string, unknown> = {}) =>
    unwrap(await run(contextOf(app, req), doc, { handle: req.params.handle, ...variables }));

  r.post('/', handle(async (req, res) => {
    const data = await exec(req, WebhookDocs.create, { input: pick(objectBody(req), FIELDS) });
    res.status(201).json(endpointBody(data.createWebhookEndpoint));
  }));
  r.get('/', handle(async (req, res) => {
    const data = await exec(req, WebhookDocs.list);
    res.json({ webhooks: data.webhookEndpoints.map(endpointBody), availableEvents: data.webhookEventTypes });
  }));
  r.get('/:id', handle(async (req, res) => {
    res.json(endpointBody((await exec(req, WebhookDocs.get, { id: req.params.id })).webhookEndpoint));
  }));
  r.patch('/:id', handle(async (req, res) => {
    const data = await exec(req, WebhookDocs.update, { id: req.params.id, input: pick(objectBody(req), FIELDS) });
    res.json(endpointBody(data.updateWebhookEndpoint));
  }));
  r.delete('/:id', handle(async (req, res) => {
    await exec(req, WebhookDocs.delete, { id: req.params.id });
    res.json({ ok: true });
  }));
  r.post('/:id/test', handle(async (req, res) => {
    const out = (await exec(req, WebhookDocs.test, { id: req.params.id })).testWebhookEndpoint;
    res.json({
      ok: out.ok,
      statusCode: out.statusCode,
      responseTimeMs: out.responseTimeMs,
      error: out.error,
      delivery: out.delivery ? deliveryBody(out.delivery) : null,
    });
  }));
  r.get('/:id/deliveries', handle(async (req, res) => {
    const vars = { endpointId: req.params.id, ...pageParams(req, 'perPage') };
    const page = (await exec(req, WebhookDocs.deliveries, vars)).webhookDeliveries;
    res.json({ deliveries: page.items.map(deliveryBody), page: page.page, perPage: page.perPage, hasMore: page.hasMore });
  }));
  r.post('/:id/deliveries/:deliveryId/resend', handle(async (req, res) => {
    const vars = { endpointId: req.params.id, deliveryId: req.params.deliveryId };
    res.status(202).json({ delivery: deliveryBody((await exec(req, WebhookDocs.resend, vars)).resendWebhookDelivery) });
  }));
  return r;
}
