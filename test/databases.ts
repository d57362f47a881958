// Names of the test databases on one PostgreSQL server, shared by scripts/prepare-test-db.ts (which makes them
// before Jest starts) and test/support.ts (which picks its worker's). From a base URL `.../test`:
//   test_template   migrated once per run; never connected to by a test (PostgreSQL clones only an idle template)
//   test_w<N>       Jest worker N's database, a clone of the template
//   test_iso_<hex>  a file's own database (`isolatedDatabase()`), a clone of the template, dropped by the file

/** The database name of a PostgreSQL URL (`test` when it names none). */
export function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1)) || 'test';
}

/** `url` with its database replaced by `name`. */
export function databaseUrl(url: string, name: string): string {
  const out = new URL(url);
  out.pathname = `/${encodeURIComponent(name)}`;
  return out.toString();
}

export const templateName = (base: string): string => `${databaseName(base)}_template`;

export const workerDatabaseName = (base: string, workerId: number): string => `${databaseName(base)}_w${workerId}`;

/** The databases a run makes besides the template (left behind only by an interrupted run). */
export const runDatabasePattern = (base: string): RegExp => new RegExp(`^${databaseName(base).replace(/\W/g, '\\$&')}_(w\\d+|iso_[0-9a-f]+)$`);
