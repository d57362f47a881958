import { z } from 'zod';
import { addOwner, requireRole } from '../members/index.js';
import {
  type RequestContext,
  conflict,
  invalid,
  isUniqueViolation,
  notFound,
  paging,
  parseInput,
  requireUser,
  toPage,
  type Page,
  text,
} from '../kernel/index.js';
import { type Community, getCommunity, refreshCommunity, tribeRecords as repo } from '../tribes/index.js';

export type { Community } from '../tribes/index.js';
export { findCommunity, getCommunity, getCommunityByHandle } from '../tribes/index.js';

const HANDLE = /^[a-z0-9](?:[a-z0-9-]{1,38})[a-z0-9]$/;
const fields = {
  name: text({ max: 100, min: 1, trim: true, tooShort: 'name is required' }),
  handle: z
    .string()
    .trim()
    .toLowerCase()
    .regex(HANDLE, 'handle must be 3 to 40 of a-z, 0-9 and -, starting and ending with a letter or digit'),
  description: text({ max: 2000 }),
  isPublic: z.boolean(),
  category: text({ max: 50, trim: true }).nullable(),
};
const createInput = z.object({
  name: fields.name,
  handle: fields.handle,
  description: fields.description.optional().nullable(),
  isPublic: fields.isPublic.optional().nullable(),
  category: fields.category.optional(),
});
const updateInput = z.object({
  name: fields.name.optional(),
  handle: fields.handle.optional(),
  description: fields.description.nullable().optional(),
  isPublic: fields.isPublic.optional(),
  category: fields.category.optional(),
});

/** Communities, newest first, optionally filtered by name. */
export async function listCommunities(
  ctx: RequestContext,
  raw: { search?: string | null; page?: number | null; perPage?: number | null },
): Promise<Page<Community>> {
  const search = raw.search == null ? undefined : parseInput(text({ max: 100, trim: true }), raw.search) || undefined;
  const p = paging(raw.page, raw.perPage);
  return toPage(await repo.list(ctx.app.database.db, search, p.perPage + 1, p.offset), p);
}

/** Creates a tribe; the creator becomes its owner in the same transaction. */
export async function createCommunity(ctx: RequestContext, raw: unknown): Promise<Community> {
  const userId = requireUser(ctx);
  const input = parseInput(createInput, raw);
  try {
    return await ctx.app.database.db.transaction(async (tx) => {
      const community = await repo.insertCommunity(tx, {
        name: input.name,
        handle: input.handle,
        description: input.description ?? '',
        isPublic: input.isPublic ?? true,
        category: input.category ?? null,
        createdBy: userId,
      });
      await addOwner(tx, community.id, userId);
      return community;
    });
  } catch (error) {
    if (isUniqueViolation(error, 'communities_handle_key')) throw conflict('handle_taken', 'That handle is taken.');
    throw error;
  }
}

/** Updates only the sent fields (owner or admin). */
export async function updateCommunity(ctx: RequestContext, id: string, raw: unknown): Promise<Community> {
  const community = await getCommunity(ctx, id);
  await requireRole(ctx, community.id, 'admin');
  const input = parseInput(updateInput, raw);
  const patch = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
  if ('description' in patch && patch.description === null) patch.description = '';
  if (Object.keys(patch).length === 0) throw invalid('empty', 'Send at least one field to change.');
  try {
    const updated = await repo.update(ctx.app.database.db, community.id, patch);
    if (!updated) throw notFound('Community');
    refreshCommunity(ctx, id, updated);
    return updated;
  } catch (error) {
    if (isUniqueViolation(error, 'communities_handle_key')) throw conflict('handle_taken', 'That handle is taken.');
    throw error;
  }
}

/** Deletes a tribe and, by cascade, everything in it (owner only). Irreversible. */
export async function deleteCommunity(ctx: RequestContext, id: string): Promise<boolean> {
  const community = await getCommunity(ctx, id);
  await requireRole(ctx, community.id, 'owner');
  await repo.remove(ctx.app.database.db, community.id);
  refreshCommunity(ctx, id);
  return true;
}
