// Loads the BUILT package through its exports map with require(). Run: node test-projects/cjs/index.cjs
const assert = require('node:assert/strict');
const pkg = require('@svc/webhook-verifier');
const web = require('@svc/webhook-verifier/web');
const { expressWebhook } = require('@svc/webhook-verifier/express');
const { verifyRequest } = require('@svc/webhook-verifier/fetch');

const secret = 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8';
const payload = '{"id":"evt_1","type":"ping"}';
const header = 't=1700000000,v1=774b41eb8b7b7e0f177e807aef097854fbdca8662ca80d877a6ee6f1556b5ba7';

async function main() {
  assert.equal(require.resolve('@svc/webhook-verifier').replace(/\\/g, '/').endsWith('/dist/cjs/index.js'), true);
  assert.equal(pkg.sign({ payload, secret, timestamp: 1700000000 }), header);
  assert.deepEqual(pkg.verify({ payload: Buffer.from(payload), headers: { 'X-Svc-Signature': header }, secret, now: 1700000000 }), {
    id: 'evt_1',
    type: 'ping',
  });
  assert.throws(
    () => pkg.verify({ payload: JSON.parse(payload), headers: { 'x-svc-signature': header }, secret, now: 1700000000 }),
    (err) => err instanceof pkg.WebhookVerificationError && err.code === 'payload_not_raw',
  );
  assert.equal(pkg.verifySignature({ payload, headers: { 'x-svc-signature': header }, secret, now: 1700000000 }), undefined);
  assert.throws(
    () => pkg.verifySignature({ payload: `${payload} `, headers: { 'x-svc-signature': header }, secret, now: 1700000000 }),
    (err) => err instanceof pkg.WebhookVerificationError && err.code === 'signature_mismatch',
  );
  await web.verifySignatureAsync({ payload, headers: { 'x-svc-signature': header }, secret, now: 1700000000 });
  assert.equal((await web.verifyAsync({ payload, headers: { 'x-svc-signature': header }, secret, now: 1700000000 })).id, 'evt_1');
  assert.equal(typeof expressWebhook({ secret }), 'function');
  assert.equal(typeof verifyRequest, 'function');
  assert.equal(new pkg.MemorySeenStore().checkAndAdd('a'), true);
  console.log('cjs ok');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
