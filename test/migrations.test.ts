import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadMigrations, migrate, openDatabase } from '../db/src/index.js';
import { TEST_DATABASE_URL } from './support.js';

const describeOnPostgres = TEST_DATABASE_URL ? describe : describe.skip;

describeOnPostgres('migrate on PostgreSQL', () => {
  const name = `svc_migrate_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  const url = TEST_DATABASE_URL!.replace(/\/[^/]*$/, `/${name}`);

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`create database ${name}`);
  });
  afterAll(async () => {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  });

  it('applies every migration exactly once when three processes start together', async () => {
    const dbs = await Promise.all([1, 2, 3].map(() => openDatabase({ url, poolSize: 2 })));
    try {
      const applied = await Promise.all(dbs.map((db) => migrate(db)));
      const all = (await loadMigrations()).map((m) => m.version);
      expect(applied.flat().sort()).toEqual(all.sort());
      const rows = await dbs[0].pool!.query('select version from schema_migrations order by version');
      expect(rows.rows.map((r) => r.version)).toEqual(all.sort());
    } finally {
      await Promise.all(dbs.map((db) => db.close()));
    }
  });

  it('changes nothing when run again', async () => {
    const db = await openDatabase({ url, poolSize: 1 });
    try {
      const before = await db.pool!.query(`select table_name, column_name, data_type from information_schema.columns where table_schema = 'public' order by 1, 2`);
      expect(await migrate(db)).toEqual([]);
      const after = await db.pool!.query(`select table_name, column_name, data_type from information_schema.columns where table_schema = 'public' order by 1, 2`);
      expect(after.rows).toEqual(before.rows);
    } finally {
      await db.close();
    }
  });
});

describe('0009_discover on existing tribes', () => {
  it('maps free-text categories onto the fixed list and keeps the old text in settings.legacyCategory', async () => {
    const db = await openDatabase({ dataDir: 'memory://' });
    try {
      const all = await loadMigrations();
      const at = all.findIndex((m) => m.version === '0009_discover');
      await migrate(db, all.slice(0, at));
      await db.pglite!.exec(`insert into communities (handle, name, category) values
        ('a', 'A', ' Tech '), ('b', 'B', 'Cooking & Food'), ('c', 'C', null), ('d', 'D', 'music')`);
      expect(await migrate(db, all.slice(at))).toContain('0009_discover');
      const rows = await db.pglite!.query('select handle, category, settings from communities order by handle');
      expect(rows.rows).toEqual([
        { handle: 'a', category: 'tech', settings: {} },
        { handle: 'b', category: 'other', settings: { legacyCategory: 'Cooking & Food' } },
        { handle: 'c', category: null, settings: {} },
        { handle: 'd', category: 'music', settings: {} },
      ]);
    } finally {
      await db.close();
    }
  }, 120_000);
});

describe('migrate on PGlite', () => {
  it('applies all migrations on an empty embedded database, then nothing', async () => {
    const db = await openDatabase({ dataDir: 'memory://' });
    try {
      const all = (await loadMigrations()).map((m) => m.version);
      expect(await migrate(db)).toEqual(all);
      expect(await migrate(db)).toEqual([]);
    } finally {
      await db.close();
    }
  }, 120_000);
});
