import DataLoader from 'dataloader';
import { findCommunity, getCommunity, getCommunityByHandle, type Community } from '../tribes/index.js';
import { type RequestContext, forbidden, isUuid, notFound, requestScoped, unauthorized } from '../kernel/index.js';
import * as repo from './members.repository.js';
import type { Role } from './members.tables.js';

/** owner > admin > moderator > member. */
export const RANK: Record<Role, number> = { member: 1, moderator: 2, admin: 3, owner: 4 };

const roleLoader = (ctx: RequestContext) =>
  requestScoped(ctx, 'members.viewerRole', () =>
    new DataLoader<string, Role | null>(async (communityIds) =>
      ctx.caller ? repo.rolesIn(ctx.app.database.db, ctx.caller.userId, communityIds) : communityIds.map(() => null),
    ),
  );

/** The caller's role in a community, or null (also for anonymous callers). Batched per request. */
export function viewerRole(ctx: RequestContext, communityId: string): Promise<Role | null> {
  return ctx.caller ? roleLoader(ctx).load(communityId) : Promise.resolve(null);
}

/**
 * Every tribe the signed-in caller belongs to, with their role (empty for anonymous callers), read fresh in this
 * request: a removed member is gone at once. Primes `viewerRole` for each tribe, so later role checks cost no SQL.
 */
export async function viewerTribes(ctx: RequestContext): Promise<Array<{ communityId: string; role: Role }>> {
  if (!ctx.caller) return [];
  const rows = await repo.rolesOfUser(ctx.app.database.db, ctx.caller.userId);
  const loader = roleLoader(ctx);
  for (const r of rows) loader.prime(r.communityId, r.role);
  return rows;
}

/** Forget the cached role after the caller's membership changed within this request. */
export function forgetViewerRole(ctx: RequestContext, communityId: string): void {
  roleLoader(ctx).clear(communityId);
}

/** Who passed a tribe gate, and with what role. */
export interface TribeCaller {
  userId: string;
  role: Role;
}

/** The single authorization gate: the caller must be signed in (401) and hold at least `min` in the tribe (403). */
export async function requireRole(ctx: RequestContext, communityId: string, min: Role): Promise<TribeCaller> {
  if (!ctx.caller) throw unauthorized();
  const role = await viewerRole(ctx, communityId);
  if (!role || RANK[role] < RANK[min]) throw forbidden(`This needs the ${min} role or above in the tribe.`);
  if (ctx.operation === 'mutation') await requireWritable(ctx, communityId);
  return { userId: ctx.caller.userId, role };
}

/**
 * A tribe suspended by platform staff is read-only for everyone: every write of a mutation (every surface runs its
 * writes as GraphQL mutations, and every tribe write passes `requireRole`) is refused with `community_suspended`.
 */
export async function requireWritable(ctx: RequestContext, communityId: string): Promise<void> {
  const community = await findCommunity(ctx, communityId);
  if (community?.suspendedAt) {
    throw forbidden('This tribe is suspended by the platform and is read-only: nothing in it can be changed until it is reinstated.', 'community_suspended');
  }
}

/** A tribe named by handle or by id (the control plane names it by handle, GraphQL by id). */
export interface TribeRef {
  handle?: string | null;
  communityId?: string | null;
}

/**
 * The tribe-admin gate of the control plane (API keys, webhook endpoints): signed in (401), an existing tribe (404),
 * then owner or admin in it (403). Returns the tribe and who passed.
 */
export async function requireTribeAdmin(ctx: RequestContext, ref: TribeRef): Promise<TribeCaller & { community: Community }> {
  if (!ctx.caller) throw unauthorized();
  let community: Community;
  if (typeof ref.handle === 'string') community = await getCommunityByHandle(ctx, ref.handle);
  else if (isUuid(ref.communityId)) community = await getCommunity(ctx, ref.communityId);
  else throw notFound('Community');
  return { community, ...(await requireRole(ctx, community.id, 'admin')) };
}

/**
 * Content of a private tribe is visible to its members only; a public tribe's to anyone.
 * Returns the caller's role (null for outsiders of a public tribe), or throws `forbidden`.
 */
export async function requireView(ctx: RequestContext, community: { id: string; isPublic: boolean }): Promise<Role | null> {
  const role = await viewerRole(ctx, community.id);
  if (!community.isPublic && !role) {
    if (!ctx.caller) throw unauthorized();
    throw forbidden('This tribe is private: only its members see its content.');
  }
  return role;
}

/**
 * The row when the caller may see its tribe's content (the rule `requireVisible` applies, without the tribe check
 * of a root field's `communityId`), else null: a public tribe's to anyone, a private tribe's to its members. What an
 * entity reference answers for a course, an event, a challenge, a win or a membership, so that a row the root field
 * refuses never comes back through a seam. Batched: the tribes and the caller's roles are per-request DataLoaders,
 * so a list of references costs one statement each (at most), whatever its length.
 */
export async function visibleOrNull<T extends { communityId: string }>(ctx: RequestContext, row: T | null | undefined): Promise<T | null> {
  if (!row) return null;
  // Both at once, so that every reference of a list joins the same two batches (a tribe's, the caller's roles).
  const [community, role] = await Promise.all([findCommunity(ctx, row.communityId), viewerRole(ctx, row.communityId)]);
  return community && (community.isPublic || role) ? row : null;
}

/**
 * Tribe isolation for one row of a tribe's content (a course, an event...): the row must exist and, when
 * `communityId` is given, belong to that tribe, or `not_found` names `what`; then the caller must see the
 * tribe's content (`requireView`). Returns the row.
 */
export async function requireVisible<T extends { communityId: string }>(
  ctx: RequestContext,
  row: T | null | undefined,
  communityId: string | null | undefined,
  what: string,
): Promise<T> {
  if (!row || (communityId && row.communityId !== communityId)) throw notFound(what);
  await requireView(ctx, await getCommunity(ctx, row.communityId));
  return row;
}

/**
 * The gate of every write a member makes in a tribe (a post, a comment, a challenge check-in, a win, starting a
 * conversation through the tribe): `requireRole(member)`, then not muted there (`member_muted`, FORBIDDEN / 403,
 * whose message says until when). A banned user is no member, so `requireRole` already refuses them.
 */
export async function requireActiveMember(ctx: RequestContext, communityId: string): Promise<TribeCaller> {
  const caller = await requireRole(ctx, communityId, 'member');
  const sanction = await repo.findSanction(ctx.app.database.db, communityId, caller.userId);
  if (sanction?.mutedUntil && sanction.mutedUntil > ctx.app.clock()) {
    throw forbidden(`You are muted in this tribe until ${sanction.mutedUntil.toISOString()}.`, 'member_muted');
  }
  return caller;
}

/**
 * The gate of a moderation action on a user: the caller is moderator or above in the tribe (401/403), the target is
 * not the caller, and, when the target is a member, their role ranks below the caller's (`forbidden`: moderators
 * cannot act on moderators, admins or the owner; admins cannot act on admins or the owner). Returns who passed and
 * the target's role (null for a user who is not a member).
 */
export async function requireOutranks(
  ctx: RequestContext,
  communityId: string,
  targetUserId: string,
): Promise<TribeCaller & { targetRole: Role | null }> {
  const caller = await requireRole(ctx, communityId, 'moderator');
  if (targetUserId === caller.userId) throw forbidden('You cannot take a moderation action on yourself.');
  const target = isUuid(targetUserId) ? await repo.find(ctx.app.database.db, communityId, targetUserId) : undefined;
  if (target && RANK[target.role] >= RANK[caller.role]) {
    throw forbidden('You can only take moderation actions on members of a lower role than yours.');
  }
  return { ...caller, targetRole: target?.role ?? null };
}
