import { z } from 'zod';
import { getCommunity } from '../communities/index.js';
import {
  type Page,
  type RequestContext,
  forbidden,
  notFound,
  paging,
  parseInput,
  toPage,
  idLoader,
  text,
} from '../kernel/index.js';
import { RANK, awardXp, requireActiveMember, requireRole, requireView, requireVisible, viewerRole, visibleOrNull, type Role } from '../members/index.js';
import { emitEvent } from '../outbox/index.js';
import * as repo from './wins.repository.js';
import { WIN_STATUSES, type Win } from './wins.tables.js';

export type { Win } from './wins.tables.js';

/** XP for an approved win (source `win.approved`, key `win.approved:<win id>`). */
export const WIN_XP = 50;
export const WIN_APPROVED = 'win.approved';

const winInput = z.object({
  title: text({ max: 140, min: 1, trim: true, required: 'title is required' }),
  content: text({ max: 5000, trim: true }).nullish(),
});
const listInput = z.object({
  status: z.enum(WIN_STATUSES, { error: 'status must be pending or approved' }).nullish(),
  page: z.number().nullish(),
  perPage: z.number().nullish(),
});

const isModerator = (role: Role | null) => !!role && RANK[role] >= RANK.moderator;

const winLoader = (ctx: RequestContext) =>
  idLoader<Win>(ctx, 'wins.byId', (ids) => repo.findWinsByIds(ctx.app.database.db, ids));

/**
 * A win the caller may see, or `not_found` (also in another tribe than `communityId`). Approved wins are
 * seen by whoever sees the tribe's content; pending ones by their author and moderators and above.
 */
export async function getWin(ctx: RequestContext, id: string, communityId?: string | null): Promise<Win> {
  const win = await requireVisible(ctx, await winLoader(ctx).load(id), communityId, 'Win');
  if (!(await seesWin(ctx, win))) throw notFound('Win');
  return win;
}

/** Whether the caller, who sees the win's tribe, sees the win: approved, or theirs, or they moderate the tribe. */
async function seesWin(ctx: RequestContext, win: Win): Promise<boolean> {
  if (win.status === 'approved' || (ctx.caller && win.authorId === ctx.caller.userId)) return true;
  return isModerator(await viewerRole(ctx, win.communityId));
}

/**
 * The win when the caller may see it, by the rules of `getWin` (the root field `win`), else null: what an entity
 * reference (a notification's win) answers, so that a pending win or a private tribe's win never leaks through a seam.
 */
export async function readableWin(ctx: RequestContext, id: string): Promise<Win | null> {
  const win = await visibleOrNull(ctx, await winLoader(ctx).load(id));
  return win && (await seesWin(ctx, win)) ? win : null;
}

/** Wins of a tribe the caller may see, newest first, optionally by status. */
export async function listWins(ctx: RequestContext, communityId: string, raw: unknown): Promise<Page<Win>> {
  const community = await getCommunity(ctx, communityId);
  const role = await requireView(ctx, community);
  const input = parseInput(listInput, raw);
  const p = paging(input.page, input.perPage);
  const visibleTo = isModerator(role) ? null : (ctx.caller?.userId ?? 'approved-only');
  const rows = await repo.listWins(ctx.app.database.db, community.id, { status: input.status ?? undefined, visibleTo }, p.perPage + 1, p.offset);
  return toPage(rows, p);
}

/** A member posts a win; it waits for approval. */
export async function postWin(ctx: RequestContext, communityId: string, raw: unknown): Promise<Win> {
  const community = await getCommunity(ctx, communityId);
  const { userId } = await requireActiveMember(ctx, community.id);
  const input = parseInput(winInput, raw);
  const win = await repo.insertWin(ctx.app.database.db, {
    communityId: community.id,
    authorId: userId,
    title: input.title,
    content: input.content ?? '',
    status: 'pending',
    createdAt: ctx.app.clock(),
  });
  winLoader(ctx).prime(win.id, win);
  return win;
}

/**
 * Approves a win (moderators and above, not their own): emits `win.approved` and awards `WIN_XP` to the
 * author, in one transaction. Approving again changes nothing and returns the win.
 */
export async function approveWin(ctx: RequestContext, communityId: string | null | undefined, id: string): Promise<Win> {
  const win = await getWin(ctx, id, communityId);
  const { userId } = await requireRole(ctx, win.communityId, 'moderator');
  if (win.authorId === userId) throw forbidden('A win is approved by someone other than its author.');
  if (win.status === 'approved') return win;
  const community = await getCommunity(ctx, win.communityId);
  const now = ctx.app.clock();
  const approved = await ctx.app.database.db.transaction(async (tx) => {
    const row = await repo.approvePending(tx, win.id, userId, now);
    if (!row) return (await repo.findWinsByIds(tx, [win.id]))[0];
    if (row.authorId) {
      await awardXp(tx, { communityId: row.communityId, userId: row.authorId, amount: WIN_XP, source: WIN_APPROVED, sourceKey: `${WIN_APPROVED}:${row.id}` });
    }
    await emitEvent(tx, row.communityId, 'win.approved', { winId: row.id, userId: row.authorId, handle: community.handle });
    return row;
  });
  winLoader(ctx).clear(id).prime(id, approved);
  return approved;
}

/** A win by id without a visibility check (batched per request): for jobs and services that check access themselves. */
export const winById = (ctx: RequestContext, id: string): Promise<Win | null> => winLoader(ctx).load(id);
