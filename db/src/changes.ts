import type pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';

/**
 * The PostgreSQL channel on which triggers (migrations 0024 and 0028) announce changes to rows that requests read on
 * every call and that are remembered across requests: `u:<user id>` (a user), `c:<tribe id>` (a tribe), `m:<user id>`
 * (a user's memberships), `h:<challenge id>` (a challenge), `r:<family id>` (a refresh-token family), `*` (forget
 * everything: a truncate, or a statement changing many rows).
 */
export const CHANGES_CHANNEL = 'svc_changes';

/** What a database hears on `CHANGES_CHANNEL`. */
export interface ChangeFeed {
  /**
   * True while a connection of this process listens. Only then is every change heard: a cache must neither answer
   * nor remember while it is false.
   */
  readonly listening: boolean;
  /** Calls `handler` with every announcement, and with `*` when the last listening connection closes. */
  subscribe(handler: (payload: string) => void): void;
}

class Feed implements ChangeFeed {
  private handlers: Array<(payload: string) => void> = [];
  listeners = 0;

  get listening(): boolean {
    return this.listeners > 0;
  }

  subscribe(handler: (payload: string) => void): void {
    this.handlers.push(handler);
  }

  announce(payload: string): void {
    for (const handler of this.handlers) handler(payload);
  }
}

/**
 * Every connection of the pool listens (`listenOn`, the pool's `onConnect` hook: before the connection runs anything
 * else), so that a change written through this process is heard on the connection that wrote it before its statement
 * (or its commit) returns: PostgreSQL delivers a session its own notifications before it reports the command
 * complete. A change written by another process is heard as soon as PostgreSQL delivers it to a connection of this
 * one between two transactions (at once to an idle one). When the last listening connection closes (the pool's idle
 * timeout, a database restart), announcements of the gap would be lost: the feed says `*` and is not listening until
 * a connection listens again.
 */
export class PoolChangeFeed extends Feed {
  async listenOn(client: pg.ClientBase): Promise<void> {
    client.on('notification', (message) => {
      if (message.channel === CHANGES_CHANNEL && message.payload) this.announce(message.payload);
    });
    try {
      await client.query(`listen ${CHANGES_CHANNEL}`);
    } catch {
      return; // the connection failed; the statement that wanted it reports that
    }
    this.listeners += 1;
    client.once('end', () => {
      this.listeners -= 1;
      if (this.listeners === 0) this.announce('*');
    });
  }
}

/** PGlite is one connection in this process: its `listen` hears every change, its own included, as it commits. */
export async function pgliteChangeFeed(pglite: PGlite): Promise<ChangeFeed> {
  const feed = new Feed();
  await pglite.listen(CHANGES_CHANNEL, (payload) => feed.announce(payload));
  feed.listeners = 1;
  return feed;
}

/** Keyed by a database's root drizzle handle: a transaction handle is never a key. */
const feeds = new WeakMap<object, ChangeFeed>();

/** Makes `db` (a database's root handle, never a transaction) read through `remembered` caches, kept by `feed`. */
export function attachChangeFeed(db: object, feed: ChangeFeed): void {
  feeds.set(db, feed);
}

/**
 * Values read on (almost) every request and remembered across requests, each forgotten when a trigger announces a
 * change to it. Entries are grouped by what an announcement names (`<prefix>:<group>`: a user, a tribe), and
 * within a group by `key` (a user's role per tribe). Reads through a transaction, or while the feed is not
 * listening, go to the database and remember nothing: a transaction sees its own writes, and a cache that could
 * have missed an announcement must not answer.
 */
export class Remembered<V> {
  private groups = new Map<string, Map<string, V>>();
  private size = 0;
  /** Bumped by every announcement this cache hears: a read that started before one must not remember its rows. */
  private generation = 0;

  constructor(
    private readonly feed: ChangeFeed,
    prefix: string,
    private readonly max: number,
  ) {
    feed.subscribe((payload) => {
      if (payload === '*') {
        this.clear();
      } else if (payload.startsWith(`${prefix}:`)) {
        this.generation += 1;
        const group = this.groups.get(payload.slice(prefix.length + 1));
        if (group) {
          this.size -= group.size;
          this.groups.delete(payload.slice(prefix.length + 1));
        }
      }
    });
  }

  private clear(): void {
    this.generation += 1;
    this.groups.clear();
    this.size = 0;
  }

  /**
   * The values of `keys` in `group`: those remembered, and the others from `load` (given the missing keys, it
   * returns a value for each, in order), remembered unless a change was announced while it ran.
   */
  read(group: string, keys: readonly string[], load: (missing: string[]) => Promise<V[]>): Promise<V[]> {
    return this.through(
      keys.map((key) => [group, key]),
      (missing) => load(missing.map(([, key]) => key)),
    );
  }

  /** `read` for values that are a whole group each (a tribe by id): one `load` for every group not remembered. */
  readGroups(groups: readonly string[], load: (missing: string[]) => Promise<V[]>): Promise<V[]> {
    return this.through(
      groups.map((group) => [group, '']),
      (missing) => load(missing.map(([group]) => group)),
    );
  }

  private async through(wanted: Array<[string, string]>, load: (missing: Array<[string, string]>) => Promise<V[]>): Promise<V[]> {
    if (!this.feed.listening) return load(wanted);
    const values = new Array<V>(wanted.length);
    const missing: number[] = []; // indexes into `wanted`
    for (let i = 0; i < wanted.length; i += 1) {
      const [group, key] = wanted[i];
      const entries = this.groups.get(group);
      if (entries?.has(key)) values[i] = entries.get(key)!;
      else missing.push(i);
    }
    if (missing.length > 0) {
      const generation = this.generation;
      const loaded = await load(missing.map((i) => wanted[i]));
      const remember = generation === this.generation && this.feed.listening;
      if (remember && this.size + missing.length > this.max) this.clear();
      missing.forEach((i, j) => {
        values[i] = loaded[j];
        if (!remember) return;
        const [group, key] = wanted[i];
        let entries = this.groups.get(group);
        if (!entries) this.groups.set(group, (entries = new Map()));
        if (!entries.has(key)) this.size += 1;
        entries.set(key, loaded[j]);
      });
    }
    return values;
  }
}

const deepFreeze = (value: unknown): void => {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
};

/**
 * Freezes what a remembered row holds (arrays, JSON objects), which every request that reads the row shares; the
 * row itself stays unfrozen for the caller to copy (`{ ...row }`: GraphQL execution adds fields to the objects it
 * resolves). Returns the row.
 */
export function freezeNested<T extends object>(row: T): T {
  for (const value of Object.values(row)) deepFreeze(value);
  return row;
}

/**
 * A `Remembered` cache per database for one kind of row: `cache(db)` is the database's cache, or undefined for a
 * transaction handle or a database without a change feed (read from the database then).
 */
export function rememberedPerDatabase<V>(prefix: string, max = 50_000): (db: object) => Remembered<V> | undefined {
  const caches = new WeakMap<ChangeFeed, Remembered<V>>();
  return (db) => {
    const feed = feeds.get(db);
    if (!feed) return undefined;
    let cache = caches.get(feed);
    if (!cache) caches.set(feed, (cache = new Remembered<V>(feed, prefix, max)));
    return cache;
  };
}

/**
 * Rows by id (`load`: one statement for the ids given, rows in any order, missing ones left out), remembered across
 * requests per database until a trigger announces `<prefix>:<id>`. Each caller gets its own copy of each row (what
 * the row holds is shared, frozen); duplicates and unknown ids are answered as `load` answers them: once, and not.
 *
 * With `typename` (rows that GraphQL resolves as entities of that type), a remembered row is frozen whole with its
 * `__typename` already defined as @apollo/subgraph's `_entities` defines it (own, not enumerable, not writable) and
 * is shared by every caller, not copied: copying a row and defining its `__typename` on every request cost a
 * microsecond per row.
 */
export function rowsByIdRemembered<D extends object, R extends { id: string }>(
  prefix: string,
  load: (db: D, ids: string[]) => Promise<R[]>,
  options: { typename?: string } = {},
): (db: D, ids: readonly string[]) => Promise<R[]> {
  const cache = rememberedPerDatabase<R | null>(prefix);
  const { typename } = options;
  const keep = typename
    ? (row: R) => Object.freeze(Object.defineProperty(freezeNested(row), '__typename', { value: typename }))
    : freezeNested;
  return async (db, ids) => {
    const remembered = cache(db);
    if (!remembered) return load(db, [...ids]);
    const found = await remembered.readGroups([...new Set(ids)], async (missing) => {
      const byId = new Map((await load(db, missing)).map((row) => [row.id, keep(row)]));
      return missing.map((id) => byId.get(id) ?? null);
    });
    const rows: R[] = [];
    for (const row of found) if (row) rows.push(typename ? row : { ...row });
    return rows;
  };
}
