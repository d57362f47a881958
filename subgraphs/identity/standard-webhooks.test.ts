import { describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { standardWebhookHeaders, verifyStandardWebhook, type StandardWebhookHeaders } from './standard-webhooks.js';

// 32 bytes, as a provider's dashboard shows them.
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwAAECAwQFBgc=';
const OTHER = 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=';
const NOW = new Date('2026-11-27T05:00:00Z');
const T = Math.floor(NOW.getTime() / 1000);
const BODY = '{"type":"user.created","data":{"id":"user_1"}}';

/** The headers the official library makes for `body` at unix second `t`. */
function signed(body = BODY, t = T, secret = SECRET, id = 'msg_1'): StandardWebhookHeaders {
  return { id, timestamp: String(t), signature: new Webhook(secret).sign(id, new Date(t * 1000), body) };
}
const verify = (headers: StandardWebhookHeaders, body = BODY, secret: string | string[] = SECRET) =>
  verifyStandardWebhook({ headers, payload: Buffer.from(body), secret, now: NOW });

describe(verifyStandardWebhook.name, () => {
  it('accepts what the standardwebhooks library signs', () => {
    expect(verify(signed())).toBeNull();
  });

  it('agrees with a known answer: base64 HMAC-SHA256 keyed with the decoded secret over id.timestamp.body', () => {
    const headers = { id: 'msg_p5jXN8AQM9LWM0D4loKWxJek', timestamp: '1614265330', signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=' };
    const body = '{"test": 2432232314}';
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    // The Standard Webhooks specification's own example.
    expect(verifyStandardWebhook({ headers, payload: Buffer.from(body), secret, now: new Date(1614265330_000) })).toBeNull();
  });

  it.each([
    ['300 seconds old', -300],
    ['300 seconds ahead', 300],
  ])('accepts a timestamp %s', (_label, offset) => {
    expect(verify(signed(BODY, T + offset))).toBeNull();
  });

  it.each([
    ['301 seconds old', -301],
    ['301 seconds ahead', 301],
  ])('refuses a timestamp %s', (_label, offset) => {
    expect(verify(signed(BODY, T + offset))).toBe('timestamp_out_of_tolerance');
  });

  it('accepts a header with several signatures when one matches, and either secret during a rotation', () => {
    const good = signed().signature!;
    expect(verify({ ...signed(), signature: `v1,${'A'.repeat(43)}= v1a,xyz ${good}` })).toBeNull();
    expect(verify(signed(BODY, T, OTHER), BODY, [SECRET, OTHER])).toBeNull();
    expect(verify(signed(BODY, T, OTHER), BODY, [SECRET])).toBe('no_matching_signature');
  });

  it.each<[string, Partial<StandardWebhookHeaders>, string]>([
    ['no id', { id: undefined }, 'missing_headers'],
    ['no timestamp', { timestamp: undefined }, 'missing_headers'],
    ['no signature', { signature: undefined }, 'missing_headers'],
    ['an empty signature', { signature: '' }, 'missing_headers'],
    ['a timestamp in milliseconds', { timestamp: String(T * 1000 + 1) }, 'malformed_headers'],
    ['a timestamp that is not a number', { timestamp: 'soon' }, 'malformed_headers'],
    ['an id with a space', { id: 'msg 1' }, 'malformed_headers'],
    ['an id of 256 characters', { id: 'm'.repeat(256) }, 'malformed_headers'],
    ['another id than the one signed', { id: 'msg_2' }, 'no_matching_signature'],
    ['another timestamp than the one signed', { timestamp: String(T + 1) }, 'no_matching_signature'],
    ['a v0 signature only', { signature: signed().signature!.replace('v1,', 'v0,') }, 'no_matching_signature'],
    ['a truncated signature', { signature: signed().signature!.slice(0, -3) }, 'no_matching_signature'],
  ])('refuses %s', (_label, change, reason) => {
    expect(verify({ ...signed(), ...change })).toBe(reason);
  });

  it('refuses a body changed by one byte, and another secret', () => {
    expect(verify(signed(), `${BODY} `)).toBe('no_matching_signature');
    expect(verify(signed(BODY, T, OTHER))).toBe('no_matching_signature');
  });
});

describe(standardWebhookHeaders.name, () => {
  it('reads the webhook-* names, else the svix-* names, never a mix', () => {
    const from = (h: Record<string, string>) => standardWebhookHeaders((name) => h[name]);
    expect(from({ 'webhook-id': 'a', 'webhook-timestamp': '1', 'webhook-signature': 's', 'svix-id': 'b' })).toEqual({ id: 'a', timestamp: '1', signature: 's' });
    expect(from({ 'svix-id': 'b', 'svix-timestamp': '2', 'svix-signature': 't', 'webhook-id': 'a' })).toEqual({ id: 'b', timestamp: '2', signature: 't' });
  });
});
