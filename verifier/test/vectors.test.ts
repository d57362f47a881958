import { describe, it, expect } from '@jest/globals';
import { sign, verify, verifySignature } from '../src/node.js';
import { signAsync, verifyAsync, verifySignatureAsync } from '../src/web-crypto.js';
import { KAT, outcome, vectors, type Vector } from './helpers.js';

const CANONICAL_HEADER = /^t=\d+,v1=[0-9a-f]{64}$/;

function options(v: Vector) {
  return {
    payload: v.payload,
    headers: v.header === null ? {} : { 'x-svc-signature': v.header },
    secret: v.secret,
    now: v.now,
    ...(v.toleranceSeconds === undefined ? {} : { toleranceSeconds: v.toleranceSeconds }),
  };
}

describe('known-answer vectors', () => {
  it('reproduces the ARCHITECTURE.md known answer', async () => {
    const header = `t=${KAT.timestamp},v1=${KAT.v1}`;
    expect(sign({ payload: KAT.payload, secret: KAT.secret, timestamp: KAT.timestamp })).toBe(header);
    expect(await signAsync({ payload: KAT.payload, secret: KAT.secret, timestamp: KAT.timestamp })).toBe(header);
  });

  it('covers every error code and both outcomes', () => {
    const expects = new Set(vectors.map((v) => v.expect));
    expect([...expects].sort()).toEqual(
      ['malformed_header', 'missing_header', 'ok', 'payload_not_raw', 'signature_mismatch', 'timestamp_out_of_range'].sort(),
    );
    expect(new Set(vectors.map((v) => v.name)).size).toBe(vectors.length);
  });

  describe('verify', () => {
    it.each(vectors.map((v) => [v.name, v] as const))('%s', async (_name, v) => {
      expect(await outcome(() => verify(options(v)))).toBe(v.expect);
    });
  });

  describe('verifyAsync', () => {
    it.each(vectors.map((v) => [v.name, v] as const))('%s', async (_name, v) => {
      expect(await outcome(() => verifyAsync(options(v)))).toBe(v.expect);
    });
  });

  // verifySignature skips only the last check (the body is a JSON object): a vector's payload is always a
  // string, so payload_not_raw there means a correctly signed body that is not JSON, which it accepts.
  const signatureOnly = (v: Vector) => (v.expect === 'payload_not_raw' ? 'ok' : v.expect);

  describe('verifySignature', () => {
    it.each(vectors.map((v) => [v.name, v] as const))('%s', async (_name, v) => {
      expect(await outcome(() => verifySignature(options(v)))).toBe(signatureOnly(v));
    });
  });

  describe('verifySignatureAsync', () => {
    it.each(vectors.map((v) => [v.name, v] as const))('%s', async (_name, v) => {
      expect(await outcome(() => verifySignatureAsync(options(v)))).toBe(signatureOnly(v));
    });
  });

  describe('sign', () => {
    // The signer's contract, as the service's own tests use it: canonical "ok" headers are exactly sign()'s output.
    const canonical = vectors.filter((v) => v.expect === 'ok' && v.header !== null && CANONICAL_HEADER.test(v.header));
    it.each(canonical.map((v) => [v.name, v] as const))('%s', async (_name, v) => {
      const input = { payload: v.payload, secret: v.secret, timestamp: v.timestamp };
      expect(sign(input)).toBe(v.header);
      expect(await signAsync(input)).toBe(v.header);
    });
  });
});
