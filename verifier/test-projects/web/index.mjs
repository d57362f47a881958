// Runs the ./web and ./fetch entries with Node built-ins blocked; only Web APIs are used here too.
// Run: node --import ./test-projects/web/block-node-builtins.mjs test-projects/web/index.mjs
import { verifyAsync, verifySignatureAsync, signAsync, generateTestHeadersAsync, verifyRequest, WebhookVerificationError } from '@svc/webhook-verifier/web';
import * as fetchEntry from '@svc/webhook-verifier/fetch';

const secret = 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8';
const payload = '{"id":"evt_1","type":"ping"}';
const header = 't=1700000000,v1=774b41eb8b7b7e0f177e807aef097854fbdca8662ca80d877a6ee6f1556b5ba7';

function check(condition, what) {
  if (!condition) throw new Error(`web smoke failed: ${what}`);
}

check((await signAsync({ payload, secret, timestamp: 1700000000 })) === header, 'signAsync known answer');
const event = await verifyAsync({ payload: new TextEncoder().encode(payload), headers: new Headers({ 'X-Svc-Signature': header }), secret, now: 1700000000 });
check(event.id === 'evt_1', 'verifyAsync known answer');
const tampered = await verifyAsync({ payload: payload.replace('ping', 'pong'), headers: { 'x-svc-signature': header }, secret, now: 1700000000 }).catch((e) => e);
check(tampered instanceof WebhookVerificationError && tampered.code === 'signature_mismatch', 'tampered body rejected');
check((await verifySignatureAsync({ payload, headers: { 'x-svc-signature': header }, secret, now: 1700000000 })) === undefined, 'verifySignatureAsync');
const stale = await verifySignatureAsync({ payload, headers: { 'x-svc-signature': header }, secret, now: 1700000301 }).catch((e) => e);
check(stale instanceof WebhookVerificationError && stale.code === 'timestamp_out_of_range', 'verifySignatureAsync refuses a stale t');
const headers = await generateTestHeadersAsync({ payload, secret });
check((await verifyRequest(new Request('https://r.example/hook', { method: 'POST', headers, body: payload }), { secret })).type === 'ping', 'verifyRequest');
check(typeof fetchEntry.verifyRequest === 'function', './fetch entry');
console.log('web ok');
