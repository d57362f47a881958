import { verify, verifyAsync, WebhookVerificationError, type WebhookEvent, type WebhookVerificationErrorCode } from '@svc/webhook-verifier';
import { verifyRequest, type RequestLike } from '@svc/webhook-verifier/web';
import { expressWebhook, MemorySeenStore, type WebhookRequest } from '@svc/webhook-verifier/express';

declare const body: Uint8Array;
declare const request: RequestLike;

const event: WebhookEvent<{ userId: string }> = verify<{ userId: string }>({ payload: body, headers: {}, secret: 'whsec_x' });
const userId: string = event.data.userId;
const later: Promise<WebhookEvent> = verifyAsync({ payload: 'x', headers: { a: ['b'] }, secret: 's', now: () => new Date() });
const fromRequest: Promise<WebhookEvent> = verifyRequest(request, { secret: 's', toleranceSeconds: 300 });
const mw = expressWebhook({ secret: 's', dedupe: new MemorySeenStore({ ttlSeconds: 60 }) });
declare const req: WebhookRequest;
const code: WebhookVerificationErrorCode | undefined = new WebhookVerificationError('signature_mismatch', 'm').code;
export { userId, later, fromRequest, mw, req, code };
