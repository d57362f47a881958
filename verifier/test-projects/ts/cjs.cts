import { sign, generateTestHeaders, type WebhookHeaders } from '@svc/webhook-verifier';
import { signAsync } from '@svc/webhook-verifier/web';
import { verifyRequest } from '@svc/webhook-verifier/fetch';

const header: string = sign({ payload: '{}', secret: 'whsec_x', timestamp: 1 });
const headers: WebhookHeaders = generateTestHeaders({ payload: '{}', secret: 'whsec_x' });
const later: Promise<string> = signAsync({ payload: '{}', secret: 'whsec_x' });
export { header, headers, later, verifyRequest };
