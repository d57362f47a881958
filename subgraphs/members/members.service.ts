import DataLoader from 'dataloader';
import { z } from 'zod';
import type { Executor } from '../../db/src/index.js';
import { findCommunity, getCommunity, getCommunityByHandle } from '../tribes/index.js';
import { findUserByUsername, searchUserIds, userIdsByUsernames } from '../identity/index.js';
import {
  type AppDeps,
  type RequestContext,
  conflict,
  forbidden,
  invalid,
  isUuid,
  notFound,
  paging,
  parseInput,
  randomToken,
  requestScoped,
  requireUser,
  toPage,
  type Page,
  platformPaging,
  toPlatformPage,
  type PlatformPage,
  idLoader,
  text,
  requireScope,
  type Connection,
  isTimeAndId,
  pageRequest,
  toConnection,
} from '../kernel/index.js';
import { emitEvent } from '../outbox/index.js';
import { RANK, forgetViewerRole, requireRole, requireView, requireWritable, viewerRole, visibleOrNull } from './members.access.js';
import * as repo from './members.repository.js';
import { ROLES, type Member } from './members.tables.js';

export type { Member, Role } from './members.tables.js';

/** Makes the creator the owner; called inside the community's creation transaction. */
export async function addOwner(tx: Executor, communityId: string, userId: string): Promise<void> {
  await repo.insertIfAbsent(tx, communityId, userId, 'owner');
}

async function join(tx: Executor, communityId: string, handle: string, userId: string): Promise<Member> {
  const created = await repo.insertIfAbsent(tx, communityId, userId, 'member');
  if (created) {
    await emitEvent(tx, communityId, 'member.joined', { userId, handle });
    return created;
  }
  return (await repo.find(tx, communityId, userId))!;
}

/** Joins the tribe an invite code belongs to, inside the caller's transaction (sign-up: `onboarding/`). */
export async function joinByInvite(app: AppDeps, tx: Executor, userId: string, code: string): Promise<Member> {
  const invite = code.length <= 64 ? await repo.findLiveInvite(tx, code) : undefined;
  if (!invite) throw invalid('invalid_invite', 'inviteCode: unknown or revoked.', [{ field: 'inviteCode', message: 'unknown or revoked' }]);
  const ctx: RequestContext = { app, caller: { userId }, requestId: 'signup' };
  const community = await getCommunity(ctx, invite.communityId);
  await requireWritable(ctx, community.id); // a suspended tribe takes nobody in
  await refuseBanned(tx, community.id, userId);
  return join(tx, community.id, community.handle, userId);
}

/** `member_banned` (FORBIDDEN / 403) when the user is banned from the tribe: no join, by any path. */
async function refuseBanned(db: Executor, communityId: string, userId: string): Promise<void> {
  const sanction = await repo.findSanction(db, communityId, userId);
  if (sanction?.bannedAt) throw forbidden('You are banned from this tribe.', 'member_banned');
}

/**
 * Joins a tribe (a banned user: `member_banned`). Public tribes are open; a private tribe needs a live invite code of that tribe.
 * Joining twice returns the existing membership and emits nothing.
 */
export async function joinCommunity(ctx: RequestContext, handle: string, inviteCode?: string | null): Promise<Member> {
  const userId = requireUser(ctx);
  const community = await getCommunityByHandle(ctx, handle);
  await requireWritable(ctx, community.id); // a suspended tribe takes nobody in
  const db = ctx.app.database.db;
  await refuseBanned(db, community.id, userId);
  if (!community.isPublic) {
    const existing = await repo.find(db, community.id, userId);
    if (existing) return existing;
    const invite = inviteCode && inviteCode.length <= 64 ? await repo.findLiveInvite(db, inviteCode) : undefined;
    if (!invite || invite.communityId !== community.id) throw forbidden('This tribe is private: joining needs an invite code.');
  }
  const member = await db.transaction((tx) => join(tx, community.id, community.handle, userId));
  forgetViewerRole(ctx, community.id);
  return member;
}

/** Leaves a tribe. The owner cannot leave (delete the tribe instead). */
export async function leaveCommunity(ctx: RequestContext, handle: string): Promise<boolean> {
  const userId = requireUser(ctx);
  const community = await getCommunityByHandle(ctx, handle);
  await ctx.app.database.db.transaction(async (tx) => {
    const member = await repo.find(tx, community.id, userId);
    if (!member) throw notFound('Membership');
    if (member.role === 'owner') throw conflict('owner_cannot_leave', 'The owner cannot leave the tribe; delete the tribe instead.');
    await repo.remove(tx, member.id);
    await emitEvent(tx, community.id, 'member.left', { userId, handle: community.handle });
  });
  forgetViewerRole(ctx, community.id);
  return true;
}

const listInput = z.object({
  role: z.enum(ROLES).optional().nullable(),
  search: text({ max: 100, trim: true }).optional().nullable(),
  page: z.number().optional().nullable(),
  perPage: z.number().optional().nullable(),
});

/** Members of a tribe, newest first, filtered by role and by username or display name. */
export async function listMembers(ctx: RequestContext, communityId: string, raw: unknown): Promise<Page<Member>> {
  const community = await getCommunity(ctx, communityId);
  await requireView(ctx, community);
  const input = parseInput(listInput, raw);
  const p = paging(input.page, input.perPage);
  const userIds = input.search ? await searchUserIds(ctx.app, input.search) : undefined;
  const rows = await repo.list(ctx.app.database.db, community.id, { role: input.role ?? undefined, userIds }, p.perPage + 1, p.offset);
  return toPage(rows, p);
}

/** One member of a tribe by user id. */
export async function getMember(ctx: RequestContext, communityId: string, userId: string): Promise<Member> {
  const community = await getCommunity(ctx, communityId);
  await requireView(ctx, community);
  if (!isUuid(userId)) throw notFound('Member');
  const member = await repo.find(ctx.app.database.db, community.id, userId);
  if (!member) throw notFound('Member');
  return member;
}

const roleInput = z.enum(['admin', 'moderator', 'member'], { error: 'role is required: admin, moderator or member' });

/**
 * Changes a member's role. Owner and admins only; `owner` cannot be set; the owner's role cannot be
 * changed; only the owner grants or takes away `admin`. A change emits the internal `member.role_changed`
 * `{userId, role, previousRole, changedBy}` in its transaction (setting the role a member already has changes nothing).
 */
export async function updateMemberRole(ctx: RequestContext, communityId: string, userId: string, rawRole: unknown): Promise<Member> {
  const community = await getCommunity(ctx, communityId);
  const { role: actorRole } = await requireRole(ctx, community.id, 'admin');
  if (rawRole === 'owner') throw invalid('invalid_role', 'The owner role cannot be set.');
  const role = parseInput(roleInput, rawRole, 'invalid_role');
  const target = isUuid(userId) ? await repo.find(ctx.app.database.db, community.id, userId) : undefined;
  if (!target) throw notFound('Member');
  if (target.role === 'owner') throw forbidden("The owner's role cannot be changed.");
  if (actorRole !== 'owner' && (target.role === 'admin' || role === 'admin')) {
    throw forbidden('Only the owner grants or removes the admin role.');
  }
  if (role === target.role) return target;
  return ctx.app.database.db.transaction(async (tx) => {
    const updated = await repo.setRole(tx, target.id, role);
    await emitEvent(tx, community.id, 'member.role_changed', {
      userId: target.userId,
      role,
      previousRole: target.role,
      changedBy: ctx.caller!.userId,
    });
    return updated;
  });
}

/** Removes a member at once (their posts stay). Moderators and above, over members of lower rank only. */
export async function removeMember(ctx: RequestContext, communityId: string, userId: string): Promise<boolean> {
  const community = await getCommunity(ctx, communityId);
  const { role: actorRole } = await requireRole(ctx, community.id, 'moderator');
  await ctx.app.database.db.transaction(async (tx) => {
    const target = isUuid(userId) ? await repo.find(tx, community.id, userId) : undefined;
    if (!target) throw notFound('Member');
    if (RANK[target.role] >= RANK[actorRole]) throw forbidden('You can only remove members of a lower role than yours.');
    await repo.remove(tx, target.id);
    await emitEvent(tx, community.id, 'member.removed', { userId: target.userId, handle: community.handle });
  });
  return true;
}

/** Creates an invite code for the tribe (moderators and above). */
export async function createInvite(ctx: RequestContext, communityId: string): Promise<string> {
  const community = await getCommunity(ctx, communityId);
  const { userId } = await requireRole(ctx, community.id, 'moderator');
  const code = randomToken(12);
  await repo.insertInvite(ctx.app.database.db, code, community.id, userId);
  return code;
}

/** Member counts per community, batched per request. */
export function memberCount(ctx: RequestContext, communityId: string): Promise<number> {
  const loader = requestScoped(ctx, 'members.count', () =>
    new DataLoader<string, number>(async (ids) => {
      const counts = await repo.countByCommunity(ctx.app.database.db, ids);
      return ids.map((id) => counts.get(id) ?? 0);
    }),
  );
  return loader.load(communityId);
}

/** Members by membership id without an access check, batched per request: for services that check access themselves. */
export function memberById(ctx: RequestContext, id: string): Promise<Member | null> {
  const loader = idLoader<Member>(ctx, 'members.byId', (ids) => repo.findByIds(ctx.app.database.db, ids));
  return loader.load(id);
}

/**
 * The membership when the caller may see it, by the rule of `getMember` (the root field `member`: anyone who sees the
 * tribe's content), else null: what an entity reference answers, so that a private tribe's members never reach an
 * outsider through a seam.
 */
export async function readableMember(ctx: RequestContext, id: string): Promise<Member | null> {
  return visibleOrNull(ctx, await memberById(ctx, id));
}

/** Platform API (`members:read`): members of the key's tribe, newest first, paged by clamped offset. */
export async function platformMembers(
  ctx: RequestContext,
  raw: { page?: number | null; pageSize?: number | null },
): Promise<PlatformPage<Member>> {
  const communityId = requireScope(ctx, 'members:read');
  const p = platformPaging(raw.page, raw.pageSize);
  return toPlatformPage(await repo.pageOfMembers(ctx.app.database.db, communityId, p.pageSize, p.offset, ctx.app.clock()), p);
}

/** Platform API (`members:read`): a member of the key's tribe by username; `not_found` when absent or elsewhere. */
export async function platformMember(ctx: RequestContext, username: string): Promise<Member> {
  const communityId = requireScope(ctx, 'members:read');
  const user = await findUserByUsername(ctx.app, username);
  const member = user ? await repo.find(ctx.app.database.db, communityId, user.id) : undefined;
  if (!member) throw notFound('Member');
  return member;
}

/**
 * Records that a member acted in a tribe (posted, commented, reacted) inside the caller's transaction, so
 * `me.memberships` lists the tribes they were last active in first. Nothing happens for a non-member.
 */
export function recordActivity(tx: Executor, communityId: string, userId: string, at: Date): Promise<void> {
  return repo.touch(tx, communityId, userId, at);
}

/**
 * The tribes `userId` belongs to, most recently active first, as the caller may see them: all of them for the user
 * themself; for anyone else public tribes, plus private tribes the caller is a member of too (anonymous callers:
 * public only). Cursors belong to the list of this user as seen by this caller.
 */
export async function memberships(
  ctx: RequestContext,
  userId: string,
  args: { first?: number | null; after?: string | null },
): Promise<Connection<Member>> {
  const viewerId = ctx.caller?.userId ?? null;
  const list = `memberships:${userId}:${viewerId ?? 'anon'}`;
  const { limit, after } = pageRequest(ctx, list, args, isTimeAndId);
  const db = ctx.app.database.db;
  const tribes = !isUuid(userId) ? [] : viewerId === userId ? null : await visibleTribesOf(ctx, userId);
  const rows = tribes && tribes.length === 0 ? [] : await repo.membershipsOf(db, userId, tribes, after, limit + 1);
  return toConnection(ctx, list, rows, limit, (m) => [m.activeKey, m.id]);
}

/** The tribes of `userId` the caller may see them in: public ones, and private ones the caller belongs to as well. */
async function visibleTribesOf(ctx: RequestContext, userId: string): Promise<string[]> {
  const ids = await repo.communityIdsOf(ctx.app.database.db, userId);
  const visible = await Promise.all(
    ids.map(async (id) => {
      const community = await findCommunity(ctx, id);
      return !!community && (community.isPublic || (await viewerRole(ctx, id)) !== null);
    }),
  );
  return ids.filter((_, i) => visible[i]);
}

/**
 * The members of a tribe named by `usernames` (exact, lowercase), inside the caller's transaction: mentions are
 * resolved with it at write time. Unknown names and users who are not members are simply absent.
 */
export async function memberIdsByUsernames(tx: Executor, communityId: string, usernames: readonly string[]): Promise<Array<{ userId: string; username: string }>> {
  const users = await userIdsByUsernames(tx, usernames);
  const isMember = new Set(await repo.memberUserIdsAmong(tx, communityId, users.map((u) => u.id)));
  return users.filter((u) => isMember.has(u.id)).map((u) => ({ userId: u.id, username: u.username }));
}

/**
 * True when at least one tribe counts every one of `userIds` among its members (direct messages: a conversation's
 * users must share a tribe); with `unmuted`, a tribe where that user is muted at `at` does not count. Duplicates are ignored; ids that are not UUIDs, or name nobody, make it false.
 */
export async function shareATribe(db: Executor, userIds: readonly string[], unmuted?: { userId: string; at: Date }): Promise<boolean> {
  const distinct = [...new Set(userIds)];
  if (distinct.length === 0 || !distinct.every(isUuid)) return false;
  return repo.haveCommonTribe(db, distinct, unmuted);
}

/**
 * One page of a tribe's member user ids in user-id order after `afterUserId` (keyset, null for the first page), read
 * with `db`: how a tribe-wide notification walks 50,000 members a chunk at a time.
 */
export function memberUserIdsPage(db: Executor, communityId: string, afterUserId: string | null, limit: number): Promise<string[]> {
  return repo.memberUserIdsPage(db, communityId, afterUserId, limit);
}

/** The tribe's owners now (read with `db`, a transaction included): who must act on its money, such as a refund to make. */
export function ownerUserIds(db: Executor, communityId: string): Promise<string[]> {
  return repo.userIdsWithRole(db, communityId, ['owner']);
}

/** Which of `userIds` are members of the tribe now (read with `db`, a transaction included). */
export function memberUserIdsAmong(db: Executor, communityId: string, userIds: readonly string[]): Promise<string[]> {
  return repo.memberUserIdsAmong(db, communityId, userIds);
}

/** A user's mute and ban in a tribe: `mutedUntil` (possibly past: the mute is over) and `bannedAt`, null when none. */
export async function sanctionOf(db: Executor, communityId: string, userId: string): Promise<{ mutedUntil: Date | null; bannedAt: Date | null }> {
  const row = await repo.findSanction(db, communityId, userId);
  return { mutedUntil: row?.mutedUntil ?? null, bannedAt: row?.bannedAt ?? null };
}

/**
 * Mutes a user in a tribe until `until`, inside the caller's transaction (the moderation area checked who may).
 * Muting again replaces the end.
 */
export async function muteMember(tx: Executor, communityId: string, userId: string, until: Date): Promise<void> {
  await repo.setSanction(tx, communityId, userId, { mutedUntil: until });
}

/** Ends a user's mute in a tribe at once; false when they were not muted (or the mute was over) at `now`. */
export async function unmuteMember(tx: Executor, communityId: string, userId: string, now: Date): Promise<boolean> {
  const row = await repo.findSanction(tx, communityId, userId);
  if (!row?.mutedUntil || row.mutedUntil <= now) return false;
  await repo.setSanction(tx, communityId, userId, { mutedUntil: null });
  return true;
}

/**
 * Bans a user from a tribe inside the caller's transaction: their membership is removed (emitting `member.removed`
 * when they were a member) and they can no longer join by any path (`member_banned`). Their content stays.
 */
export async function banMember(tx: Executor, community: { id: string; handle: string }, userId: string, at: Date): Promise<void> {
  await repo.setSanction(tx, community.id, userId, { bannedAt: at, mutedUntil: null });
  if (await repo.removeByUser(tx, community.id, userId)) {
    await emitEvent(tx, community.id, 'member.removed', { userId, handle: community.handle });
  }
}

/** Lifts a ban (the user may join again like anyone); false when they were not banned. */
export async function unbanMember(tx: Executor, communityId: string, userId: string): Promise<boolean> {
  const row = await repo.findSanction(tx, communityId, userId);
  if (!row?.bannedAt) return false;
  await repo.setSanction(tx, communityId, userId, { bannedAt: null });
  return true;
}
