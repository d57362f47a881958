import { describe, expect, it } from '@jest/globals';
import { SignJWT } from 'jose';
import {
  ASSERTION_CLOCK_TOLERANCE_SECONDS,
  ASSERTION_ISSUER,
  ASSERTION_REUSE_SECONDS,
  ASSERTION_TTL_SECONDS,
  AssertionRefused,
  assertionVerifier,
  callerAssertionKey,
  reusedAssertion,
  signCallerAssertion,
  verifyCallerAssertion,
} from './caller-assertion.js';

const SECRET = 'internal-secret-internal-secret-0123456789';
const NOW = new Date('2026-05-01T12:00:00Z');
const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

const who = {
  caller: { userId: '11111111-1111-4111-8111-111111111111', sessionId: 'session-1' },
  apiKey: { id: 'key-1', communityId: 'tribe-1', scopes: ['posts:read'] },
  clientAddress: '203.0.113.7',
};

describe('caller assertion', () => {
  describe(signCallerAssertion.name, () => {
    it('carries the caller, its session, the API key and the client address to the subgraph it names', async () => {
      const key = await callerAssertionKey(SECRET);
      const token = await signCallerAssertion(key, 'identity', who, NOW);
      const [header, payload] = token.split('.').slice(0, 2).map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()));
      expect(header).toEqual({ alg: 'HS256', typ: 'svc-caller+jwt' });
      expect(payload).toEqual({
        iss: ASSERTION_ISSUER,
        aud: 'identity',
        sub: who.caller.userId,
        sid: 'session-1',
        key: who.apiKey,
        addr: '203.0.113.7',
        iat: NOW.getTime() / 1000,
        exp: NOW.getTime() / 1000 + ASSERTION_TTL_SECONDS,
      });
      expect(await verifyCallerAssertion(key, 'identity', token, at(1))).toEqual(who);
    });

    it('vouches for an anonymous request: no subject, only the client address', async () => {
      const key = await callerAssertionKey(SECRET);
      const token = await signCallerAssertion(key, 'content', { caller: null, apiKey: null, clientAddress: '::1' }, NOW);
      expect(await verifyCallerAssertion(key, 'content', token, NOW)).toEqual({ caller: null, apiKey: null, clientAddress: '::1' });
    });
  });

  describe(verifyCallerAssertion.name, () => {
    const refuses = async (token: Promise<string> | string, options: { audience?: string; now?: Date; secret?: string } = {}) => {
      const key = await callerAssertionKey(options.secret ?? SECRET);
      const refused = verifyCallerAssertion(key, options.audience ?? 'identity', await token, options.now ?? NOW);
      await expect(refused).rejects.toBeInstanceOf(AssertionRefused);
      return refused.catch((error: Error) => error.message);
    };
    const signed = async (audience = 'identity', secret = SECRET) => signCallerAssertion(await callerAssertionKey(secret), audience, who, NOW);

    it('refuses an unsigned assertion (alg none), whatever it claims', async () => {
      const claims = { iss: ASSERTION_ISSUER, aud: 'identity', sub: who.caller.userId, iat: NOW.getTime() / 1000, exp: NOW.getTime() / 1000 + 30 };
      expect(await refuses(`${b64({ alg: 'none', typ: 'svc-caller+jwt' })}.${b64(claims)}.`)).toContain('refused');
    });

    it('refuses an expired assertion, past the clock tolerance', async () => {
      expect(await refuses(signed(), { now: at(ASSERTION_TTL_SECONDS + ASSERTION_CLOCK_TOLERANCE_SECONDS + 1) })).toContain('ERR_JWT_EXPIRED');
      // Within the tolerance it still holds (two machines' clocks differ a little).
      const key = await callerAssertionKey(SECRET);
      expect(await verifyCallerAssertion(key, 'identity', await signed(), at(ASSERTION_TTL_SECONDS + 2))).toEqual(who);
    });

    it('refuses an assertion made for another subgraph', async () => {
      expect(await refuses(signed('communities'), { audience: 'identity' })).toContain('ERR_JWT_CLAIM_VALIDATION_FAILED');
    });

    it('refuses an assertion signed with another key', async () => {
      expect(await refuses(signed('identity', `${SECRET}-other`))).toContain('ERR_JWS_SIGNATURE_VERIFICATION_FAILED');
    });

    it('refuses an assertion signed with the internal secret itself rather than the key derived from it', async () => {
      const raw = new SignJWT({ sub: who.caller.userId })
        .setProtectedHeader({ alg: 'HS256', typ: 'svc-caller+jwt' })
        .setIssuer(ASSERTION_ISSUER)
        .setAudience('identity')
        .setIssuedAt(NOW)
        .setExpirationTime(at(30))
        .sign(new TextEncoder().encode(SECRET));
      await refuses(raw);
    });

    it('refuses another kind of JWT, another issuer, a lifetime past a minute and claims of the wrong shape', async () => {
      const key = await callerAssertionKey(SECRET);
      const base = (claims: Record<string, unknown>, typ = 'svc-caller+jwt') =>
        new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ }).setAudience('identity').setIssuedAt(NOW).setExpirationTime(at(30));
      await refuses(base({ sub: 'u' }, 'JWT').setIssuer(ASSERTION_ISSUER).sign(key));
      await refuses(base({ sub: 'u' }).setIssuer('svc').sign(key));
      await refuses(base({ sub: 'u' }).setIssuer(ASSERTION_ISSUER).setIssuedAt(at(-120)).setExpirationTime(at(600)).sign(key));
      expect(await refuses(base({ sub: 'u' }).setIssuer(ASSERTION_ISSUER).setExpirationTime(at(3600)).sign(key))).toContain('ERR_CLAIMS_MALFORMED');
      expect(await refuses(base({ sub: 42 }).setIssuer(ASSERTION_ISSUER).sign(key))).toContain('ERR_CLAIMS_MALFORMED');
      expect(await refuses('not a jwt')).toContain('refused');
    });
  });

  describe(reusedAssertion.name, () => {
    it('gives the same caller the same assertion for 10 s, then a new one; another caller or subgraph its own', async () => {
      const sign = reusedAssertion(callerAssertionKey(SECRET), 'identity');
      const first = await sign(who, NOW);
      expect(await sign(who, at(ASSERTION_REUSE_SECONDS - 1))).toBe(first);
      const renewed = await sign(who, at(ASSERTION_REUSE_SECONDS));
      expect(renewed).not.toBe(first);
      // What it reuses still verifies for its whole reuse, with the rest of its lifetime to spare.
      const key = await callerAssertionKey(SECRET);
      expect(await verifyCallerAssertion(key, 'identity', first, at(ASSERTION_REUSE_SECONDS - 1 + ASSERTION_TTL_SECONDS - ASSERTION_REUSE_SECONDS))).toEqual(who);
      const other = { ...who, caller: { userId: '22222222-2222-4222-8222-222222222222', sessionId: 'session-2' } };
      expect(await sign(other, at(ASSERTION_REUSE_SECONDS + 1))).not.toBe(renewed);
      expect(await verifyCallerAssertion(key, 'identity', await sign(other, at(ASSERTION_REUSE_SECONDS + 1)), at(ASSERTION_REUSE_SECONDS + 1))).toEqual(other);
      expect(await sign({ ...who, clientAddress: '198.51.100.1' }, at(ASSERTION_REUSE_SECONDS + 1))).not.toBe(renewed);
      await expect(verifyCallerAssertion(key, 'members', renewed, at(ASSERTION_REUSE_SECONDS))).rejects.toBeInstanceOf(AssertionRefused);
    });
  });

  describe(assertionVerifier.name, () => {
    it('answers an assertion it verified from memory until its exp, then refuses it as expired; a forged one is still refused', async () => {
      const key = await callerAssertionKey(SECRET);
      const verify = assertionVerifier([key], 'identity');
      const token = await signCallerAssertion(key, 'identity', who, NOW);
      expect(await verify(token, NOW)).toEqual(who);
      expect(await verify(token, at(ASSERTION_TTL_SECONDS + ASSERTION_CLOCK_TOLERANCE_SECONDS))).toEqual(who);
      await expect(verify(token, at(ASSERTION_TTL_SECONDS + ASSERTION_CLOCK_TOLERANCE_SECONDS + 1))).rejects.toThrow('ERR_JWT_EXPIRED');
      // The same claims with another signature are checked anew, not taken from memory.
      const [header, payload] = token.split('.');
      await expect(verify(`${header}.${payload}.${'A'.repeat(43)}`, NOW)).rejects.toBeInstanceOf(AssertionRefused);
      await expect(assertionVerifier([key], 'members')(token, NOW)).rejects.toBeInstanceOf(AssertionRefused);
    });
  });
});
