import type { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';

/** What Agenda's PostgreSQL backend calls on a `pg.Pool`: `query`, `connect`/`release`, `end`. */
interface PoolLike {
  query(text: string, params?: unknown[]): Promise<{ rows: any[]; rowCount: number }>;
  connect(): Promise<{ query: PoolLike['query']; release(destroy?: boolean): void; on(): void }>;
  end(): Promise<void>;
  on(): PoolLike;
}

/**
 * A `pg.Pool`-shaped adapter over the embedded PGlite, so Agenda runs on it too. PGlite is one
 * connection in this process, so LISTEN/NOTIFY is not needed (run Agenda with `disableNotifications`):
 * the only worker is this one. `end` does nothing: the database is closed by its owner.
 */
export function pgliteAsPool(lite: PGlite): pg.Pool {
  const query: PoolLike['query'] = async (text, params) => {
    const result = await lite.query<any>(text, params);
    return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
  };
  const pool: PoolLike = {
    query,
    connect: async () => ({ query, release: () => undefined, on: () => undefined }),
    end: async () => undefined,
    on: () => pool,
  };
  return pool as unknown as pg.Pool;
}
