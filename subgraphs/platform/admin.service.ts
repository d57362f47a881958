import DataLoader from 'dataloader';
import type { Executor } from '../../db/src/index.js';
import { z } from 'zod';
import type { Logger } from 'pino';
import { paidOrdersByCurrency } from '../commerce/index.js';
import { postsPerDay } from '../content/index.js';
import { findUserByEmail, findUsersByIds, getUser, suspendAccount, unsuspendAccount, userCounts, type User } from '../identity/index.js';
import {
  type AppDeps,
  type Connection,
  type RequestContext,
  forbidden,
  invalid,
  isTimeAndId,
  isUuid,
  notFound,
  pageRequest,
  parseInput,
  requestScoped,
  text,
  toConnection,
  unauthorized,
  requestLogger,
} from '../kernel/index.js';
import { activeUsers } from '../members/index.js';
import { countCommunities, findCommunity, findCommunityWith, setCommunityPlatformState, type Community } from '../tribes/index.js';
import * as repo from './admin.repository.js';
import type { PlatformAction, PlatformAuditRow } from './admin.tables.js';

export type { PlatformAuditRow } from './admin.tables.js';

const DAY_MS = 86_400_000;
/** The window of `postsPerDay` and of the 30-day figures. */
export const STATS_DAYS = 30;

const staffLoader = (ctx: RequestContext) =>
  requestScoped(ctx, 'platform.staff', () =>
    new DataLoader<string, boolean>(async (ids) => {
      const staff = await repo.staffAmong(ctx.app.database.db, ids);
      const others = ids.filter((id) => !staff.has(id));
      if (others.length > 0 && ctx.app.config.platformAdminEmails.length > 0) {
        for (const id of await grantConfiguredAmong(ctx.app, others, requestLogger(ctx))) staff.add(id);
      }
      return ids.map((id) => staff.has(id));
    }),
  );

/**
 * Whether `user` holds an address of `PLATFORM_ADMIN_EMAILS` that it has proved it owns: anyone may sign up with any
 * address, so an unverified one never makes staff (`verifyEmail`, or an identity provider that verified it).
 */
const listedAndVerified = (app: AppDeps, user: { email: string; emailVerifiedAt?: Date | string | null }): boolean =>
  Boolean(user.emailVerifiedAt) && app.config.platformAdminEmails.includes(user.email.trim().toLowerCase());

/**
 * The users among `userIds` whose verified address is in `PLATFORM_ADMIN_EMAILS`, granted platform staff now
 * (recorded as a `config` grant in the audit log) unless staff was revoked from them (`npm run admin -- revoke` holds
 * until the next start-up, as before): an address signed up or provisioned after start-up is staff from its first
 * request once verified.
 */
async function grantConfiguredAmong(app: AppDeps, userIds: readonly string[], log: Logger): Promise<string[]> {
  const granted: string[] = [];
  for (const user of await findUsersByIds(app, userIds)) {
    if (!listedAndVerified(app, user)) continue;
    const now = await app.database.db.transaction(async (tx) => {
      if (await repo.wasRevoked(tx, user.id)) return false;
      if (await repo.insertStaff(tx, user.id, 'config', app.clock())) {
        await audit({ app, caller: null }, 'staff.grant', { type: 'user', id: user.id }, null, { by: 'config' }, tx);
        log.info({ userId: user.id }, 'platform staff granted from PLATFORM_ADMIN_EMAILS');
      }
      return true;
    });
    if (now) granted.push(user.id);
  }
  return granted;
}

/**
 * Whether the user is platform staff (batched per request). An account whose address is in `PLATFORM_ADMIN_EMAILS`
 * is staff from its first check, whenever it was created (see `grantConfiguredAmong`).
 */
export const isStaff = (ctx: RequestContext, userId: string): Promise<boolean> => staffLoader(ctx).load(userId);

/** The platform-staff gate: signed in (401), then platform staff (403). Returns the staff member's id. */
export async function requireStaff(ctx: RequestContext): Promise<string> {
  if (!ctx.caller) throw unauthorized();
  if (!(await isStaff(ctx, ctx.caller.userId))) throw forbidden('Only platform staff may do this.');
  return ctx.caller.userId;
}

const reasonRule = text({ max: 500, min: 1, trim: true, required: 'reason is required', tooShort: 'reason is required' });
const suspendInput = z.object({ reason: reasonRule, until: z.date().nullable().optional() });
const communityReasonInput = z.object({ reason: reasonRule });

/** Appends an audit row through `db` (the transaction of the action it records). */
async function audit(
  ctx: RequestContext | { app: AppDeps; caller: null },
  action: PlatformAction,
  target: { type: 'user' | 'community'; id: string },
  reason: string | null,
  details: Record<string, unknown> = {},
  db: Executor = ctx.app.database.db,
): Promise<void> {
  await repo.appendAudit(db, {
    actorId: ctx.caller?.userId ?? null,
    action,
    targetType: target.type,
    targetId: target.id,
    reason,
    details,
    createdAt: ctx.app.clock(),
  });
}

/**
 * Suspends a user (platform staff): their sessions, `__session` tokens, access and refresh tokens stop working on
 * the next request and sign-in answers `account_suspended`, until `until` (null: until lifted). Staff cannot suspend
 * themselves; `until` must be ahead of the clock.
 */
export async function suspendUser(ctx: RequestContext, userId: string, raw: { reason: unknown; until?: unknown }): Promise<User> {
  const staffId = await requireStaff(ctx);
  const input = parseInput(suspendInput, raw);
  if (userId === staffId) throw invalid('cannot_suspend_self', 'You cannot suspend your own account.');
  const until = input.until ?? null;
  if (until && until <= ctx.app.clock()) throw invalid('invalid_until', 'until: must be in the future.', [{ field: 'until', message: 'must be in the future' }]);
  return ctx.app.database.db.transaction(async (tx) => {
    const user = await suspendAccount(ctx.app, userId, input.reason, until, tx);
    await audit(ctx, 'user.suspend', { type: 'user', id: user.id }, input.reason, { until: until?.toISOString() ?? null }, tx);
    return user;
  });
}

/** Lifts a user's suspension (platform staff). */
export async function unsuspendUser(ctx: RequestContext, userId: string): Promise<User> {
  await requireStaff(ctx);
  return ctx.app.database.db.transaction(async (tx) => {
    const user = await unsuspendAccount(ctx.app, userId, tx);
    await audit(ctx, 'user.unsuspend', { type: 'user', id: user.id }, null, {}, tx);
    return user;
  });
}

/**
 * Suspends a tribe (platform staff): read-only for everyone (`community_suspended` on every write) and its
 * Platform API keys answer 403 with the reason, until reinstated.
 */
export async function suspendCommunity(ctx: RequestContext, communityId: string, raw: { reason: unknown }): Promise<Community> {
  await requireStaff(ctx);
  const { reason } = parseInput(communityReasonInput, raw);
  return ctx.app.database.db.transaction(async (tx) => {
    const community = await setCommunityPlatformState(ctx, communityId, { suspensionReason: reason }, tx);
    await audit(ctx, 'community.suspend', { type: 'community', id: community.id }, reason, {}, tx);
    return community;
  });
}

/** Reinstates a suspended tribe (platform staff). */
export async function unsuspendCommunity(ctx: RequestContext, communityId: string): Promise<Community> {
  await requireStaff(ctx);
  return ctx.app.database.db.transaction(async (tx) => {
    const community = await setCommunityPlatformState(ctx, communityId, { suspensionReason: null }, tx);
    await audit(ctx, 'community.unsuspend', { type: 'community', id: community.id }, null, {}, tx);
    return community;
  });
}

/** Features a tribe, or stops featuring it (platform staff): featured tribes come first in discover. */
export async function featureCommunity(ctx: RequestContext, communityId: string, featured: boolean): Promise<Community> {
  await requireStaff(ctx);
  return ctx.app.database.db.transaction(async (tx) => {
    const community = await setCommunityPlatformState(ctx, communityId, { featured }, tx);
    await audit(ctx, featured ? 'community.feature' : 'community.unfeature', { type: 'community', id: community.id }, null, {}, tx);
    return community;
  });
}

/** Platform figures at the clock's now: each one set-based statement, in the domain that owns its table. */
export interface PlatformStats {
  generatedAt: Date;
  users: number;
  tribes: number;
  signupsLastDay: number;
  signupsLast30Days: number;
  activeUsersLastDay: number;
  activeUsersLast30Days: number;
  /** The 30 UTC days ending today, oldest first, zero days included. */
  postsPerDay: Array<{ day: string; count: number }>;
  paidOrders: Array<{ currency: string; paidOrders: number; revenueCents: number }>;
}

/** The platform's figures (platform staff). */
export async function platformStats(ctx: RequestContext): Promise<PlatformStats> {
  await requireStaff(ctx);
  const db = ctx.app.database.db;
  const now = ctx.app.clock();
  const day = new Date(now.getTime() - DAY_MS);
  const month = new Date(now.getTime() - STATS_DAYS * DAY_MS);
  const todayStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const firstDay = new Date(todayStart - (STATS_DAYS - 1) * DAY_MS);
  const [users, tribes, active, posts, orders] = await Promise.all([
    userCounts(ctx.app, day, month),
    countCommunities(db),
    activeUsers(db, day, month),
    postsPerDay(db, firstDay, now),
    paidOrdersByCurrency(db),
  ]);
  const byDay = new Map(posts.map((p) => [p.day, p.count]));
  const days = Array.from({ length: STATS_DAYS }, (_, i) => new Date(firstDay.getTime() + i * DAY_MS).toISOString().slice(0, 10));
  return {
    generatedAt: now,
    users: users.total,
    tribes,
    signupsLastDay: users.signupsDay,
    signupsLast30Days: users.signupsMonth,
    activeUsersLastDay: active.day,
    activeUsersLast30Days: active.month,
    postsPerDay: days.map((d) => ({ day: d, count: byDay.get(d) ?? 0 })),
    paidOrders: orders.map((o) => ({ currency: o.currency, paidOrders: o.orders, revenueCents: o.revenueCents })),
  };
}

/** The platform audit log, newest first, as a Relay connection (platform staff). */
export async function platformAuditLog(ctx: RequestContext, args: { first?: number | null; after?: string | null }): Promise<Connection<PlatformAuditRow>> {
  await requireStaff(ctx);
  const list = 'platformAuditLog';
  const page = pageRequest(ctx, list, args, isTimeAndId);
  const rows = await repo.auditPage(ctx.app.database.db, page.after, page.limit + 1);
  return toConnection(ctx, list, rows, page.limit, (r) => [r.createdAt.toISOString(), r.id]);
}

/** A user's suspension in force (platform staff only), or null. */
export async function suspensionOf(ctx: RequestContext, userId: string): Promise<{ reason: string; suspendedAt: Date; until: Date | null } | null> {
  await requireStaff(ctx);
  const user = await getUser(ctx.app, userId);
  if (!user.suspendedAt || (user.suspendedUntil && user.suspendedUntil <= ctx.app.clock())) return null;
  return { reason: user.suspensionReason ?? '', suspendedAt: user.suspendedAt, until: user.suspendedUntil };
}

/** Whether a user is platform staff (platform staff only). */
export async function userIsStaff(ctx: RequestContext, userId: string): Promise<boolean> {
  await requireStaff(ctx);
  return isStaff(ctx, userId);
}

/** A tribe's suspension reason (platform staff only), or null when it is not suspended. */
export async function communitySuspensionReason(ctx: RequestContext, communityId: string): Promise<string | null> {
  await requireStaff(ctx);
  const community = await findCommunity(ctx, communityId);
  return community?.suspendedAt ? (community.suspensionReason ?? '') : null;
}

/** A tribe as platform state sees it (suspended, featured), or `not_found`. */
export async function communityState(ctx: RequestContext, communityId: string): Promise<Community> {
  const community = isUuid(communityId) ? await findCommunity(ctx, communityId) : null;
  if (!community) throw notFound('Community');
  return community;
}

// ---- the operator: start-up grants and `npm run admin` ----

/** Grants platform staff to the user with `email` (`not_found` when nobody has it). True when newly granted. */
export async function grantStaff(app: AppDeps, email: string, grantedBy: 'config' | 'script'): Promise<{ user: User; granted: boolean }> {
  const user = await findUserByEmail(app, email);
  if (!user) throw notFound('User');
  const granted = await app.database.db.transaction(async (tx) => {
    const inserted = await repo.insertStaff(tx, user.id, grantedBy, app.clock());
    if (inserted) await audit({ app, caller: null }, 'staff.grant', { type: 'user', id: user.id }, null, { by: grantedBy }, tx);
    return inserted;
  });
  return { user, granted };
}

/** Revokes platform staff from the user with `email` (`not_found` when nobody has it). True when they were staff. */
export async function revokeStaff(app: AppDeps, email: string): Promise<{ user: User; revoked: boolean }> {
  const user = await findUserByEmail(app, email);
  if (!user) throw notFound('User');
  const revoked = await app.database.db.transaction(async (tx) => {
    const deleted = await repo.deleteStaff(tx, user.id);
    if (deleted) await audit({ app, caller: null }, 'staff.revoke', { type: 'user', id: user.id }, null, { by: 'script' }, tx);
    return deleted;
  });
  return { user, revoked };
}

/**
 * Start-up: grants platform staff to every address of `PLATFORM_ADMIN_EMAILS` whose account has verified it (logged);
 * an address without an account yet, or not verified yet, is logged and granted on its account's first request once
 * verified (see `isStaff`).
 */
export async function grantConfiguredStaff(app: AppDeps): Promise<void> {
  for (const email of app.config.platformAdminEmails) {
    const user = await findUserByEmail(app, email);
    if (!user) {
      app.log.warn({ email }, 'PLATFORM_ADMIN_EMAILS: no account has this address yet; it is granted once one signs up with it and verifies it');
      continue;
    }
    if (!listedAndVerified(app, user)) {
      app.log.warn({ email }, 'PLATFORM_ADMIN_EMAILS: the account with this address has not verified it; it is granted once verified');
      continue;
    }
    const granted = await app.database.db.transaction(async (tx) => {
      const inserted = await repo.insertStaff(tx, user.id, 'config', app.clock());
      if (inserted) await audit({ app, caller: null }, 'staff.grant', { type: 'user', id: user.id }, null, { by: 'config' }, tx);
      return inserted;
    });
    if (granted) app.log.info({ userId: user.id }, 'platform staff granted from PLATFORM_ADMIN_EMAILS');
  }
}

/**
 * The refusal of a Platform API key of a suspended tribe: 403 `forbidden` whose message says why, or null when the
 * tribe may be read. One lookup of the tribe by id.
 */
export async function suspendedKeyRefusal(app: AppDeps, communityId: string): Promise<string | null> {
  const community = await findCommunityWith(app.database.db, communityId);
  if (!community?.suspendedAt) return null;
  return `This tribe is suspended by the platform, so its API keys are refused until it is reinstated. Reason: ${community.suspensionReason ?? 'not given'}.`;
}
