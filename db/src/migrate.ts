import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { codeMigrations } from './code-migrations.js';
import type { Database } from './database.js';
import type { Migration } from './migration.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));
/** Arbitrary constant: the advisory lock every starting process takes before migrating. */
const MIGRATION_LOCK = 72_430_001;

export type { Migration } from './migration.js';

/** The versioned SQL files of `db/migrations`, plus the code migrations, in version order. */
export async function loadMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
  const fromFiles = await Promise.all(files.map(async (f) => ({ version: f.replace(/\.sql$/, ''), sql: await readFile(dir + f, 'utf8') })));
  const fromCode = dir === MIGRATIONS_DIR ? codeMigrations() : [];
  return [...fromFiles, ...fromCode].sort((a, b) => (a.version < b.version ? -1 : a.version > b.version ? 1 : 0));
}

/**
 * Applies every migration not applied yet, each in its own transaction, under an advisory lock
 * so that processes starting together apply each migration exactly once. Returns the versions applied.
 */
export async function migrate(database: Database, migrations?: Migration[]): Promise<string[]> {
  const pending = migrations ?? (await loadMigrations());
  const create = `create table if not exists schema_migrations (
    version text primary key, applied_at timestamptz not null default now())`;
  const applied: string[] = [];
  const run = async (query: (text: string, params?: unknown[]) => Promise<{ rows: unknown[] }>, exec: (s: string) => Promise<unknown>) => {
    await exec(create);
    const done = new Set(((await query('select version from schema_migrations')).rows as { version: string }[]).map((r) => r.version));
    for (const m of pending) {
      if (done.has(m.version)) continue;
      await exec('begin');
      try {
        await exec(m.sql);
        await query('insert into schema_migrations (version) values ($1)', [m.version]);
        await exec('commit');
      } catch (error) {
        await exec('rollback');
        throw new Error(`migration ${m.version} failed: ${(error as Error).message}`);
      }
      applied.push(m.version);
    }
  };
  if (database.pool) {
    const client = await database.pool.connect();
    try {
      await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
      try {
        await run((t, p) => client.query(t, p), (s) => client.query(s));
      } finally {
        await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]);
      }
    } finally {
      client.release();
    }
  } else if (database.pglite) {
    const lite = database.pglite;
    await run((t, p) => lite.query(t, p), (s) => lite.exec(s));
  }
  return applied;
}
