import type { QueryPlan } from '@apollo/query-planner';
import type { DocumentNode, Token } from 'graphql';

const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * What the process keeps per distinct document a client sent, in estimated bytes (see the estimators below): each
 * cache keeps entries seen at least twice within `bytes`, and entries seen once within `oneOffBytes`, so a flood of
 * documents sent once each (anonymous traffic varying an alias or a literal) only ever churns the small one-off
 * parts, about 6.5 MiB in all, and evicts nothing that regular clients send again and again. A document sent twice
 * and more is bounded by the sum of `bytes`, about 72 MiB. The README's "Abuse limits" quotes these numbers.
 */
export const CACHE_LIMITS = {
  /** Parsed and validated client documents (Apollo Server's document store), with the route each one learnt. */
  documents: { bytes: 24 * MiB, oneOffBytes: 2 * MiB },
  /** The gateway's query plans, by document and operation name. */
  plans: { bytes: 12 * MiB, oneOffBytes: 1 * MiB },
  /** Parsed and validated fetch documents of the in-process subgraphs, together (what the query plans send them). */
  fetchDocuments: { bytes: 8 * MiB, oneOffBytes: 1 * MiB },
  /** Fetch documents on the fast paths of the in-process subgraphs, together, compiled with graphql-jit once they come back. */
  fastRuns: { bytes: 16 * MiB, oneOffBytes: 1 * MiB },
  /** `/graphql` texts with their learnt route (direct.ts), which keeps their parsed document. */
  clientRoutes: { bytes: 8 * MiB, oneOffBytes: 512 * KiB },
  /** Texts registered by automatic persisted queries (APQ: a hash and its query). */
  persistedQueries: { bytes: 4 * MiB, oneOffBytes: 1 * MiB },
} as const;

/** Options of a `BoundedCache`: its two byte budgets and how an entry's bytes are estimated. */
export interface BoundedCacheOptions<V> {
  /** Estimated bytes kept for entries read again after they were stored (the long-lived part). */
  bytes: number;
  /** Estimated bytes kept for entries stored and not read again yet (documents seen once). */
  oneOffBytes: number;
  /** An entry's estimated bytes in the heap, key included. */
  sizeOf(value: V, key: string): number;
}

interface Entry<V> {
  value: V;
  bytes: number;
}

/** One least-recently-used part of a cache, bounded in estimated bytes (a Map keeps insertion order). */
class Segment<V> {
  readonly entries = new Map<string, Entry<V>>();
  bytes = 0;

  constructor(readonly maxBytes: number) {}

  take(key: string): Entry<V> | undefined {
    const entry = this.entries.get(key);
    if (entry) {
      this.entries.delete(key);
      this.bytes -= entry.bytes;
    }
    return entry;
  }

  put(key: string, entry: Entry<V>): void {
    this.take(key);
    if (entry.bytes > this.maxBytes) return; // never kept: the caller recomputes it each time
    this.entries.set(key, entry);
    this.bytes += entry.bytes;
    for (const [oldest, { bytes }] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= bytes;
    }
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}

/**
 * A cache bounded in estimated bytes that keeps an entry for good only once it is read again: a stored entry waits
 * in a small one-off part, the first `get` that finds it moves it to the main part, and each part forgets its least
 * recently used entries beyond its budget. So what is computed for a document sent once (its parse, its plan) is
 * dropped soon, and never pushes out what regular clients send again and again (a segmented LRU).
 */
export class BoundedCache<V> {
  private readonly main: Segment<V>;
  private readonly oneOff: Segment<V>;

  constructor(private readonly options: BoundedCacheOptions<V>) {
    this.main = new Segment(options.bytes);
    this.oneOff = new Segment(options.oneOffBytes);
  }

  /** The value, marked as used: an entry seen once is kept for good from now on. */
  get(key: string): V | undefined {
    const kept = this.main.take(key);
    if (kept) {
      this.main.put(key, kept);
      return kept.value;
    }
    const once = this.oneOff.take(key);
    if (!once) return undefined;
    this.main.put(key, once);
    return once.value;
  }

  /** The value, without marking it as used. */
  peek(key: string): V | undefined {
    return (this.main.entries.get(key) ?? this.oneOff.entries.get(key))?.value;
  }

  has(key: string): boolean {
    return this.main.entries.has(key) || this.oneOff.entries.has(key);
  }

  /** Stores a value: where the key already is, else with the entries seen once. */
  set(key: string, value: V): void {
    const entry = { value, bytes: this.options.sizeOf(value, key) };
    if (this.main.entries.has(key)) this.main.put(key, entry);
    else this.oneOff.put(key, entry);
  }

  delete(key: string): boolean {
    return Boolean(this.main.take(key) ?? this.oneOff.take(key));
  }

  clear(): void {
    this.main.clear();
    this.oneOff.clear();
  }

  /** Entries and estimated bytes of each part (for tests and benchmarks). */
  get stats() {
    return {
      kept: { entries: this.main.entries.size, bytes: this.main.bytes },
      oneOff: { entries: this.oneOff.entries.size, bytes: this.oneOff.bytes },
    };
  }
}

/**
 * The cache as Apollo's `KeyValueCache` (Apollo Server's `documentStore` and `persistedQueries.cache`, the gateway's
 * `queryPlannerConfig.cache`): the same entries behind promises. Apollo's `ttl` option is not used by these callers.
 */
export function asKeyValueCache<V>(cache: BoundedCache<V>) {
  return {
    get: async (key: string) => cache.get(key),
    set: async (key: string, value: V) => cache.set(key, value),
    delete: async (key: string) => cache.delete(key),
    clear: () => cache.clear(),
  };
}

// ---- estimates of what an entry keeps in the heap --------------------------------------------------------------
// Measured with graphql 16 on Node 20 (heap used after a full GC, per entry, over thousands of documents): a parsed
// document with its locations takes 310 to 410 bytes per lexical token (its token list, AST nodes and their
// locations) plus its text; a query plan 7 to 15 times its JSON; graphql-jit's compiled query about twice its
// document. Each estimate errs above.

/** Bytes per lexical token of a parsed document with locations, and of the route direct.ts learns for it. */
const BYTES_PER_TOKEN = 400;
const ROUTE_BYTES_PER_TOKEN = 200;

/** Lexical tokens of a parsed document (graphql-js keeps them as a linked list in its locations). */
function tokenCount(document: DocumentNode): number {
  let count = 0;
  for (let token: Token | null | undefined = document.loc?.startToken; token; token = token.next) count += 1;
  return count;
}

/** A parsed document's estimated heap bytes: its tokens, AST and text (without locations: 100 bytes a character). */
export function documentBytes(document: DocumentNode, withRoute = false): number {
  if (!document.loc) return 100 * JSON.stringify(document).length;
  return tokenCount(document) * (BYTES_PER_TOKEN + (withRoute ? ROUTE_BYTES_PER_TOKEN : 0)) + 2 * document.loc.source.body.length;
}

/** A query plan's estimated heap bytes. */
export const planBytes = (plan: QueryPlan): number => 1024 + 16 * JSON.stringify(plan).length;

/** A string's heap bytes (two bytes a character at most) and its entry. */
export const textBytes = (text: string): number => 64 + 2 * text.length;
