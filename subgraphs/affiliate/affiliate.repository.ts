import { and, count, eq, inArray } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import { affiliateClicks, affiliateCodes, type AffiliateCode } from './affiliate.tables.js';

export async function findCodeOf(db: Executor, communityId: string, userId: string): Promise<AffiliateCode | undefined> {
  const [row] = await db
    .select()
    .from(affiliateCodes)
    .where(and(eq(affiliateCodes.communityId, communityId), eq(affiliateCodes.userId, userId)))
    .limit(1);
  return row;
}

/** Inserts the member's code; undefined when the member has one already or the code text is taken. */
export async function insertCode(db: Executor, values: typeof affiliateCodes.$inferInsert): Promise<AffiliateCode | undefined> {
  const [row] = await db.insert(affiliateCodes).values(values).onConflictDoNothing().returning();
  return row;
}

export async function findByCode(db: Executor, code: string): Promise<AffiliateCode | undefined> {
  const [row] = await db.select().from(affiliateCodes).where(eq(affiliateCodes.code, code)).limit(1);
  return row;
}

export async function insertClick(db: Executor, codeId: string, communityId: string, at: Date): Promise<void> {
  await db.insert(affiliateClicks).values({ codeId, communityId, createdAt: at });
}

/** Click counts of the codes (absent ids have none). */
export async function clickCounts(db: Executor, codeIds: readonly string[]): Promise<Map<string, number>> {
  if (codeIds.length === 0) return new Map();
  const rows = await db
    .select({ codeId: affiliateClicks.codeId, n: count() })
    .from(affiliateClicks)
    .where(inArray(affiliateClicks.codeId, [...codeIds]))
    .groupBy(affiliateClicks.codeId);
  return new Map(rows.map((r) => [r.codeId, Number(r.n)]));
}
