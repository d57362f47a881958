// Passwords are stored as argon2id hashes of the configured cost (`PASSWORD_HASH_MEMORY_KIB`,
// `PASSWORD_HASH_ITERATIONS`: by default OWASP's minimum, which production does not go below). A stored hash carries
// its own parameters, so changing them re-hashes nothing: older hashes still verify.
import { hash, verify, type Algorithm } from '@node-rs/argon2';
import type { PasswordHashing } from '../kernel/index.js';

/** Argon2id (`Algorithm.Argon2id` is a const enum, which isolated modules cannot read), one lane. */
const options = (cost: PasswordHashing) => ({ algorithm: 2 as Algorithm, memoryCost: cost.memoryKib, timeCost: cost.iterations, parallelism: 1 });

export function hashPassword(cost: PasswordHashing, password: string): Promise<string> {
  return hash(password, options(cost));
}

/** One hash per cost, verified against when the account is unknown or has no password. */
const dummies = new Map<string, Promise<string>>();

/**
 * Whether `password` matches `stored`. Without a stored hash (an unknown email, an account without a password) it
 * verifies against a dummy hash of the same cost, so that the answer takes the same time either way.
 */
export async function checkPasswordHash(cost: PasswordHashing, stored: string | null | undefined, password: string): Promise<boolean> {
  const key = `${cost.memoryKib}:${cost.iterations}`;
  if (!dummies.has(key)) dummies.set(key, hashPassword(cost, 'not-a-real-password-0000'));
  // Awaited either way, so that the first check of a process waits for the dummy whether or not the account exists.
  const dummy = await dummies.get(key)!;
  const ok = await verify(stored ?? dummy, password).catch(() => false);
  return ok && Boolean(stored);
}
