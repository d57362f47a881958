/**
 * Application API, areas `webhooks` and `payments`: the inbound Stripe-format payment webhook and the manual
 * provider's mark-paid operation (outside production only). Flat errors (`{"error": "<code>"}`). Mounted BEFORE the
 * Application router, so no JSON parser reads the webhook's body before its signature is checked over the raw bytes.
 * A cookie write here passes the app's one guard of cookie writes first (`cookie-writes.ts`: same site, JSON only).
 */
import express, { Router } from 'express';
import { markTribeOrderPaid, receiveStripeEvent } from '../../../subgraphs/commerce/index.js';
import { type AppDeps, requestLogger } from '../../../subgraphs/kernel/index.js';
import { requireCaller, sessionAuth } from '../auth.js';
import { contextOf, handle } from '../http.js';
import { refuseBadText } from '../input.js';
import { flatErrors } from './router.js';

export function paymentsRouter(app: AppDeps): Router {
  const r = Router();

  // Any content type is read as bytes: the signature covers exactly what was sent.
  r.post(
    '/webhooks/payments/stripe',
    express.raw({ type: () => true, limit: app.config.bodyLimitBytes }),
    handle(async (req, res) => {
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      res.json(await receiveStripeEvent(app, body, req.get('stripe-signature'), requestLogger(contextOf(app, req))));
    }),
  );

  // Manual provider, outside production only (it stands in for a provider's confirmation): the owner of the tribe
  // marks one of its orders paid. In production the route does not exist (404 `not_found`).
  if (app.config.nodeEnv !== 'production') {
    r.post(
      '/communities/:handle/orders/:orderId/mark-paid',
      refuseBadText(),
      sessionAuth(app),
      requireCaller('Sign in first.'),
      handle(async (req, res) => {
        const o = await markTribeOrderPaid(contextOf(app, req), String(req.params.handle), String(req.params.orderId));
        res.json({
          ok: true,
          order: {
            id: o.id,
            productType: o.productType,
            productId: o.productId,
            amountCents: o.amountCents,
            currency: o.currency,
            status: o.status,
            paidAt: o.paidAt,
            createdAt: o.createdAt,
          },
        });
      }),
    );
  }

  r.use(flatErrors);
  return r;
}
