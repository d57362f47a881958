import pg from 'pg';
import { sql, type SQL } from 'drizzle-orm';
import { drizzle as drizzlePg, NodePgSession, NodePgTransaction } from 'drizzle-orm/node-postgres';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type { PGlite } from '@electric-sql/pglite';
import type { Logger } from 'drizzle-orm/logger';
import { attachChangeFeed, pgliteChangeFeed, PoolChangeFeed, type ChangeFeed } from './changes.js';
import { lockDataDir } from './data-dir-lock.js';

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
  /** Changes announced by the triggers of migration 0024, which keep the caches of `Remembered` rows true. */
  readonly changes: ChangeFeed;
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

/**
 * drizzle-orm 0.45's node-postgres `transaction` sends `begin` before its try/finally: when the connection drops at
 * that moment (a database restart), the client is never released and the pool has lost it for good, one per
 * transaction that met the restart, until every request waits for a connection that never comes back (and `close`
 * hangs). This `transaction` is drizzle's with `begin` inside: the client goes back to the pool (which discards a dead
 * one) whatever fails, and a failing rollback no longer hides the error that caused it.
 */
function releaseEveryTransactionClient(pool: pg.Pool, session: NodePgSession<any, any>): void {
  const { dialect, schema, options } = session as unknown as { dialect: any; schema: any; options: any };
  session.transaction = async (transaction, config) => {
    const client = await pool.connect();
    try {
      const tx = new NodePgTransaction(dialect, new NodePgSession(client, dialect, schema, options), schema);
      const mode = config ? (tx as unknown as { getTransactionConfigSQL(c: typeof config): SQL }).getTransactionConfigSQL(config) : undefined;
      await tx.execute(sql`begin${mode ? sql` ${mode}` : undefined}`);
      try {
        const result = await transaction(tx);
        await tx.execute(sql`commit`);
        return result;
      } catch (error) {
        await tx.execute(sql`rollback`).catch(() => undefined);
        throw error;
      }
    } finally {
      client.release();
    }
  };
}

/** Opens PostgreSQL when `url` is set, embedded PGlite otherwise. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const stats: DatabaseStats = { statements: 0 };
  const logger: Logger = { logQuery: () => { stats.statements += 1; } };
  if (options.url) {
    const changes = new PoolChangeFeed();
    const pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      onConnect: (client) => changes.listenOn(client),
    });
    pool.on('error', () => undefined); // an idle client dying is reported by the next query
    // A checked-out client whose connection drops between two statements (inside a transaction) emits 'error' with
    // no listener, which would crash the process; its next query fails instead, and the pool discards it on release.
    pool.on('connect', (client) => client.on('error', () => undefined));
    const db = drizzlePg(pool, { logger }) as unknown as Db;
    releaseEveryTransactionClient(pool, (db as unknown as { session: NodePgSession<any, any> }).session);
    attachChangeFeed(db, changes);
    return {
      kind: 'postgres',
      db,
      stats,
      pool,
      changes,
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
  // One process per data directory: a second one refuses here, before migrations or the worker.
  const unlock = dataDir === 'memory://' ? () => undefined : lockDataDir(dataDir);
  let pglite: PGlite;
  try {
    pglite = await PGlite.create(dataDir === 'memory://' ? undefined : dataDir);
  } catch (error) {
    unlock();
    throw error;
  }
  const db = drizzlePglite(pglite, { logger }) as unknown as Db;
  const changes = await pgliteChangeFeed(pglite);
  attachChangeFeed(db, changes);
  return {
    kind: 'pglite',
    db,
    stats,
    pglite,
    changes,
    async exec(script) {
      await pglite.exec(script);
    },
    async ping() {
      await pglite.query('select 1');
    },
    async close() {
      await pglite.close();
      unlock();
    },
  };
}
