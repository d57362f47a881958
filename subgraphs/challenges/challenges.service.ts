import { z } from 'zod';
import {
  type CheckoutInfo,
  DEFAULT_CURRENCY,
  currencySchema,
  type FulfilmentHandler,
  type RevocationHandler,
  startCheckout,
  priceSchema,
  refinePriceToCurrency,
  type Order,
} from '../commerce/index.js';
import { getCommunity } from '../communities/index.js';
import {
  DomainError,
  type Page,
  type RequestContext,
  conflict,
  invalid,
  paging,
  parseInput,
  requireUser,
  toPage,
  idLoader,
  viewerLoader,
  text,
} from '../kernel/index.js';
import { awardXp, requireActiveMember, requireRole, requireView, requireVisible, visibleOrNull } from '../members/index.js';
import * as repo from './challenges.repository.js';
import { CHECKIN_XP, currentStreak, dayAt, runEndingAtHighest } from './challenges.streak.js';
import {
  ACCESS_TYPES,
  CHALLENGE_TYPES,
  type Challenge,
  type ChallengeCheckin,
  type ChallengeEnrollment,
} from './challenges.tables.js';

export type { Challenge, ChallengeCheckin, ChallengeEnrollment } from './challenges.tables.js';
export { CHECKIN_XP } from './challenges.streak.js';

/** XP sources; keys are `challenge.checkin:<check-in id>` and `challenge.completed:<enrollment id>`. */
export const CHALLENGE_CHECKIN = 'challenge.checkin';
export const CHALLENGE_COMPLETED = 'challenge.completed';

const notEnrolled = () => new DomainError('forbidden', 'not_enrolled', 'Enroll in the challenge first.');

const createInput = z
  .object({
    title: text({ max: 200, min: 1, trim: true, required: 'title is required' }),
    description: text({ max: 10_000 }).nullish(),
    durationDays: z
      .number({ error: 'duration_days is required: an integer from 1 to 365' })
      .int('duration_days must be an integer')
      .min(1, 'duration_days must be from 1 to 365')
      .max(365, 'duration_days must be from 1 to 365'),
    challengeType: z.enum(CHALLENGE_TYPES, { error: 'challenge_type must be daily, weekly or custom' }),
    accessType: z.enum(ACCESS_TYPES, { error: 'access_type must be free, paid or members_only' }),
    xpReward: z.number().int('xp_reward must be an integer').min(0).max(100_000).nullish(),
    price: priceSchema.nullish(),
    currency: currencySchema.nullish(),
  })
  .superRefine((v, ctx) => {
    if (v.accessType === 'paid' && !v.price) {
      ctx.addIssue({ code: 'custom', path: ['price'], message: 'price above 0 is required when access_type is paid' });
    }
    if (v.accessType !== 'paid' && v.price) {
      ctx.addIssue({ code: 'custom', path: ['price'], message: 'price is only for paid challenges' });
    }
    refinePriceToCurrency(v, ctx);
  });

const checkinInput = z.object({
  content: text({ max: 5000, min: 1, trim: true, required: 'content is required' }),
  dayNumber: z.number({ error: 'day_number is required: an integer' }).int('day_number must be an integer'),
  tags: z
    .array(text({ max: 32, min: 1, trim: true, required: 'each tag must be a string', tooShort: 'tags cannot be empty', tooLong: 'each tag at most 32 characters' }), {
      error: 'tags must be an array of strings',
    })
    .max(10, 'at most 10 tags')
    .nullish(),
});

// ---- loaders (per request) ----

const challengeLoader = (ctx: RequestContext) =>
  idLoader<Challenge>(ctx, 'challenges.byId', (ids) => repo.findChallengesByIds(ctx.app.database.db, ids));

const viewerEnrollmentLoader = (ctx: RequestContext) =>
  viewerLoader(ctx, 'challenges.viewerEnrollment', (userId, ids) => repo.enrollmentsOf(ctx.app.database.db, userId, ids), (r) => r.challengeId);

// ---- reads ----

/** A challenge the caller may see (anyone who may see the tribe's content), or `not_found`, also when in another tribe. */
export async function getChallenge(ctx: RequestContext, id: string, communityId?: string | null): Promise<Challenge> {
  return requireVisible(ctx, await challengeLoader(ctx).load(id), communityId, 'Challenge');
}

/** Challenges of a tribe, newest first. */
export async function listChallenges(
  ctx: RequestContext,
  communityId: string,
  raw: { page?: number | null; perPage?: number | null },
): Promise<Page<Challenge>> {
  const community = await getCommunity(ctx, communityId);
  await requireView(ctx, community);
  const p = paging(raw.page, raw.perPage);
  return toPage(await repo.listChallenges(ctx.app.database.db, community.id, p.perPage + 1, p.offset), p);
}

/** A challenge by id without an access check (batched per request): for services that check access themselves. */
export const challengeById = (ctx: RequestContext, id: string): Promise<Challenge | null> => challengeLoader(ctx).load(id);

/**
 * The challenge when the caller may see it, by the rule of `getChallenge` (the root field `challenge`: anyone who
 * sees the tribe's content), else null: what an entity reference, an enrollment's and a check-in's challenge answer,
 * so that a private tribe's challenge never reaches an outsider through a seam.
 */
export async function readableChallenge(ctx: RequestContext, id: string): Promise<Challenge | null> {
  return visibleOrNull(ctx, await challengeLoader(ctx).load(id));
}

/** The caller's enrollment in the challenge, or null (batched per request). */
export const viewerEnrollment = (ctx: RequestContext, challengeId: string): Promise<ChallengeEnrollment | null> =>
  ctx.caller ? viewerEnrollmentLoader(ctx).load(challengeId) : Promise.resolve(null);

/** Progress of one enrollment at the clock's now. */
export interface ChallengeProgress {
  enrollment: ChallengeEnrollment;
  totalDays: number;
  completedDays: number;
  /** 0 to 100, two decimals. */
  progressPercent: number;
  currentStreak: number;
  lastCheckinAt: Date | null;
  /** The day number open now (above totalDays once the challenge is over). */
  currentDay: number;
  xpEarned: number;
}

function progressOf(challenge: Challenge, e: ChallengeEnrollment, now: Date): ChallengeProgress {
  const today = dayAt(e.startedAt, now);
  return {
    enrollment: e,
    totalDays: challenge.durationDays,
    completedDays: e.completedDays,
    progressPercent: Math.round((Math.min(e.completedDays, challenge.durationDays) * 10_000) / challenge.durationDays) / 100,
    currentStreak: currentStreak(e, challenge.durationDays, today),
    lastCheckinAt: e.lastCheckinAt,
    currentDay: today,
    xpEarned: e.xpEarned,
  };
}

/** The caller's progress (`not_enrolled`, 403, without an enrollment). */
export async function progress(ctx: RequestContext, communityId: string | null | undefined, challengeId: string): Promise<ChallengeProgress> {
  requireUser(ctx);
  const challenge = await getChallenge(ctx, challengeId, communityId);
  const enrollment = await viewerEnrollment(ctx, challenge.id);
  if (!enrollment) throw notEnrolled();
  return progressOf(challenge, enrollment, ctx.app.clock());
}

export interface LeaderboardEntry {
  rank: number;
  userId: string;
  /** The participant's reference, built here: a field without a resolver is read as a property by graphql-jit. */
  user: { __typename: 'User'; id: string };
  completedDays: number;
  currentStreak: number;
  xpEarned: number;
  lastCheckinAt: Date | null;
  status: string;
}

/**
 * A page of the leaderboard: participants by completed days, then XP earned in the challenge, then who got
 * there first; `rank` is the 1-based position in that order. Anyone who sees the tribe sees it; for a
 * `members_only` challenge, members only. One SQL statement per page, whatever its size.
 */
export async function leaderboard(
  ctx: RequestContext,
  communityId: string | null | undefined,
  challengeId: string,
  raw: { page?: number | null; perPage?: number | null },
): Promise<Page<LeaderboardEntry>> {
  const challenge = await getChallenge(ctx, challengeId, communityId);
  if (challenge.accessType === 'members_only') await requireRole(ctx, challenge.communityId, 'member');
  const p = paging(raw.page, raw.perPage);
  const rows = await repo.leaderboard(ctx.app.database.db, challenge.id, p.perPage + 1, p.offset);
  const now = ctx.app.clock();
  const page = toPage(rows, p);
  return {
    ...page,
    items: page.items.map((e, i) => ({
      rank: p.offset + i + 1,
      userId: e.userId,
      user: { __typename: 'User', id: e.userId },
      completedDays: e.completedDays,
      currentStreak: currentStreak(e, challenge.durationDays, dayAt(e.startedAt, now)),
      xpEarned: e.xpEarned,
      lastCheckinAt: e.lastCheckinAt,
      status: e.status,
    })),
  };
}

// ---- writes ----

/** Creates a challenge (moderators and above). */
export async function createChallenge(ctx: RequestContext, communityId: string, raw: unknown): Promise<Challenge> {
  const community = await getCommunity(ctx, communityId);
  const { userId } = await requireRole(ctx, community.id, 'moderator');
  const input = parseInput(createInput, raw);
  const now = ctx.app.clock();
  const challenge = await repo.insertChallenge(ctx.app.database.db, {
    communityId: community.id,
    title: input.title,
    description: input.description ?? '',
    durationDays: input.durationDays,
    challengeType: input.challengeType,
    accessType: input.accessType,
    priceCents: input.accessType === 'paid' ? input.price! : 0,
    currency: input.currency ?? DEFAULT_CURRENCY,
    xpReward: input.xpReward ?? 0,
    createdBy: userId,
    createdAt: now,
    updatedAt: now,
  });
  challengeLoader(ctx).prime(challenge.id, challenge);
  return challenge;
}

/** What enrolling answered: the enrollment, or for a paid challenge not yet paid, the pending order. */
export interface EnrollResult {
  status: 'active' | 'completed' | 'pending_payment';
  created: boolean;
  enrollment: ChallengeEnrollment | null;
  order: Order | null;
  checkout: CheckoutInfo | null;
}

/**
 * Enrolls the caller (members of the tribe only). Free and members-only challenges start at once (day 1
 * opens now); a paid one answers its pending order (the same on every call) and starts when it is paid.
 * Enrolling again returns the existing enrollment.
 */
export async function enroll(ctx: RequestContext, communityId: string | null | undefined, challengeId: string): Promise<EnrollResult> {
  const challenge = await getChallenge(ctx, challengeId, communityId);
  const { userId } = await requireRole(ctx, challenge.communityId, 'member');
  const db = ctx.app.database.db;
  const existing = await viewerEnrollment(ctx, challenge.id);
  if (existing) return { status: existing.status, created: false, enrollment: existing, order: null, checkout: null };
  if (challenge.accessType === 'paid') {
    const { order, checkout } = await startCheckout(ctx.app, {
      communityId: challenge.communityId,
      buyerId: userId,
      itemType: 'challenge',
      itemId: challenge.id,
      amountCents: challenge.priceCents,
      currency: challenge.currency,
    });
    return { status: 'pending_payment', created: false, enrollment: null, order, checkout };
  }
  const now = ctx.app.clock();
  const inserted = await repo.insertEnrollment(db, {
    challengeId: challenge.id,
    communityId: challenge.communityId,
    userId,
    status: 'active',
    startedAt: now,
    createdAt: now,
  });
  const enrollment = inserted ?? (await repo.enrollmentsOf(db, userId, [challenge.id]))[0];
  viewerEnrollmentLoader(ctx).clear(challenge.id).prime(challenge.id, enrollment);
  return { status: enrollment.status, created: !!inserted, enrollment, order: null, checkout: null };
}

export interface CheckinResult {
  checkin: ChallengeCheckin;
  progress: ChallengeProgress;
}

/**
 * Records the caller's check-in for `day_number` (1 to duration_days). A day not open yet is refused
 * (400 `day_not_open`); a day already checked in is 409 `already_checked_in`; earlier days may still be
 * checked in. Each check-in awards `CHECKIN_XP` once; checking in on every day completes the enrollment and
 * awards the challenge's `xp_reward` once.
 */
export async function checkIn(
  ctx: RequestContext,
  communityId: string | null | undefined,
  challengeId: string,
  raw: unknown,
): Promise<CheckinResult> {
  requireUser(ctx);
  const challenge = await getChallenge(ctx, challengeId, communityId);
  // A former member keeps the enrollment row, not the rights; a muted member cannot check in (`member_muted`).
  await requireActiveMember(ctx, challenge.communityId);
  const found = await viewerEnrollment(ctx, challenge.id);
  if (!found) throw notEnrolled();
  const input = parseInput(checkinInput, raw);
  if (input.dayNumber < 1 || input.dayNumber > challenge.durationDays) {
    throw invalid('invalid_input', `day_number must be from 1 to ${challenge.durationDays}.`, [
      { field: 'day_number', message: `must be from 1 to ${challenge.durationDays}` },
    ]);
  }
  const now = ctx.app.clock();
  const today = dayAt(found.startedAt, now);
  if (input.dayNumber > today) {
    throw invalid('day_not_open', `Day ${input.dayNumber} is not open yet: today is day ${Math.max(today, 0)} of this enrollment.`);
  }
  const tags = [...new Set(input.tags ?? [])];
  const result = await ctx.app.database.db.transaction(async (tx) => {
    const locked = await repo.lockEnrollment(tx, found.id);
    const inserted = await repo.insertCheckin(tx, {
      enrollmentId: locked.id,
      challengeId: challenge.id,
      userId: locked.userId,
      dayNumber: input.dayNumber,
      content: input.content,
      tags,
      xpAwarded: CHECKIN_XP,
      createdAt: now,
    });
    if (!inserted) throw conflict('already_checked_in', `Day ${input.dayNumber} is checked in already.`);
    const days = await repo.checkedInDays(tx, locked.id);
    const award = (amount: number, source: string, sourceKey: string) =>
      awardXp(tx, { communityId: challenge.communityId, userId: locked.userId, amount, source, sourceKey });
    await award(CHECKIN_XP, CHALLENGE_CHECKIN, `${CHALLENGE_CHECKIN}:${inserted.id}`);
    const completes = locked.status === 'active' && days.length >= challenge.durationDays;
    if (completes) await award(challenge.xpReward, CHALLENGE_COMPLETED, `${CHALLENGE_COMPLETED}:${locked.id}`);
    const enrollment = await repo.updateEnrollment(tx, locked.id, {
      completedDays: days.length,
      streakRun: runEndingAtHighest(days),
      lastCheckinDay: days[0],
      lastCheckinAt: now,
      xpEarned: locked.xpEarned + CHECKIN_XP + (completes ? challenge.xpReward : 0),
      ...(completes ? { status: 'completed' as const, completedAt: now } : {}),
    });
    return { checkin: inserted, enrollment };
  });
  viewerEnrollmentLoader(ctx).clear(challenge.id).prime(challenge.id, result.enrollment);
  return { checkin: result.checkin, progress: progressOf(challenge, result.enrollment, now) };
}

/** A fully refunded challenge order takes its enrollment back (with its check-ins), in the refund's transaction: `AppDeps.revocations.challenge`. */
export const revokeChallengeOrder: RevocationHandler = async (tx, order) => {
  await repo.deleteEnrollmentOfOrder(tx, order.id);
};

/** A paid challenge order enrolls its buyer; day 1 opens at the payment: `AppDeps.fulfilments.challenge`. */
export const fulfilChallengeOrder: FulfilmentHandler = async (tx, order, paidAt) => {
  if (!order.buyerId || !order.productId) return;
  const [challenge] = await repo.findChallengesByIds(tx, [order.productId]);
  if (!challenge) return;
  await repo.insertEnrollment(tx, {
    challengeId: challenge.id,
    communityId: challenge.communityId,
    userId: order.buyerId,
    status: 'active',
    orderId: order.id,
    startedAt: paidAt,
    createdAt: paidAt,
  });
};
