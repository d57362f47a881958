import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A random opaque token: `bytes` random bytes in base64url. */
export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url');

/** Lowercase hex SHA-256, the only form in which tokens and keys are stored. */
export const sha256 = (value: string): string => createHash('sha256').update(value).digest('hex');

/** Constant-time string equality (lengths are compared on hashes so they leak nothing). */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}
