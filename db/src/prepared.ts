import type { Executor } from './database.js';

/**
 * A statement prepared once per database handle: `build` makes the drizzle prepared query (placeholders for every
 * value, a unique statement name), and the returned function hands back the same one for the same handle. Hot paths
 * use it so a request neither rebuilds the SQL text nor makes PostgreSQL parse and plan it again on a connection
 * that has run it before. A transaction handle gets its own, dropped with it.
 */
export function preparedOnce<T>(build: (db: Executor) => T): (db: Executor) => T {
  const byHandle = new WeakMap<Executor, T>();
  return (db) => {
    let query = byHandle.get(db);
    if (!query) byHandle.set(db, (query = build(db)));
    return query;
  };
}
