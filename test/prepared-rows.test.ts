// Rows of a statement prepared with `preparedOnce` are mapped by `flatRows` (db/src/prepared.ts) when its selection is
// columns and expressions (nested one level when nothing is joined): they must be exactly what drizzle's own mapping
// gives, for every column type of every table.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readdirSync } from 'node:fs';
import { is, sql } from 'drizzle-orm';
import { getTableConfig, PgTable } from 'drizzle-orm/pg-core';
import { preparedOnce } from '../db/src/index.js';
import { posts } from '../subgraphs/content/content.tables.js';
import { users } from '../subgraphs/identity/identity.tables.js';
import { createPost, createTribe, join, signupUser } from './factory.js';
import { sqlRows, startService, type TestService } from './support.js';

/** Every drizzle table of every subgraph. */
async function allTables(): Promise<PgTable[]> {
  const tables: PgTable[] = [];
  for (const dir of readdirSync(new URL('../subgraphs/', import.meta.url))) {
    let files: string[] = [];
    try {
      files = readdirSync(new URL(`../subgraphs/${dir}/`, import.meta.url)).filter((f) => f.endsWith('.tables.ts'));
    } catch {
      continue;
    }
    for (const file of files) {
      const mod = (await import(`../subgraphs/${dir}/${file.replace(/\.ts$/, '.js')}`)) as Record<string, unknown>;
      for (const value of Object.values(mod)) if (is(value, PgTable)) tables.push(value);
    }
  }
  return tables;
}

describe('rows of prepared statements (flatRows)', () => {
  let t: TestService;
  let removedId = '';
  beforeAll(async () => {
    t = await startService();
    // Rows with arrays, nulls and every timestamp set somewhere.
    const owner = await signupUser(t);
    const member = await signupUser(t);
    const tribe = await createTribe(t, owner);
    await join(t, member, tribe.handle);
    await createPost(t, owner, tribe.id, { mediaUrls: ['https://example.com/a.png', 'https://example.com/b.png'] });
    const removed = await createPost(t, member, tribe.id);
    removedId = removed.id;
    await sqlRows(t, sql`update posts set pinned_at = now(), removed_at = now(), removed_reason = 'spam', hot_score = 1.25 where id = ${removed.id}`);
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('gives what drizzle gives, value for value and key for key, for every table of the schema', async () => {
    const db = t.deps.database.db;
    const tables = await allTables();
    expect(tables.length).toBeGreaterThan(40);
    let rows = 0;
    // One snapshot for both reads of a table: the service's own jobs may write between them otherwise.
    await db.transaction(
      async (tx) => {
        for (const table of tables) {
          const name = getTableConfig(table).name;
          const prepared = preparedOnce((d) => d.select().from(table).orderBy(sql`ctid`).limit(sql.placeholder('limit')).prepare(`test_flat_${name}`))(tx);
          expect([name, typeof (prepared as unknown as { customResultMapper?: unknown }).customResultMapper]).toEqual([name, 'function']);
          const fast = (await prepared.execute({ limit: 50 })) as Record<string, unknown>[];
          const drizzle = (await tx.select().from(table).orderBy(sql`ctid`).limit(50)) as Record<string, unknown>[];
          expect([name, fast]).toEqual([name, drizzle]);
          expect([name, fast.map((r) => Object.keys(r))]).toEqual([name, drizzle.map((r) => Object.keys(r))]);
          rows += fast.length;
        }
      },
      { isolationLevel: 'repeatable read', accessMode: 'read only' },
    );
    expect(rows).toBeGreaterThan(10);
    const [page] = await preparedOnce((d) => d.select().from(posts).where(sql`${posts.id} = ${sql.placeholder('id')}`).prepare('test_flat_post'))(db).execute({ id: removedId });
    expect(page.removedAt).toBeInstanceOf(Date);
    expect(page.hotScore).toBe(1.25);
  });

  it('maps a selection nested one level in one table, with SQL expressions, as drizzle does; leaves a join to drizzle', async () => {
    const db = t.deps.database.db;
    const build = (d: typeof db) =>
      d
        .select({ post: posts, key: sql<string>`${posts.createdAt}::text`, twice: sql`${posts.hotScore} * 2`.mapWith(Number), body: posts.body })
        .from(posts)
        .orderBy(posts.id)
        .limit(5);
    const prepared = preparedOnce((d) => build(d).prepare('test_nested_posts'))(db);
    expect(typeof (prepared as unknown as { customResultMapper?: unknown }).customResultMapper).toBe('function');
    const rows = await prepared.execute();
    const drizzle = await build(db);
    expect(rows.length).toBeGreaterThan(1);
    expect(rows).toEqual(drizzle);
    expect(rows.map((r) => [Object.keys(r), Object.keys(r.post)])).toEqual(drizzle.map((r) => [Object.keys(r), Object.keys(r.post)]));
    expect(rows[0].post.createdAt).toBeInstanceOf(Date);
    expect(typeof rows[0].twice).toBe('number');

    // An outer join that finds nothing: drizzle answers the joined table's object as null, so it keeps the mapping.
    const joined = (d: typeof db) =>
      d.select({ post: { id: posts.id }, author: { id: users.id, username: users.username } }).from(posts).leftJoin(users, sql`false`).orderBy(posts.id).limit(5);
    const preparedJoin = preparedOnce((d) => joined(d).prepare('test_nested_join'))(db);
    expect((preparedJoin as unknown as { customResultMapper?: unknown }).customResultMapper).toBeUndefined();
    const joinedRows = await preparedJoin.execute();
    expect(joinedRows.length).toBeGreaterThan(1);
    expect(joinedRows).toEqual(await joined(db));
    expect(joinedRows[0].author).toBeNull();
  });
});
