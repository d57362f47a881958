import pg from 'pg';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type { PGlite } from '@electric-sql/pglite';
import type { Logger } from 'drizzle-orm/logger';

/** The typed SQL layer every repository uses; the same type over node-postgres and PGlite. */
export type Db = PgDatabase<PgQueryResultHKT, Record<string, never>>;
/** A transaction handle; accepted wherever a repository takes a `Db`. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
/** Either the database or an open transaction on it. */
export type Executor = Db | Tx;

export interface DatabaseStats {
  /** SQL statements sent since start (used by benchmarks to show constant statements per request). */
  statements: number;
}

/** An open database: the drizzle handle plus what start-up, health checks and jobs need. */
export interface Database {
  readonly kind: 'postgres' | 'pglite';
  readonly db: Db;
  readonly stats: DatabaseStats;
  /** Present when `kind` is `postgres`. */
  readonly pool?: pg.Pool;
  /** Present when `kind` is `pglite`. */
  readonly pglite?: PGlite;
  /** Runs a multi-statement SQL script on one connection (migrations). */
  exec(script: string): Promise<void>;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** `postgres://...`; when absent the embedded PGlite is used. */
  url?: string;
  /** PGlite data directory; `memory://` for an in-memory database. */
  dataDir?: string;
  poolSize?: number;
}

// bigint (count(*), sums) comes back as a number, as PGlite gives it, not node-postgres's string; the values stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

/** Opens PostgreSQL when `url` is set, embedded PGlite otherwise. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const stats: DatabaseStats = { statements: 0 };
  const logger: Logger = { logQuery: () => { stats.statements += 1; } };
  if (options.url) {
    const pool = new pg.Pool({ connectionString: options.url, max: options.poolSize ?? 10 });
    pool.on('error', () => undefined); // an idle client dying is reported by the next query
    // A checked-out client whose connection drops between two statements (inside a transaction) emits 'error' with
    // no listener, which would crash the process; its next query fails instead, and the pool discards it on release.
    pool.on('connect', (client) => client.on('error', () => undefined));
    const db = drizzlePg(pool, { logger }) as unknown as Db;
    return {
      kind: 'postgres',
      db,
      stats,
      pool,
      async exec(script) {
        await pool.query(script);
      },
      async ping() {
        await pool.query('select 1');
      },
      async close() {
        await pool.end();
      },
    };
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const dataDir = options.dataDir ?? './data';
  const pglite = await PGlite.create(dataDir === 'memory://' ? undefined : dataDir);
  const db = drizzlePglite(pglite, { logger }) as unknown as Db;
  return {
    kind: 'pglite',
    db,
    stats,
    pglite,
    async exec(script) {
      await pglite.exec(script);
    },
    async ping() {
      await pglite.query('select 1');
    },
    async close() {
      await pglite.close();
    },
  };
}
