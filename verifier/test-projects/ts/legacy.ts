import { verify, type WebhookEvent } from '@svc/webhook-verifier';
import { verifyAsync } from '@svc/webhook-verifier/web';
import { expressWebhook } from '@svc/webhook-verifier/express';

const event: WebhookEvent = verify({ payload: '{}', headers: {}, secret: 'whsec_x' });
export { event, verifyAsync, expressWebhook };
