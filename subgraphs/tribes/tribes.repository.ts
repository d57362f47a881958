import { desc, eq, ilike, sql } from 'drizzle-orm';
import { preparedOnce, rowsByIdRemembered, type Executor } from '../../db/src/index.js';
import { communities, type Community } from './tribes.tables.js';

export async function insertCommunity(db: Executor, values: typeof communities.$inferInsert): Promise<Community> {
  const [row] = await db.insert(communities).values(values).returning();
  return row;
}

const byIds = preparedOnce((db) =>
  db
    .select()
    .from(communities)
    .where(sql`${communities.id} = any(${sql.placeholder('ids')}::uuid[])`)
    .prepare('communities_by_ids'),
);

/**
 * Communities by id (every Community entity batch): one array parameter, a statement prepared once per database.
 * Through the database's root handle the rows are remembered across requests until a trigger announces `c:<id>`.
 */
const byIdsRemembered = rowsByIdRemembered<Executor, Community>('c', (db, ids) => byIds(db).execute({ ids }));

export async function findByIds(db: Executor, ids: readonly string[]): Promise<Community[]> {
  return ids.length === 0 ? [] : byIdsRemembered(db, ids);
}

export async function findByHandle(db: Executor, handle: string): Promise<Community | undefined> {
  const [row] = await db.select().from(communities).where(sql`lower(${communities.handle}) = lower(${handle})`).limit(1);
  return row;
}

export async function list(db: Executor, search: string | undefined, limit: number, offset: number): Promise<Community[]> {
  const pattern = search ? `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : undefined;
  return db
    .select()
    .from(communities)
    .where(pattern ? ilike(communities.name, pattern) : undefined)
    .orderBy(desc(communities.createdAt), desc(communities.id))
    .limit(limit)
    .offset(offset);
}

export async function update(db: Executor, id: string, patch: Partial<typeof communities.$inferInsert>): Promise<Community | undefined> {
  const [row] = await db.update(communities).set({ ...patch, updatedAt: new Date() }).where(eq(communities.id, id)).returning();
  return row;
}

export async function remove(db: Executor, id: string): Promise<boolean> {
  const rows = await db.delete(communities).where(eq(communities.id, id)).returning({ id: communities.id });
  return rows.length === 1;
}

/** Sets the platform state of a tribe (suspension, featuring): only the fields given. Undefined when the tribe is gone. */
export async function setPlatformState(
  db: Executor,
  id: string,
  patch: Partial<Pick<Community, 'suspendedAt' | 'suspensionReason' | 'featuredAt'>>,
): Promise<Community | undefined> {
  const [row] = await db.update(communities).set(patch).where(eq(communities.id, id)).returning();
  return row;
}

/** The number of tribes (one statement). */
export async function countAll(db: Executor): Promise<number> {
  const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(communities);
  return Number(row.n);
}
