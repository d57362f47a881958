import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CostBudgetConfig } from '../../subgraphs/kernel/config.js';

/** A bucket's state as an operation was charged (or refused): Shopify's `throttleStatus`. */
export interface ThrottleStatus {
  maximumAvailable: number;
  /** Points left after this charge (whole points, rounded down). */
  currentlyAvailable: number;
  /** Points restored every second. */
  restoreRate: number;
}

/** What a charge did: `allowed` false took nothing (the bucket holds fewer than `cost` points). */
export interface BucketCharge {
  allowed: boolean;
  status: ThrottleStatus;
  /** When refused: the seconds until the bucket holds `cost` points again (at least 1). */
  retryAfterSeconds: number;
}

/** Token buckets refilled continuously, keyed by name, in one store. */
export interface CostBuckets {
  /** Takes `cost` points from the bucket `key` of `budget` at `nowMs`, or nothing when it holds fewer. */
  charge(key: string, cost: number, budget: CostBudgetConfig, nowMs: number): Promise<BucketCharge>;
  close(): Promise<void>;
}

/**
 * The arithmetic of one bucket, as a GCRA: a bucket is stored as the time it will be full again (`fullAt`, ms), so
 * one number per key is the whole state and a full bucket needs no row at all. Points in use at `now` are
 * `(fullAt - now) * restoreRate / 1000`.
 */
function take(fullAt: number, cost: number, budget: CostBudgetConfig, now: number): { next: number | null; available: number } {
  // An empty bucket is full again `maximumAvailable / restoreRate` seconds from now, never later: a `fullAt` beyond
  // that means the clock went back (a test's clock, an NTP step). The bucket then starts over full rather than owing
  // points for as long as the clock was set back.
  const latest = now + (budget.maximumAvailable * 1000) / budget.restoreRate;
  const from = fullAt > latest ? now : Math.max(fullAt, now);
  const available = budget.maximumAvailable - ((from - now) * budget.restoreRate) / 1000;
  if (cost > available) return { next: null, available };
  return { next: from + (cost * 1000) / budget.restoreRate, available: available - cost };
}

const outcome = (allowed: boolean, available: number, cost: number, budget: CostBudgetConfig): BucketCharge => ({
  allowed,
  status: { maximumAvailable: budget.maximumAvailable, currentlyAvailable: Math.max(0, Math.floor(available)), restoreRate: budget.restoreRate },
  retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((cost - available) / budget.restoreRate)),
});

/**
 * Keys a process keeps at most in memory (about 10 MB); past it, the bucket charged least recently is forgotten (it is
 * usually full again by then: then forgetting it changes nothing).
 */
export const MEMORY_BUCKETS = 100_000;

/** Buckets in this process's memory (bounded by `MEMORY_BUCKETS`). */
export function memoryBuckets(): CostBuckets {
  const fullAt = new Map<string, number>();
  return {
    async charge(key, cost, budget, now) {
      const { next, available } = take(fullAt.get(key) ?? now, cost, budget, now);
      if (next !== null) {
        fullAt.delete(key); // re-inserted last: the Map's order is the order of last use
        if (fullAt.size >= MEMORY_BUCKETS) fullAt.delete(fullAt.keys().next().value!);
        fullAt.set(key, next);
      }
      return outcome(next !== null, available, cost, budget);
    },
    close: async () => undefined,
  };
}

/**
 * `take` in Redis, atomically: KEYS[1] holds `fullAt`; ARGV now, cost, maximumAvailable, restoreRate. A key expires a
 * minute after its bucket is full again (a full bucket needs no key; the minute covers clocks a little apart).
 */
const TAKE_SCRIPT = `
local now = tonumber(ARGV[1])
local cost = tonumber(ARGV[2])
local max = tonumber(ARGV[3])
local rate = tonumber(ARGV[4])
local from = tonumber(redis.call('GET', KEYS[1]) or ARGV[1])
if from < now then from = now end
if from > now + max * 1000 / rate then from = now end
local available = max - (from - now) * rate / 1000
if cost > available then return {0, tostring(available)} end
local nextAt = from + cost * 1000 / rate
redis.call('SET', KEYS[1], tostring(nextAt), 'PX', math.ceil(nextAt - now) + 60000)
return {1, tostring(available - cost)}
`;

type RedisWithTake = Redis & { costTake(key: string, now: number, cost: number, max: number, rate: number): Promise<[number, string]> };

/**
 * Buckets in Redis (`RATE_LIMIT_REDIS_URL`, the Platform API limiter's store), shared by every process, each key
 * expiring when its bucket is full again. While Redis is unreachable, each process counts in its own memory (one
 * warning), as the Platform API limiter does. Processes charge at their own clock's time: keep them in sync (NTP).
 */
export function redisBuckets(url: string, log: Logger): CostBuckets {
  const insurance = memoryBuckets();
  const client = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 }) as RedisWithTake;
  client.defineCommand('costTake', { numberOfKeys: 1, lua: TAKE_SCRIPT });
  let reported = false;
  client.on('error', (error) => {
    if (!reported) log.warn({ err: error }, 'GraphQL cost limit: Redis unreachable, counting per process until it is back');
    reported = true;
  });
  client.on('ready', () => {
    reported = false;
  });
  const connected = client.connect().catch(() => undefined);
  return {
    async charge(key, cost, budget, now) {
      await connected;
      try {
        const [allowed, available] = await client.costTake(`svc:graphql:cost:${key}`, now, cost, budget.maximumAvailable, budget.restoreRate);
        return outcome(allowed === 1, Number(available), cost, budget);
      } catch {
        return insurance.charge(key, cost, budget, now);
      }
    },
    async close() {
      await connected;
      client.disconnect();
    },
  };
}
