import { Column, is, SQL } from 'drizzle-orm';
import type { Executor } from './database.js';

/**
 * A statement prepared once per database handle: `build` makes the drizzle prepared query (placeholders for every
 * value, a unique statement name), and the returned function hands back the same one for the same handle. Hot paths
 * use it so a request neither rebuilds the SQL text nor makes PostgreSQL parse and plan it again on a connection
 * that has run it before. A transaction handle gets its own, dropped with it. Rows of a selection of columns and
 * expressions are mapped by `flatRows` (see there).
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
  /** The selection's tables by name (the table selected from, and any joined): one entry when nothing is joined. */
  joinsNotNullableMap?: Record<string, boolean>;
}

interface Decoder {
  mapFromDriverValue(value: unknown): unknown;
}

/** A field's decoder as drizzle's `mapResultRow` takes it: a column, or the decoder of an SQL expression. */
function decoderOf(field: unknown): Decoder | undefined {
  if (is(field, Column)) return field;
  if (is(field, SQL)) return (field as unknown as { decoder: Decoder }).decoder; // internal to drizzle's types
  if (is(field, SQL.Aliased)) return (field.sql as unknown as { decoder: Decoder }).decoder;
  return undefined; // a subquery: drizzle maps it
}

/**
 * Drizzle maps each value of each row through `mapResultRow`, which works out per value what the field is and where
 * its value goes (nested selections, nulls of outer joins): a tenth of the service's CPU on the posts list, 50 rows
 * of 19 columns. For a selection of columns and SQL expressions at the top level (`select().from(t)`, `select({ a:
 * t.a, key: sql... })`), or one level down when nothing is joined (`select({ post: posts, key: sql... }).from(posts)`:
 * without a join drizzle never turns a nested object into null), that comes to one object per row, each value mapped
 * by its field's decoder (null kept null), nested objects made where their first field comes, in the selection's
 * order: `flatRows` does exactly that, as code written once per statement. Any other selection keeps
 * drizzle's mapping. Shown equal to drizzle's for every table, and for a nested selection, by
 * test/prepared-rows.test.ts.
 */
function flatRows(prepared: DrizzlePrepared): ((rows: unknown[][]) => Record<string, unknown>[]) | undefined {
  const fields = prepared.fields ?? [];
  const joined = Object.keys(prepared.joinsNotNullableMap ?? {}).length > 1;
  const maxDepth = joined ? 1 : 2;
  if (fields.length === 0 || !fields.every((f) => f.path.length <= maxDepth && decoderOf(f.field))) return undefined;
  // The row as one object literal, written once per statement: each object is made with all its properties at once
  // (one shape, no growing property store), and each value's decoder is called at a site of its own. `top` holds
  // each top-level key with its field's index, or with the name of the nested object its fields make.
  const top: [string, number | string][] = [];
  const nested = new Map<string, [string, number][]>();
  fields.forEach(({ path }, i) => {
    const [parent, name] = path;
    if (path.length === 1) top.push([parent, i]);
    else if (nested.has(parent)) nested.get(parent)!.push([name, i]);
    else {
      top.push([parent, parent]);
      nested.set(parent, [[name, i]]);
    }
  });
  const value = (i: number) => `row[${i}] === null ? null : d[${i}].mapFromDriverValue(row[${i}])`;
  const object = (entries: [string, string][]) => `{ ${entries.map(([key, body]) => `${JSON.stringify(key)}: ${body}`).join(', ')} }`;
  const literal = object(top.map(([key, at]) => [key, typeof at === 'number' ? value(at) : object(nested.get(at)!.map(([k, i]) => [k, value(i)]))]));
  const decoders = fields.map((f) => decoderOf(f.field)!);
  const row = new Function('d', `return (row) => (${literal});`)(decoders) as (row: unknown[]) => Record<string, unknown>;
  return (rows) => rows.map(row);
}

/** Sets `flatRows` as the prepared query's row mapping when its selection allows (drizzle calls it with the rows). */
function withFlatRows<T>(query: T): T {
  const prepared = query as DrizzlePrepared;
  if (prepared.fields && !prepared.customResultMapper) {
    const mapper = flatRows(prepared);
    if (mapper) prepared.customResultMapper = mapper;
  }
  return query;
}
