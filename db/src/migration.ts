/** One versioned migration: SQL from `db/migrations`, or SQL a library produces (`code-migrations.ts`). */
export interface Migration {
  version: string;
  sql: string;
}
