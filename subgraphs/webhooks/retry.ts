import type { AttemptResult } from './attempt.js';
import type * as repo from './webhooks.repository.js';

/** Waits after failures 1 to 5 (spec: 1 m, 5 m, 30 m, 2 h, 6 h); the sixth failure is final. */
export const RETRY_DELAYS_MS = [60_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 6 * 3_600_000] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** The stored state after an attempt: success; or pending with the next backoff; or failed after the sixth failure. */
export function afterAttempt(previousAttempts: number, result: AttemptResult, now: Date): repo.AttemptRecord {
  const attempts = previousAttempts + 1;
  const base = { attempts, responseStatus: result.status, responseTimeMs: result.timeMs };
  if (result.ok) return { ...base, status: 'success', lastError: null, nextAttemptAt: null, deliveredAt: now };
  if (attempts >= MAX_ATTEMPTS) return { ...base, status: 'failed', lastError: result.error, nextAttemptAt: null, deliveredAt: null };
  const delay = RETRY_DELAYS_MS[attempts - 1];
  return { ...base, status: 'pending', lastError: result.error, nextAttemptAt: new Date(now.getTime() + delay), deliveredAt: null };
}
