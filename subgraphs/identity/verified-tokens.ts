/**
 * A bounded memo of access tokens whose signature and claims already verified, so that a client sending the same
 * token on every request pays the HMAC check once (issue 15: it was about 5% of a resource-API request).
 *
 * Only what does not change with time is remembered: the token verified (signature, algorithm, issuer) to this
 * subject and refresh-token family. What does change is checked again on every use, exactly as `jwtVerify` checks it: `nbf` against now
 * (`nbf > now` refuses) and `exp` against now (`exp <= now` refuses), with now in whole seconds of the app's clock.
 * The suspension and family lookups that follow in `accessTokenCaller` still run on every request, so a suspension or
 * a revoked family takes effect at once. Per secret: a service whose JWT secret differs never sees another's entries.
 */
export interface VerifiedToken {
  sub: string;
  /** The refresh-token family the token was issued with. */
  fam: string;
  nbf?: number;
  exp?: number;
}

const MAX_ENTRIES = 10_000;
const bySecret = new Map<string, Map<string, VerifiedToken>>();

function memo(secret: string): Map<string, VerifiedToken> {
  let tokens = bySecret.get(secret);
  if (!tokens) {
    if (bySecret.size >= 16) bySecret.clear(); // test processes start many services; a real one has one secret
    bySecret.set(secret, (tokens = new Map()));
  }
  return tokens;
}

/** The claims of a remembered token still valid at `now`; null when no longer valid, undefined when not remembered. */
export function rememberedClaims(secret: string, token: string, now: Date): VerifiedToken | null | undefined {
  const tokens = memo(secret);
  const entry = tokens.get(token);
  if (!entry) return undefined;
  const seconds = Math.floor(now.getTime() / 1000);
  if (entry.nbf !== undefined && entry.nbf > seconds) return null;
  if (entry.exp !== undefined && entry.exp <= seconds) {
    tokens.delete(token);
    return null;
  }
  return entry;
}

/** Remembers a token that verified, with its time claims. */
export function rememberToken(secret: string, token: string, verified: VerifiedToken): void {
  const tokens = memo(secret);
  if (tokens.size >= MAX_ENTRIES) tokens.clear();
  tokens.set(token, verified);
}
