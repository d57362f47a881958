// Receiving the service's webhooks with the Fetch API: one handler for Cloudflare Workers, Next.js route handlers
// (Node or edge runtime), Hono, Deno and Bun. It imports @svc/webhook-verifier/web, which needs only Web Crypto
// (no node:* module).
//
//   npm install @svc/webhook-verifier
import { MemorySeenStore, verifyRequest, WebhookVerificationError, type WebhookEvent } from '@svc/webhook-verifier/web';

const seen = new MemorySeenStore(); // per isolate; use KV, Redis or your database to dedupe across instances

/** Verifies a delivery (signature and timestamp), hands its event to `onEvent` once, and answers the service. */
export async function handleWebhook(
  request: Request,
  secret: string,
  onEvent: (event: WebhookEvent) => void | Promise<void>,
): Promise<Response> {
  if (request.method !== 'POST') return new Response(null, { status: 405, headers: { allow: 'POST' } });
  let event: WebhookEvent;
  try {
    event = await verifyRequest(request, { secret }); // reads the raw body: do not read it before
  } catch (err) {
    if (err instanceof WebhookVerificationError) {
      return Response.json({ error: err.code, message: err.message }, { status: 400 });
    }
    throw err;
  }
  // The delivery id is the same on every retry and resend: the dedupe key.
  if (!seen.checkAndAdd(event.id, 24 * 3600)) return Response.json({ duplicate: true });
  try {
    await onEvent(event);
  } catch (err) {
    seen.delete(event.id); // not handled: the service's retry must run it again
    throw err;
  }
  return new Response(null, { status: 204 });
}

/** Cloudflare Workers: `export default` this module (wrangler secret put SVC_WEBHOOK_SECRET). */
export default {
  fetch: (request: Request, env: { SVC_WEBHOOK_SECRET: string }) =>
    handleWebhook(request, env.SVC_WEBHOOK_SECRET, (event) => console.log('webhook', event.type, event.id)),
};

// Next.js route handler, app/api/webhooks/svc/route.ts:
//   export const POST = (request: Request) => handleWebhook(request, process.env.SVC_WEBHOOK_SECRET!, enqueue);
// Hono:
//   app.post('/webhooks/svc', (c) => handleWebhook(c.req.raw, c.env.SVC_WEBHOOK_SECRET, enqueue));
// Deno / Bun:
//   Deno.serve((request) => handleWebhook(request, Deno.env.get('SVC_WEBHOOK_SECRET')!, enqueue));
