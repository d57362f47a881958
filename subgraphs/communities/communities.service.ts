import { createHash } from 'node:crypto';
import { z } from 'zod';
import { addOwner, requireRole } from '../members/index.js';
import {
  type Connection,
  type CursorKey,
  type RequestContext,
  conflict,
  invalid,
  isNumberAndId,
  isTimeAndId,
  pageRequest,
  toConnection,
  isUniqueViolation,
  nameText,
  notFound,
  paging,
  parseInput,
  requireUser,
  toPage,
  type Page,
  text,
} from '../kernel/index.js';
import { type Community, findCommunity, getCommunity, refreshCommunity, tribeRecords as repo } from '../tribes/index.js';
import { CATEGORIES, type Category } from './communities.categories.js';
import { metadataInput } from './communities.metadata.js';
import * as discovery from './communities.repository.js';
import type { DiscoverKey, DiscoverSort } from './communities.repository.js';

export type { Community } from '../tribes/index.js';
export { findCommunity, getCommunity, getCommunityByHandle } from '../tribes/index.js';

const HANDLE = /^[a-z0-9](?:[a-z0-9-]{1,38})[a-z0-9]$/;
const fields = {
  name: nameText({ max: 100, min: 1, trim: true, tooShort: 'name is required' }),
  handle: z
    .string()
    .trim()
    .toLowerCase()
    .regex(HANDLE, 'handle must be 3 to 40 of a-z, 0-9 and -, starting and ending with a letter or digit'),
  description: text({ max: 2000 }),
  isPublic: z.boolean(),
  // One of the fixed list, or null (no category); the input is trimmed and lowercased first.
  category: text({ max: 50, trim: true })
    .transform((v) => v.toLowerCase())
    .pipe(z.enum(CATEGORIES, { error: `must be one of ${CATEGORIES.join(', ')}` }))
    .nullable(),
};
const createInput = z.object({
  name: fields.name,
  handle: fields.handle,
  description: fields.description.optional().nullable(),
  isPublic: fields.isPublic.optional().nullable(),
  category: fields.category.optional(),
  metadata: metadataInput.optional(),
});
const updateInput = z.object({
  name: fields.name.optional(),
  handle: fields.handle.optional(),
  description: fields.description.nullable().optional(),
  isPublic: fields.isPublic.optional(),
  category: fields.category.optional(),
  metadata: metadataInput.optional(),
});

/** A tribe's own switches as `Community.settings` shows them (the automod part: the content domain's `CommunitySettings.moderation`). */
export interface CommunitySettings {
  communityId: string;
  /** `public` or `private` (`isPublic`). */
  visibility: 'public' | 'private';
  /** `open` for a public tribe, `invite_only` for a private one (joining needs an invite code). */
  joinPolicy: 'open' | 'invite_only';
  /** What createPost makes a post without a visibility: always `public`. */
  defaultPostVisibility: 'public';
}

/** The switches of a tribe, derived from its record: a read-only mirror of what is set elsewhere. */
export function communitySettings(community: Community): CommunitySettings {
  return {
    communityId: community.id,
    visibility: community.isPublic ? 'public' : 'private',
    joinPolicy: community.isPublic ? 'open' : 'invite_only',
    defaultPostVisibility: 'public',
  };
}

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
        metadata: input.metadata ?? {},
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

/** Updates only the sent fields (owner or admin); `metadata` replaces the stored object whole. */
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

export { CATEGORIES, type Category } from './communities.categories.js';
export type { DiscoverSort } from './communities.repository.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** TRENDING counts the joins of this many days before the service clock's now. */
export const TRENDING_DAYS = 7;
const SORTS = ['TRENDING', 'NEWEST', 'LARGEST'] as const;
const discoverInput = z.object({
  query: text({ max: 100, trim: true }).nullable().optional(),
  category: fields.category.optional(),
  sort: z.enum(SORTS, { error: `must be one of ${SORTS.join(', ')}` }).nullable().optional(),
});

/** A LIKE pattern that matches `text` anywhere, its own `%`, `_` and `\` taken literally. */
const containsPattern = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * Discover: PUBLIC tribes only, for anyone (anonymous too). `query` matches name, handle or description
 * (case-insensitive, taken literally); `category` filters. TRENDING orders by joins in the last 7 days of the service
 * clock, LARGEST by member count, NEWEST by creation time; ties by id; keyset cursors scoped to the sort and filters.
 * Tribes featured by platform staff come first in every sort; suspended tribes are left out.
 */
export async function discoverCommunities(
  ctx: RequestContext,
  raw: { query?: string | null; category?: string | null; sort?: DiscoverSort | null; first?: number | null; after?: string | null },
): Promise<Connection<Community>> {
  const input = parseInput(discoverInput, { query: raw.query, category: raw.category, sort: raw.sort });
  const sort: DiscoverSort = input.sort ?? 'TRENDING';
  const query = input.query || undefined;
  const category = input.category ?? undefined;
  const queryHash = query ? createHash('sha256').update(query.toLowerCase()).digest('base64url') : '*';
  const list = `discoverCommunities:${sort}:${category ?? '*'}:${queryHash}`;
  const rest = sort === 'NEWEST' ? isTimeAndId : isNumberAndId;
  // `[featured (0 or 1), ...the sort's key]`: featured tribes first.
  const isKey = (key: CursorKey): key is DiscoverKey => key.length === 3 && (key[0] === 0 || key[0] === 1) && rest(key.slice(1));
  const page = pageRequest(ctx, list, raw, isKey);
  const rows = await discovery.discover(ctx.app.database.db, {
    sort,
    pattern: query ? containsPattern(query) : undefined,
    category,
    trendingSince: new Date(ctx.app.clock().getTime() - TRENDING_DAYS * DAY_MS),
    after: page.after,
    limit: page.limit + 1,
  });
  const connection = toConnection(ctx, list, rows, page.limit, (r) => r.key);
  const tribes = await Promise.all(connection.edges.map((e) => findCommunity(ctx, e.node.id)));
  // A tribe deleted between the two reads is left out; the cursors and pageInfo still follow the keyset.
  const edges = connection.edges.flatMap((e, i) => {
    const node = tribes[i];
    return node ? [{ node, cursor: e.cursor }] : [];
  });
  return { edges, pageInfo: connection.pageInfo };
}

/** Every category of the list with its number of public tribes (0 included), in the list's order. */
export async function communityCategories(ctx: RequestContext): Promise<Array<{ category: Category; count: number }>> {
  const counts = await discovery.publicCategoryCounts(ctx.app.database.db, CATEGORIES);
  return CATEGORIES.map((category) => ({ category, count: counts.get(category) ?? 0 }));
}
