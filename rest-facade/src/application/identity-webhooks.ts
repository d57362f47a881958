/**
 * Application API, area `webhooks`: the inbound identity-provider webhook (Standard Webhooks / Svix signatures), which
 * provisions, updates and deletes accounts (subgraphs/identity/idp-webhooks.service.ts). Flat errors
 * (`{"error": "<code>"}`). Mounted BEFORE the Application router, so no JSON parser reads the body before its signature
 * is checked over the raw bytes. No session: the provider's signature is the authentication.
 */
import express, { Router } from 'express';
import { receiveIdentityEvent, standardWebhookHeaders } from '../../../subgraphs/identity/index.js';
import { type AppDeps, requestLogger } from '../../../subgraphs/kernel/index.js';
import { contextOf, handle } from '../http.js';
import { flatErrors } from './router.js';

export function identityWebhooksRouter(app: AppDeps): Router {
  const r = Router();

  // Any content type is read as bytes: the signature covers exactly what was sent.
  r.post(
    '/webhooks/identity',
    express.raw({ type: () => true, limit: app.config.bodyLimitBytes }),
    handle(async (req, res) => {
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      res.json(await receiveIdentityEvent(app, body, standardWebhookHeaders((name) => req.get(name)), requestLogger(contextOf(app, req))));
    }),
  );

  r.use(flatErrors);
  return r;
}
