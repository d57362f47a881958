// Against PostgreSQL, every test run starts on an empty schema and migrates once (run by scripts/test.mjs).
import { migrate, openDatabase } from '../db/src/index.js';

const url = process.env.SVC_TEST_DATABASE_URL;
if (url) {
  const database = await openDatabase({ url, poolSize: 1 });
  try {
    await database.exec('drop schema if exists public cascade; create schema public;');
    await migrate(database);
  } finally {
    await database.close();
  }
}
