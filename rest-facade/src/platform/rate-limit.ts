import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { AppConfig } from '../../../subgraphs/kernel/index.js';

/** The Platform API window: fixed (not sliding), 60 seconds; `Retry-After` always says this. */
export const RATE_LIMIT_WINDOW_SECONDS = 60;

/** A per-key request counter in fixed windows. */
export interface KeyRateLimiter {
  /** Counts one request of the key; false when the key is over its limit in the current window. */
  take(keyId: string): Promise<boolean>;
  /** Releases the Redis connection, if any. */
  close(): Promise<void>;
}

async function consume(limiter: RateLimiterAbstract, keyId: string): Promise<boolean> {
  try {
    await limiter.consume(keyId);
    return true;
  } catch (rejection) {
    if (rejection instanceof RateLimiterRes) return false;
    throw rejection;
  }
}

/**
 * The Platform API's limiter: per key (not per IP), `perMinute` requests per fixed 60-second window.
 * In memory per process by default; with `redisUrl` one counter shared by every process, falling back to the
 * in-memory counter while Redis is unreachable (the spec's limit is best effort).
 * `enabled: false` (benchmarks only) lets everything through.
 */
export function createKeyRateLimiter(config: AppConfig['rateLimit'], log: Logger): KeyRateLimiter {
  if (!config.enabled) return { take: async () => true, close: async () => undefined };
  const options = { points: config.perMinute, duration: RATE_LIMIT_WINDOW_SECONDS };
  const memory = new RateLimiterMemory({ ...options, keyPrefix: 'platform' });
  if (!config.redisUrl) return { take: (keyId) => consume(memory, keyId), close: async () => undefined };

  const client = new Redis(config.redisUrl, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  let reported = false;
  client.on('error', (error) => {
    if (!reported) log.warn({ err: error }, 'rate limit Redis unreachable: counting per process until it is back');
    reported = true;
  });
  client.on('ready', () => {
    reported = false;
  });
  const connected = client.connect().catch(() => undefined);
  const shared = new RateLimiterRedis({
    ...options,
    storeClient: client,
    keyPrefix: 'svc:platform:rl',
    rejectIfRedisNotReady: true,
    insuranceLimiter: memory,
  });
  return {
    async take(keyId) {
      await connected;
      return consume(shared, keyId);
    },
    async close() {
      await connected;
      client.disconnect();
    },
  };
}
