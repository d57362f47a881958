// Against PostgreSQL, run by scripts/test.mjs before Jest: migrates a template database once per run and clones one
// database per Jest worker from it (`<db>_w1`, `<db>_w2`, ...), so that workers never share a schema and no test
// file migrates. test/support.ts picks its worker's database; `isolatedDatabase()` clones the same template.
//
//   node --import tsx scripts/prepare-test-db.ts <base url> <workers>
import pg from 'pg';
import { migrate, openDatabase } from '../db/src/index.js';
import { databaseUrl, runDatabasePattern, templateName, workerDatabaseName } from '../test/databases.js';

const [base, workersText] = process.argv.slice(2);
const workers = Number(workersText);
if (!base || !Number.isInteger(workers) || workers < 1) {
  console.error('usage: prepare-test-db.ts <base url> <workers>');
  process.exit(2);
}

const admin = new pg.Client({ connectionString: base });
await admin.connect();
const recreate = async (name: string, template?: string) => {
  await admin.query(`drop database if exists "${name}" with (force)`);
  await admin.query(`create database "${name}"${template ? ` template "${template}"` : ''}`);
};
try {
  const template = templateName(base);
  await recreate(template);
  const database = await openDatabase({ url: databaseUrl(base, template), poolSize: 1 });
  try {
    await migrate(database);
  } finally {
    await database.close();
  }
  // What an interrupted run left behind: worker and per-file databases of this base.
  const pattern = runDatabasePattern(base);
  const names = (await admin.query<{ datname: string }>('select datname from pg_database')).rows.map((r) => r.datname);
  for (const name of names.filter((n) => pattern.test(n))) await admin.query(`drop database if exists "${name}" with (force)`);
  for (let id = 1; id <= workers; id += 1) await recreate(workerDatabaseName(base, id), template);
} finally {
  await admin.end();
}
