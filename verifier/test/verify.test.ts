import { describe, it, expect } from '@jest/globals';
import { generateTestHeaders, sign, verify, verifySignature } from '../src/node.js';
import { generateTestHeadersAsync, signAsync, verifyAsync, verifySignatureAsync } from '../src/web-crypto.js';
import { parseSignatureHeader } from '../src/core.js';
import { WebhookVerificationError } from '../src/errors.js';
import { NOW, SECRET, deliveryBody, outcome } from './helpers.js';
import type { VerifyOptions, WebhookEvent } from '../src/types.js';

const body = deliveryBody('dlv_abc', 'member.joined');
const header = sign({ payload: body, secret: SECRET, timestamp: NOW });

// Each case runs against both implementations.
const implementations: Array<[string, (o: VerifyOptions) => Promise<WebhookEvent>]> = [
  ['verify', async (o) => verify(o)],
  ['verifyAsync', (o) => verifyAsync(o)],
];

describe.each(implementations)('%s', (_name, run) => {
  const base = { payload: body, secret: SECRET, now: NOW, headers: { 'x-svc-signature': header } };

  it('returns the parsed event', async () => {
    const event = await run(base);
    expect(event).toEqual({ id: 'dlv_abc', type: 'member.joined', created: NOW - 10, data: { userId: 'usr_42', handle: 'runners' } });
  });

  describe('headers', () => {
    it('finds the header whatever the key case', async () => {
      expect(await outcome(() => run({ ...base, headers: { 'X-SVC-Signature': header } }))).toBe('ok');
      expect(await outcome(() => run({ ...base, headers: { 'X-Svc-Signature': header, Host: 'x' } }))).toBe('ok');
    });

    it('accepts string[] values (repeated headers)', async () => {
      const wrong = sign({ payload: body, secret: 'whsec_other', timestamp: NOW });
      expect(await outcome(() => run({ ...base, headers: { 'x-svc-signature': [wrong, header] } }))).toBe('ok');
      expect(await outcome(() => run({ ...base, headers: { 'x-svc-signature': [header] } }))).toBe('ok');
    });

    it('accepts a Fetch Headers', async () => {
      const headers = new Headers({ 'X-Svc-Signature': header, 'content-type': 'application/json' });
      expect(await outcome(() => run({ ...base, headers }))).toBe('ok');
    });

    it('says missing_header when the signature header is absent, undefined or blank', async () => {
      expect(await outcome(() => run({ ...base, headers: {} }))).toBe('missing_header');
      expect(await outcome(() => run({ ...base, headers: { 'x-svc-signature': undefined } }))).toBe('missing_header');
      expect(await outcome(() => run({ ...base, headers: { 'x-svc-signature': '  ' } }))).toBe('missing_header');
      expect(await outcome(() => run({ ...base, headers: new Headers() }))).toBe('missing_header');
    });
  });

  describe('payload', () => {
    it('accepts string, Buffer, Uint8Array and ArrayBuffer', async () => {
      const buffer = Buffer.from(body);
      const u8 = new TextEncoder().encode(body);
      for (const payload of [body, buffer, u8, u8.buffer]) {
        expect(await outcome(() => run({ ...base, payload }))).toBe('ok');
      }
    });

    it('uses only the viewed bytes of a Uint8Array slice', async () => {
      const padded = Buffer.from(`xx${body}yy`);
      expect(await outcome(() => run({ ...base, payload: padded.subarray(2, padded.length - 2) }))).toBe('ok');
    });

    it('refuses parsed JSON with payload_not_raw and says what to pass', async () => {
      const parsed = JSON.parse(body) as unknown as string;
      const err = await run({ ...base, payload: parsed }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WebhookVerificationError);
      expect(err).toMatchObject({ code: 'payload_not_raw', name: 'WebhookVerificationError' });
      expect((err as Error).message).toContain('pass the raw request body (string, Buffer or Uint8Array), not parsed JSON');
    });

    it('refuses undefined and null payloads', async () => {
      for (const payload of [undefined, null]) {
        expect(await outcome(() => run({ ...base, payload: payload as unknown as string }))).toBe('payload_not_raw');
      }
    });

    it('refuses re-serialised JSON that differs from the raw bytes', async () => {
      const pretty = JSON.stringify(JSON.parse(body), null, 2);
      const err = await run({ ...base, payload: pretty }).catch((e: WebhookVerificationError) => e);
      expect(err).toMatchObject({ code: 'signature_mismatch' });
      expect((err as Error).message).toContain('raw request body');
    });
  });

  describe('now and tolerance', () => {
    it('takes now as unix seconds, a Date or a function', async () => {
      for (const now of [NOW + 299, new Date((NOW + 299) * 1000), () => NOW - 299, () => new Date(NOW * 1000)]) {
        expect(await outcome(() => run({ ...base, now }))).toBe('ok');
      }
    });

    it('uses the system clock by default', async () => {
      const t = Math.floor(Date.now() / 1000);
      const fresh = sign({ payload: body, secret: SECRET, timestamp: t });
      expect(await outcome(() => verify({ payload: body, secret: SECRET, headers: { 'x-svc-signature': fresh } }))).toBe('ok');
      expect(await outcome(() => verify({ payload: body, secret: SECRET, headers: { 'x-svc-signature': header } }))).toBe(
        'timestamp_out_of_range',
      );
    });

    it('applies 300 s in both directions by default', async () => {
      expect(await outcome(() => run({ ...base, now: NOW + 301 }))).toBe('timestamp_out_of_range');
      expect(await outcome(() => run({ ...base, now: NOW - 301 }))).toBe('timestamp_out_of_range');
      expect(await outcome(() => run({ ...base, now: NOW + 300 }))).toBe('ok');
    });

    it('disables the window only when asked with Infinity', async () => {
      expect(await outcome(() => run({ ...base, now: NOW + 10 ** 9, toleranceSeconds: Infinity }))).toBe('ok');
    });

    it('explains a stale timestamp', async () => {
      const err = await run({ ...base, now: NOW + 400 }).catch((e: Error) => e);
      expect((err as Error).message).toMatch(/400 s in the past, more than the 300 s tolerance/);
    });

    it('throws TypeError for milliseconds, a bad tolerance or a missing secret', async () => {
      await expect(run({ ...base, now: Date.now() })).rejects.toThrow(/milliseconds/);
      await expect(run({ ...base, toleranceSeconds: -1 })).rejects.toThrow(TypeError);
      await expect(run({ ...base, secret: '' })).rejects.toThrow(/whsec_/);
    });
  });
});

const signatureOnly: Array<[string, (o: VerifyOptions) => Promise<void>]> = [
  ['verifySignature', async (o) => verifySignature(o)],
  ['verifySignatureAsync', (o) => verifySignatureAsync(o)],
];

describe.each(signatureOnly)('%s', (_name, run) => {
  const base = { payload: Buffer.from(body), secret: SECRET, now: NOW, headers: { 'x-svc-signature': header } };

  it('returns nothing for a genuine delivery', async () => {
    expect(await run(base)).toBeUndefined();
  });

  it('leaves the body unparsed: a signed body that is not JSON passes here and fails verify', async () => {
    const text = 'not json';
    const signed = { ...base, payload: text, headers: { 'x-svc-signature': sign({ payload: text, secret: SECRET, timestamp: NOW }) } };
    expect(await outcome(() => run(signed))).toBe('ok');
    expect(await outcome(() => verify(signed))).toBe('payload_not_raw');
  });

  it('runs every other check of verify', async () => {
    expect(await outcome(() => run({ ...base, payload: JSON.parse(body) as string }))).toBe('payload_not_raw');
    expect(await outcome(() => run({ ...base, headers: {} }))).toBe('missing_header');
    expect(await outcome(() => run({ ...base, headers: { 'x-svc-signature': 'v1=aa' } }))).toBe('malformed_header');
    expect(await outcome(() => run({ ...base, now: NOW + 301 }))).toBe('timestamp_out_of_range');
    expect(await outcome(() => run({ ...base, payload: `${body} ` }))).toBe('signature_mismatch');
    await expect(run({ ...base, secret: '' })).rejects.toThrow(TypeError);
  });
});

describe(parseSignatureHeader.name, () => {
  it('collects every v1 and ignores other schemes', () => {
    expect(parseSignatureHeader('t=5, v0=zz ,v1=aa,v1=bb,junk')).toEqual({ timestamp: 5, signatures: ['aa', 'bb'] });
  });

  it('says which part is missing', () => {
    expect(() => parseSignatureHeader('v1=aa')).toThrow(/no t= entry/);
    expect(() => parseSignatureHeader('t=1')).toThrow(/no v1= entry/);
    expect(() => parseSignatureHeader('t=-1,v1=aa')).toThrow(/not unix seconds/);
  });
});

describe(sign.name, () => {
  it('matches signAsync and verifies', async () => {
    const sync = sign({ payload: body, secret: SECRET, timestamp: NOW });
    expect(await signAsync({ payload: Buffer.from(body), secret: SECRET, timestamp: new Date(NOW * 1000) })).toBe(sync);
    expect(sync).toMatch(/^t=1731000000,v1=[0-9a-f]{64}$/);
  });

  it('defaults the timestamp to now', () => {
    const t = Number(/^t=(\d+)/.exec(sign({ payload: body, secret: SECRET }))?.[1]);
    expect(Math.abs(t - Date.now() / 1000)).toBeLessThan(5);
  });
});

describe(generateTestHeaders.name, () => {
  it('produces the three headers, taking id and type from the body', async () => {
    const headers = generateTestHeaders({ payload: body, secret: SECRET, timestamp: NOW });
    expect(headers).toEqual({ 'x-svc-signature': header, 'x-svc-delivery': 'dlv_abc', 'x-svc-event': 'member.joined' });
    expect(await generateTestHeadersAsync({ payload: body, secret: SECRET, timestamp: NOW })).toEqual(headers);
  });

  it('round-trips through verify with the current time', () => {
    const headers = generateTestHeaders({ payload: body, secret: SECRET, id: 'custom', event: 'custom.event' });
    expect(headers['x-svc-delivery']).toBe('custom');
    expect(headers['x-svc-event']).toBe('custom.event');
    expect(verify({ payload: body, headers, secret: SECRET }).id).toBe('dlv_abc');
  });
});
