import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { verify } from '../verifier/src/index.js';
import { generateSecret, signatureHeader } from '../subgraphs/webhooks/index.js';

interface Vector {
  name: string;
  secret: string;
  timestamp: number;
  payload: string;
  header: string | null;
  now: number;
  expect: string;
}

/** The known-answer vectors shared with the verifier package. */
const vectors: Vector[] = JSON.parse(readFileSync(new URL('../verifier/test/vectors.json', import.meta.url), 'utf8'));
const v1sOf = (header: string | null) => (header ?? '').split(',').map((p) => p.trim()).filter((p) => p.startsWith('v1=')).map((p) => p.slice(3));
const ourV1 = (v: Vector) => signatureHeader(v.secret, v.payload, v.timestamp).split(',v1=')[1];

describe('webhook signer', () => {
  describe('signatureHeader', () => {
    it('gives the known answer of ARCHITECTURE.md', () => {
      expect(signatureHeader('whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8', '{"id":"evt_1","type":"ping"}', 1700000000)).toBe(
        't=1700000000,v1=774b41eb8b7b7e0f177e807aef097854fbdca8662ca80d877a6ee6f1556b5ba7',
      );
    });

    const canonical = vectors.filter((v) => v.expect === 'ok' && /^t=\d+,v1=[0-9a-f]{64}$/.test(v.header ?? ''));
    it.each(canonical.map((v) => [v.name, v] as const))('reproduces the header of vector %s byte for byte', (_name, v) => {
      expect(signatureHeader(v.secret, v.payload, v.timestamp)).toBe(v.header);
    });

    // Stale or future t with an intact body: the signature itself is right.
    const signedRight = vectors.filter((v) => v.expect === 'ok' || (v.expect === 'timestamp_out_of_range' && !v.name.includes('tampered')));
    it.each(signedRight.map((v) => [v.name, v] as const))('produces one of the v1 values of vector %s', (_name, v) => {
      expect(v1sOf(v.header)).toContain(ourV1(v));
    });

    const mismatched = vectors.filter((v) => v.expect === 'signature_mismatch');
    it.each(mismatched.map((v) => [v.name, v] as const))('produces none of the v1 values of vector %s', (_name, v) => {
      expect(mismatched.length).toBeGreaterThan(3);
      expect(v1sOf(v.header)).not.toContain(ourV1(v));
    });

    it('signs the raw bytes, so the verifier package accepts what it produces (Buffer or string)', () => {
      const secret = generateSecret();
      const payload = '{"id":"d1","type":"post.created","created":1731000000,"data":{"title":"Ação 🎉"}}';
      const header = signatureHeader(secret, Buffer.from(payload, 'utf8'), 1731000000);
      expect(header).toBe(signatureHeader(secret, payload, 1731000000));
      const event = verify({ payload, headers: { 'x-svc-signature': header }, secret, now: 1731000000 });
      expect(event).toEqual(JSON.parse(payload));
    });
  });

  describe('generateSecret', () => {
    it('is whsec_ and 32 random bytes in base64url (43 characters), different each time', () => {
      const a = generateSecret();
      const b = generateSecret();
      expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(a.slice(6), 'base64url')).toHaveLength(32);
      expect(a).not.toBe(b);
    });
  });
});
