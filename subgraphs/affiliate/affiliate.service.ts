import { getCommunity } from '../communities/index.js';
import { type AppDeps, type RequestContext, countLoader, invalid, randomToken } from '../kernel/index.js';
import { requireRole } from '../members/index.js';
import * as repo from './affiliate.repository.js';
import type { AffiliateCode } from './affiliate.tables.js';

export type { AffiliateCode } from './affiliate.tables.js';

/** Affiliate codes are 11 base64url characters (8 random bytes). */
export const AFFILIATE_CODE = /^[A-Za-z0-9_-]{11}$/;

/** The caller's affiliate code in the tribe, created on first use (members only; one per member per tribe). */
export async function myAffiliateCode(ctx: RequestContext, communityId: string): Promise<AffiliateCode> {
  const community = await getCommunity(ctx, communityId);
  const { userId } = await requireRole(ctx, community.id, 'member');
  const db = ctx.app.database.db;
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const existing = await repo.findCodeOf(db, community.id, userId);
    if (existing) return existing;
    const created = await repo.insertCode(db, { communityId: community.id, userId, code: randomToken(8), createdAt: ctx.app.clock() });
    if (created) return created;
    // Either a concurrent call created the member's code (found next time) or the random text collided (retried).
  }
  throw new Error('could not create an affiliate code');
}

/**
 * Records a click for a known affiliate code (public: no caller). An unknown or malformed code is
 * 400 `invalid_code` (the two are not told apart); nothing is written then.
 */
export async function trackClick(app: AppDeps, code: unknown): Promise<void> {
  if (typeof code !== 'string' || !AFFILIATE_CODE.test(code)) throw invalid('invalid_code', 'Unknown affiliate code.');
  const found = await repo.findByCode(app.database.db, code);
  if (!found) throw invalid('invalid_code', 'Unknown affiliate code.');
  await repo.insertClick(app.database.db, found.id, found.communityId, app.clock());
}

/** Clicks recorded for a code (batched per request). */
export function clickCount(ctx: RequestContext, codeId: string): Promise<number> {
  return countLoader(ctx, 'affiliate.clickCount', (ids) => repo.clickCounts(ctx.app.database.db, ids)).load(codeId);
}
