import { describe, it, expect } from '@jest/globals';
import { verifyRequest } from '../src/request.js';
import { generateTestHeadersAsync } from '../src/web-crypto.js';
import { SECRET, deliveryBody, outcome } from './helpers.js';

function post(body: string | Uint8Array<ArrayBuffer>, headers: Record<string, string>): Request {
  return new Request('https://receiver.example/webhooks/svc', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
}

describe(verifyRequest.name, () => {
  const body = deliveryBody('dlv_fetch', 'order.paid');

  it('verifies a real Request and returns the event', async () => {
    const headers = await generateTestHeadersAsync({ payload: body, secret: SECRET });
    const event = await verifyRequest(post(body, headers), { secret: SECRET });
    expect(event.id).toBe('dlv_fetch');
    expect(event.type).toBe('order.paid');
  });

  it('verifies a body that is not valid UTF-8 byte for byte', async () => {
    // Reading with text() would replace the invalid byte and break the signature.
    const bytes = new Uint8Array([...new TextEncoder().encode(body.slice(0, -1)), 0x20, 0xff, 0x7d]);
    const headers = await generateTestHeadersAsync({ payload: bytes, secret: SECRET, id: 'x', event: 'y' });
    // Signature passes; the body is then refused only because it is not UTF-8 JSON.
    expect(await outcome(() => verifyRequest(post(bytes, headers), { secret: SECRET }))).toBe('payload_not_raw');
  });

  it('rejects a tampered body and a wrong secret', async () => {
    const headers = await generateTestHeadersAsync({ payload: body, secret: SECRET });
    expect(await outcome(() => verifyRequest(post(body.replace('dlv_fetch', 'dlv_other'), headers), { secret: SECRET }))).toBe(
      'signature_mismatch',
    );
    expect(await outcome(() => verifyRequest(post(body, headers), { secret: 'whsec_wrong' }))).toBe('signature_mismatch');
  });

  it('passes now and toleranceSeconds through', async () => {
    const headers = await generateTestHeadersAsync({ payload: body, secret: SECRET, timestamp: 1731000000 });
    expect(await outcome(() => verifyRequest(post(body, headers), { secret: SECRET, now: 1731000400 }))).toBe('timestamp_out_of_range');
    expect(
      await outcome(() => verifyRequest(post(body, headers), { secret: SECRET, now: 1731000400, toleranceSeconds: 600 })),
    ).toBe('ok');
  });

  it('says payload_not_raw when the body was already read', async () => {
    const req = post(body, await generateTestHeadersAsync({ payload: body, secret: SECRET }));
    await req.json();
    const err = await verifyRequest(req, { secret: SECRET }).catch((e: Error) => e);
    expect(err).toMatchObject({ code: 'payload_not_raw' });
    expect((err as Error).message).toContain('request.clone()');
  });
});
