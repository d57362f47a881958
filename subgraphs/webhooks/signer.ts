import { createHmac } from 'node:crypto';
import { randomToken } from '../kernel/index.js';

/** A new signing secret: `whsec_` and 32 random bytes in base64url (43 characters). */
export const generateSecret = (): string => `whsec_${randomToken()}`;

/**
 * The `x-svc-signature` value for `payload` sent at unix second `t`: `t=<t>,v1=<hex>`, where v1 is the
 * lowercase hex HMAC-SHA256 keyed with the whole secret string (`whsec_...` as UTF-8) over `t.payload`.
 */
export function signatureHeader(secret: string, payload: string | Buffer, t: number): string {
  const mac = createHmac('sha256', secret).update(`${t}.`).update(payload).digest('hex');
  return `t=${t},v1=${mac}`;
}
