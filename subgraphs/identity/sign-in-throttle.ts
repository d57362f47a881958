// Sign-in throttling (issue 29): the one rule every password and reset-link surface calls before it does any password
// work. Counters live in PostgreSQL (`sign_in_attempts`), so every process counts the same attempts, and run on the
// app clock, so tests move time. The numbers are `config.signIn` (README, "Limits").
import { type AppDeps, addressKey, rateLimited, sha256 } from '../kernel/index.js';
import * as repo from './sign-in-throttle.repository.js';

/** An attempt counted by `takeSignInAttempt` or `takeResetAttempt`, not refused. */
export interface CountedAttempt {
  /** The password (or reset link) proved right: this attempt stops counting as a failure (see `takeSignInAttempt`). */
  proved(): Promise<void>;
}

/** The address a counter keys on (IPv6 by its /64): kept here under its old name for this module's callers. */
export { addressKey };

/** The email as counters key on: trimmed and lower-cased, as sign-in matches it. */
const accountKey = (email: string) => email.trim().toLowerCase();

const tooMany = (retryAfterSeconds: number) =>
  rateLimited('too_many_attempts', `Too many sign-in attempts: try again in ${retryAfterSeconds} s.`, retryAfterSeconds);

/** Counts one attempt on `names` and returns each one's count and the seconds until its window ends. */
async function count(app: AppDeps, names: Record<string, string>) {
  const { windowSeconds } = app.config.signIn;
  const now = app.clock();
  const windowMs = windowSeconds * 1000;
  const keys = Object.fromEntries(Object.entries(names).map(([name, key]) => [name, sha256(`sign-in:${key}`)]));
  const rows = await repo.countAttempt(app.database.db, Object.values(keys), now, new Date(now.getTime() - windowMs));
  // A new window somewhere: the counters whose window ended are forgotten (one indexed delete, now and then).
  if (rows.some((r) => r.attempts === 1)) await repo.purgeEnded(app.database.db, new Date(now.getTime() - windowMs));
  const byKey = new Map(rows.map((r) => [r.key, r]));
  const of = (name: string) => {
    const row = byKey.get(keys[name])!;
    return { attempts: row.attempts, endsIn: Math.max(1, Math.ceil((row.windowStart.getTime() + windowMs - now.getTime()) / 1000)) };
  };
  return { keys, of };
}

/**
 * Counts a password attempt on `email` from `address` (the client's), before the password is looked at; throws
 * `too_many_attempts` (RATE_LIMITED, 429 with `Retry-After`: when the counter that refused it starts a new window) when
 * this attempt is past a limit of `config.signIn`, in a fixed window of `windowSeconds`:
 *
 * - `perAccountAddress` attempts on the account from this address (5): the attacker's address is refused, whatever the
 *   password, while the account's owner signs in from their own address;
 * - `perAddress` attempts from this address on any account (50): password spraying from one address;
 * - `perAccount` attempts on the account from every address (20) does not lock the account (that would hand anyone a
 *   way to lock anyone out): past it, each address may fail on the account only once in the window (instead of
 *   `perAccountAddress` times). A right password from an address that has not failed on it still signs in.
 *
 * An unknown email counts the same way, so the answer never tells whether the account exists. Refused attempts count
 * too (they do not move a window's end). `proved()` after the password matched forgets the account-and-address counter
 * and takes this attempt back from the other two.
 */
export async function takeSignInAttempt(app: AppDeps, email: string, address: string | undefined): Promise<CountedAttempt> {
  const limits = app.config.signIn;
  const account = accountKey(email);
  const from = addressKey(address);
  const { keys, of } = await count(app, { pair: `pair:${from}:${account}`, account: `account:${account}`, address: `address:${from}` });
  const pair = of('pair');
  const all = of('account');
  const source = of('address');
  const waits: number[] = [];
  if (pair.attempts > limits.perAccountAddress) waits.push(pair.endsIn);
  if (source.attempts > limits.perAddress) waits.push(source.endsIn);
  // Lifted when either window ends: the account's (the allowance is back) or the pair's (this address starts over).
  if (all.attempts > limits.perAccount && pair.attempts > 1) waits.push(Math.min(all.endsIn, pair.endsIn));
  if (waits.length) throw tooMany(Math.max(...waits));
  return { proved: () => repo.proveAttempt(app.database.db, [keys.pair], [keys.account, keys.address].sort()) };
}

/**
 * Counts a reset-link attempt from `address` on the per-address counter of `takeSignInAttempt` (a guessed link is a
 * guessed password), before the link is looked up; `too_many_attempts` past `perAddress`. `proved()` when the link was
 * one we sent (even expired) takes it back.
 */
export async function takeResetAttempt(app: AppDeps, address: string | undefined): Promise<CountedAttempt> {
  const { keys, of } = await count(app, { address: `address:${addressKey(address)}` });
  const source = of('address');
  if (source.attempts > app.config.signIn.perAddress) throw tooMany(source.endsIn);
  return { proved: () => repo.proveAttempt(app.database.db, [], [keys.address]) };
}
