import { hkdfSync, webcrypto } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import { z } from 'zod';
import type { ApiKeyCaller, Caller } from './context.js';

/**
 * Header of the gateway-to-subgraph hop carrying the caller as a signed assertion (a JWT, see `signCallerAssertion`).
 * The older `x-svc-caller` (plain JSON) is never read: a client that sends it through another gateway is not heard.
 */
export const CALLER_ASSERTION_HEADER = 'x-svc-caller-assertion';

/** `iss` of every assertion: the project's gateway. */
export const ASSERTION_ISSUER = 'svc-gateway';
/** `typ` of the assertion's JOSE header, so no other JWT signed with a key of the same secret can pass for one. */
const ASSERTION_TYPE = 'svc-caller+jwt';
/** Lifetime of one assertion: the gateway reuses it for `ASSERTION_REUSE_SECONDS`, then it outlives that request's calls. */
export const ASSERTION_TTL_SECONDS = 30;
/** Clock difference between the gateway's and a subgraph's machine tolerated on `iat`/`exp`. */
export const ASSERTION_CLOCK_TOLERANCE_SECONDS = 5;

/** What the gateway vouches for about one request: the same fields `RequestContext` carries. */
export interface AssertedCaller {
  caller: Caller | null;
  apiKey: ApiKeyCaller | null;
  clientAddress?: string;
}

/** Why an assertion was refused (shown in the subgraph's 401, never anything secret). */
export class AssertionRefused extends Error {
  override name = 'AssertionRefused';
}

/**
 * The HS256 key of caller assertions: HKDF-SHA256 of `INTERNAL_SECRET` (info `svc caller assertion v1`), imported
 * once. Derived rather than the secret itself, so the header value that proves the gateway is never the MAC key.
 */
export function callerAssertionKey(internalSecret: string): Promise<CryptoKey> {
  const raw = new Uint8Array(hkdfSync('sha256', internalSecret, '', 'svc caller assertion v1', 32));
  return webcrypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']) as Promise<CryptoKey>;
}

/**
 * Signs what the gateway knows of a request's caller for one subgraph (`aud`), valid `ASSERTION_TTL_SECONDS` from
 * `now`: claims `sub` (user id), `sid` (first-party session), `key` (Platform API key), `addr` (client address).
 */
export function signCallerAssertion(key: CryptoKey, audience: string, who: AssertedCaller, now: Date = new Date()): Promise<string> {
  const claims: Record<string, unknown> = {};
  if (who.caller?.sessionId) claims.sid = who.caller.sessionId;
  if (who.apiKey) claims.key = { id: who.apiKey.id, communityId: who.apiKey.communityId, scopes: who.apiKey.scopes };
  if (who.clientAddress) claims.addr = who.clientAddress;
  const issuedAt = Math.floor(now.getTime() / 1000);
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: ASSERTION_TYPE })
    .setIssuer(ASSERTION_ISSUER)
    .setAudience(audience)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + ASSERTION_TTL_SECONDS);
  if (who.caller) jwt.setSubject(who.caller.userId);
  return jwt.sign(key);
}

/** The longest lifetime (`exp - iat`) an assertion may claim. */
const MAX_LIFETIME_SECONDS = 60;

const claimsSchema = z.object({
  iat: z.number(),
  exp: z.number(),
  sub: z.string().min(1).optional(),
  sid: z.string().min(1).optional(),
  key: z.object({ id: z.string(), communityId: z.string(), scopes: z.array(z.string()) }).optional(),
  addr: z.string().min(1).optional(),
});

/**
 * Verifies an assertion for the subgraph `audience`: HS256 only, `typ`, issuer, audience, `iat` and `exp` present and
 * within `ASSERTION_CLOCK_TOLERANCE_SECONDS`, issued less than a minute ago for at most a minute. Throws `AssertionRefused` for an unsigned,
 * expired, wrongly signed, foreign-audience or malformed one. `key` may be several keys (the keys of `INTERNAL_SECRET`
 * and `INTERNAL_SECRET_PREVIOUS` during a rotation): a signature by any of them is accepted.
 */
export async function verifyCallerAssertion(key: CryptoKey | readonly CryptoKey[], audience: string, token: string, now: Date = new Date()): Promise<AssertedCaller> {
  let payload: unknown;
  let refusal: unknown;
  for (const one of Array.isArray(key) ? key : [key as CryptoKey]) {
    try {
      ({ payload } = await jwtVerify(token, one, {
        algorithms: ['HS256'],
        typ: ASSERTION_TYPE,
        issuer: ASSERTION_ISSUER,
        audience,
        requiredClaims: ['iat', 'exp'],
        maxTokenAge: 60,
        clockTolerance: ASSERTION_CLOCK_TOLERANCE_SECONDS,
        currentDate: now,
      }));
      refusal = undefined;
      break;
    } catch (error) {
      refusal ??= error; // the current key's reason is the one reported
    }
  }
  if (refusal !== undefined) {
    throw new AssertionRefused(`The caller assertion was refused (${(refusal as { code?: string }).code ?? 'malformed'}).`);
  }
  const claims = claimsSchema.safeParse(payload);
  if (!claims.success || claims.data.exp - claims.data.iat > MAX_LIFETIME_SECONDS) throw new AssertionRefused('The caller assertion was refused (ERR_CLAIMS_MALFORMED).');
  const { sub, sid, key: apiKey, addr } = claims.data;
  return {
    caller: sub ? { userId: sub, ...(sid ? { sessionId: sid } : {}) } : null,
    apiKey: apiKey ?? null,
    ...(addr ? { clientAddress: addr } : {}),
  };
}

/** Assertions a subgraph process remembers as verified (by their exact text), at most. */
export const VERIFIED_ASSERTIONS_KEPT = 10_000;

/**
 * `verifyCallerAssertion` for one subgraph (`audience`) that remembers what it verified: the same text again (the
 * gateway reuses an assertion for its caller's next requests, see `reusedAssertion`) is answered without a second
 * signature check until its `exp` (plus the clock tolerance), after which it is refused as expired. At most
 * `VERIFIED_ASSERTIONS_KEPT` are remembered, the oldest forgotten first.
 */
export function assertionVerifier(key: CryptoKey | readonly CryptoKey[], audience: string): (token: string, now?: Date) => Promise<AssertedCaller> {
  const verified = new Map<string, { who: AssertedCaller; exp: number }>();
  return async (token, now = new Date()) => {
    const known = verified.get(token);
    if (known) {
      if (now.getTime() / 1000 <= known.exp + ASSERTION_CLOCK_TOLERANCE_SECONDS) return known.who;
      verified.delete(token);
      throw new AssertionRefused('The caller assertion was refused (ERR_JWT_EXPIRED).');
    }
    const who = await verifyCallerAssertion(key, audience, token, now);
    const exp = (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { exp: number }).exp;
    verified.set(token, { who, exp });
    if (verified.size > VERIFIED_ASSERTIONS_KEPT) verified.delete(verified.keys().next().value!);
    return who;
  };
}

/** How long the gateway reuses an assertion it signed for the same caller and subgraph (of its `ASSERTION_TTL_SECONDS`). */
export const ASSERTION_REUSE_SECONDS = 10;
/** Assertions the gateway keeps for reuse per subgraph, at most. */
export const SIGNED_ASSERTIONS_KEPT = 10_000;

/**
 * `signCallerAssertion` for one subgraph that reuses what it signed: the same caller (user, session, API key, client
 * address) within `ASSERTION_REUSE_SECONDS` gets the same assertion, which then has at least 20 s of its 30 left: one
 * HMAC per caller and subgraph every 10 s instead of one per request. At most `SIGNED_ASSERTIONS_KEPT` are kept.
 */
export function reusedAssertion(key: Promise<CryptoKey>, audience: string): (who: AssertedCaller, now?: Date) => Promise<string> {
  const signed = new Map<string, { token: Promise<string>; at: number }>();
  return (who, now = new Date()) => {
    const id = JSON.stringify([who.caller?.userId ?? null, who.caller?.sessionId ?? null, who.apiKey ?? null, who.clientAddress ?? null]);
    const kept = signed.get(id);
    if (kept && now.getTime() - kept.at < ASSERTION_REUSE_SECONDS * 1000) return kept.token;
    const token = key.then((k) => signCallerAssertion(k, audience, who, now));
    token.catch(() => signed.delete(id));
    signed.delete(id); // re-inserted last: the map's order is the order of signing, the oldest forgotten first
    signed.set(id, { token, at: now.getTime() });
    if (signed.size > SIGNED_ASSERTIONS_KEPT) signed.delete(signed.keys().next().value!);
    return token;
  };
}
