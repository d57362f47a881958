// Receiving the service's webhooks in Express (4 or 5) with @svc/webhook-verifier.
//
//   npm install express @svc/webhook-verifier
//
// The middleware reads the raw body itself and checks `x-svc-signature` with the endpoint's whsec_ secret, so the
// webhook route comes BEFORE any JSON body parser. A failed check is answered 400 {"error": "<code>"} and your handler
// never runs; a delivery id already seen (a retry or a resend that did arrive before) is answered 200 without it.
import express, { type Express } from 'express';
import { expressWebhook, MemorySeenStore, type WebhookEvent, type WebhookRequest } from '@svc/webhook-verifier/express';

export function createWebhookApp(options: { secret: string; onEvent: (event: WebhookEvent) => void | Promise<void> }): Express {
  const app = express();
  app.post(
    '/webhooks/svc',
    // One store per process here; with several processes, a SeenStore over Redis or your database.
    expressWebhook({ secret: options.secret, dedupe: new MemorySeenStore() }),
    async (req, res) => {
      const event = (req as unknown as WebhookRequest).webhookEvent!;
      // Answer within 10 seconds; slow work belongs in a queue. A non-2xx answer makes the service retry.
      await options.onEvent(event);
      res.status(204).end();
    },
  );
  app.use(express.json()); // the rest of the app may parse JSON: it is mounted after the webhook route
  return app;
}

// Run it:
//   const app = createWebhookApp({ secret: process.env.SVC_WEBHOOK_SECRET!, onEvent: (e) => console.log(e.type, e.id) });
//   app.listen(3000); // behind your HTTPS proxy: the service delivers to https:// URLs only
