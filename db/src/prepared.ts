import { Column, is } from 'drizzle-orm';
import type { Executor } from './database.js';

/**
 * A statement prepared once per database handle: `build` makes the drizzle prepared query (placeholders for every
 * value, a unique statement name), and the returned function hands back the same one for the same handle. Hot paths
 * use it so a request neither rebuilds the SQL text nor makes PostgreSQL parse and plan it again on a connection
 * that has run it before. A transaction handle gets its own, dropped with it. Rows of a selection of plain columns
 * are mapped by `flatRows` (see there).
 */
export function preparedOnce<T>(build: (db: Executor) => T): (db: Executor) => T {
  const byHandle = new WeakMap<Executor, T>();
  return (db) => {
    let query = byHandle.get(db);
    if (!query) byHandle.set(db, (query = withFlatRows(build(db))));
    return query;
  };
}

/** What drizzle's prepared queries (node-postgres and PGlite alike, drizzle-orm 0.45) keep of their selection. */
interface SelectedField {
  path: string[];
  field: unknown;
}
interface DrizzlePrepared {
  fields?: SelectedField[];
  customResultMapper?: (rows: unknown[][]) => unknown;
}

/**
 * Drizzle maps each value of each row through `mapResultRow`, which works out per value what the field is and where
 * its value goes (nested selections, nulls of outer joins): a tenth of the service's CPU on the posts list, 50 rows
 * of 19 columns. For a selection of plain columns (every field a column at the top level: `select().from(t)`, or
 * `select({ a: t.a, ... })`) that comes to one object per row, each column's value mapped by the column itself
 * (`mapFromDriverValue`, null kept null), in the selection's order: `flatRows` does exactly that, with the mapping
 * decided once per statement. Any other selection keeps drizzle's mapping. Shown equal to drizzle's for every table
 * by test/prepared-rows.test.ts.
 */
function flatRows(fields: SelectedField[]): ((rows: unknown[][]) => Record<string, unknown>[]) | undefined {
  if (fields.length === 0 || !fields.every((f) => f.path.length === 1 && is(f.field, Column))) return undefined;
  const names = fields.map((f) => f.path[0]);
  const columns = fields.map((f) => f.field as Column);
  return (rows) =>
    rows.map((row) => {
      const out: Record<string, unknown> = {};
      for (let i = 0; i < names.length; i += 1) {
        const raw = row[i];
        out[names[i]] = raw === null ? null : columns[i].mapFromDriverValue(raw);
      }
      return out;
    });
}

/** Sets `flatRows` as the prepared query's row mapping when its selection allows (drizzle calls it with the rows). */
function withFlatRows<T>(query: T): T {
  const prepared = query as DrizzlePrepared;
  if (prepared.fields && !prepared.customResultMapper) {
    const mapper = flatRows(prepared.fields);
    if (mapper) prepared.customResultMapper = mapper;
  }
  return query;
}
