/**
 * Remembers delivery ids already processed. Deliveries are at-least-once: the same `id` can
 * arrive again, and deduplicating it is the receiver's job.
 */
export interface SeenStore {
  /** Atomically records `id` for `ttlSeconds`; true if it was not already recorded (process it). */
  checkAndAdd(id: string, ttlSeconds: number): boolean | Promise<boolean>;
  /** Forgets `id`, so a retry is processed after this attempt failed. Optional. */
  delete?(id: string): void | Promise<void>;
}

/** 24 hours: longer than the service's whole retry schedule (about 8 h 40 min). */
export const DEFAULT_DEDUPE_TTL_SECONDS = 24 * 60 * 60;

export interface MemorySeenStoreOptions {
  /** How long an id is remembered. Default 24 h. */
  ttlSeconds?: number;
  /** Upper bound on remembered ids; the oldest are dropped first. Default 100 000. */
  maxEntries?: number;
  /** Clock in milliseconds, like `Date.now`; for tests. */
  clock?: () => number;
}

/**
 * An in-process {@link SeenStore} with expiry and a size bound. Fine for one process; with
 * several, use a shared store (for example Redis `SET key 1 NX EX ttl`).
 */
export class MemorySeenStore implements SeenStore {
  readonly #expiresAt = new Map<string, number>();
  readonly #ttlSeconds: number;
  readonly #maxEntries: number;
  readonly #clock: () => number;

  constructor(options: MemorySeenStoreOptions = {}) {
    this.#ttlSeconds = options.ttlSeconds ?? DEFAULT_DEDUPE_TTL_SECONDS;
    this.#maxEntries = options.maxEntries ?? 100_000;
    this.#clock = options.clock ?? Date.now;
    if (!(this.#ttlSeconds > 0)) throw new TypeError('ttlSeconds must be a positive number');
    if (!(this.#maxEntries >= 1)) throw new TypeError('maxEntries must be at least 1');
  }

  /** True if `id` was recorded and has not expired. */
  has(id: string): boolean {
    const expiresAt = this.#expiresAt.get(id);
    if (expiresAt === undefined) return false;
    if (expiresAt > this.#clock()) return true;
    this.#expiresAt.delete(id);
    return false;
  }

  /** Records `id` for `ttlSeconds` (default: the store's TTL). */
  add(id: string, ttlSeconds: number = this.#ttlSeconds): void {
    this.#expiresAt.delete(id); // re-insert at the end to keep insertion order close to expiry order
    this.#expiresAt.set(id, this.#clock() + ttlSeconds * 1000);
    this.#prune();
  }

  /** Records `id`; true if it was new. */
  checkAndAdd(id: string, ttlSeconds?: number): boolean {
    if (this.has(id)) return false;
    this.add(id, ttlSeconds);
    return true;
  }

  delete(id: string): void {
    this.#expiresAt.delete(id);
  }

  /** Number of ids held, expired ones not yet pruned included. */
  get size(): number {
    return this.#expiresAt.size;
  }

  #prune(): void {
    const now = this.#clock();
    for (const [id, expiresAt] of this.#expiresAt) {
      if (expiresAt > now && this.#expiresAt.size <= this.#maxEntries) break;
      this.#expiresAt.delete(id);
    }
  }
}
