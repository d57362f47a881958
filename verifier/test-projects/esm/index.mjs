// Loads the BUILT package through its exports map with import. Run: node test-projects/esm/index.mjs
import assert from 'node:assert/strict';
import { sign, verify, verifySignature, verifyAsync, generateTestHeaders, WebhookVerificationError } from '@svc/webhook-verifier';
import * as web from '@svc/webhook-verifier/web';
import { expressWebhook } from '@svc/webhook-verifier/express';
import { verifyRequest } from '@svc/webhook-verifier/fetch';

const secret = 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8';
const payload = '{"id":"evt_1","type":"ping"}';
const header = 't=1700000000,v1=774b41eb8b7b7e0f177e807aef097854fbdca8662ca80d877a6ee6f1556b5ba7';

assert.match(import.meta.resolve('@svc/webhook-verifier'), /\/dist\/esm\/index\.js$/);
assert.equal(sign({ payload, secret, timestamp: 1700000000 }), header);
assert.equal(verify({ payload, headers: new Headers({ 'x-svc-signature': header }), secret, now: 1700000000 }).type, 'ping');
assert.equal(verifySignature({ payload: Buffer.from(payload), headers: { 'x-svc-signature': header }, secret, now: 1700000000 }), undefined);
assert.throws(() => verifySignature({ payload, headers: { 'x-svc-signature': header }, secret, now: 1700000301 }), { code: 'timestamp_out_of_range' });
assert.equal((await verifyAsync({ payload, headers: { 'x-svc-signature': header }, secret, now: 1700000000 })).id, 'evt_1');
assert.equal(web.WebhookVerificationError, WebhookVerificationError, 'one error class across entries');
const headers = generateTestHeaders({ payload, secret });
const request = new Request('https://receiver.example/hook', { method: 'POST', headers, body: payload });
assert.equal((await verifyRequest(request, { secret })).id, 'evt_1');
assert.equal(typeof expressWebhook({ secret }), 'function');
console.log('esm ok');
