import { and, asc, desc, eq, inArray, sql } from 'drizzle-orm';
import { preparedOnce, rowsByIdRemembered, type Executor } from '../../db/src/index.js';
import {
  challengeCheckins,
  challengeEnrollments,
  challenges,
  type Challenge,
  type ChallengeCheckin,
  type ChallengeEnrollment,
} from './challenges.tables.js';

export async function insertChallenge(db: Executor, values: typeof challenges.$inferInsert): Promise<Challenge> {
  const [row] = await db.insert(challenges).values(values).returning();
  return row;
}

const challengesByIds = preparedOnce((db) =>
  db
    .select()
    .from(challenges)
    .where(sql`${challenges.id} = any(${sql.placeholder('ids')}::uuid[])`)
    .prepare('challenges_by_ids'),
);

/**
 * Challenges by id (every challenge lookup of a request): one array parameter, prepared once per database. Through
 * the database's root handle the rows are remembered across requests until a trigger announces `h:<id>`.
 */
const challengesByIdsRemembered = rowsByIdRemembered<Executor, Challenge>('h', (db, ids) => challengesByIds(db).execute({ ids }));

export async function findChallengesByIds(db: Executor, ids: readonly string[]): Promise<Challenge[]> {
  return ids.length === 0 ? [] : challengesByIdsRemembered(db, ids);
}

/** Challenges of a tribe, newest first. */
export async function listChallenges(db: Executor, communityId: string, limit: number, offset: number): Promise<Challenge[]> {
  return db
    .select()
    .from(challenges)
    .where(eq(challenges.communityId, communityId))
    .orderBy(desc(challenges.createdAt), desc(challenges.id))
    .limit(limit)
    .offset(offset);
}

/** The user's enrollments in the given challenges. */
export async function enrollmentsOf(db: Executor, userId: string, challengeIds: readonly string[]): Promise<ChallengeEnrollment[]> {
  if (challengeIds.length === 0) return [];
  return db
    .select()
    .from(challengeEnrollments)
    .where(and(eq(challengeEnrollments.userId, userId), inArray(challengeEnrollments.challengeId, [...challengeIds])));
}

/** Inserts the enrollment unless the user already has one in that challenge; returns it only when inserted. */
export async function insertEnrollment(
  db: Executor,
  values: typeof challengeEnrollments.$inferInsert,
): Promise<ChallengeEnrollment | undefined> {
  const [row] = await db
    .insert(challengeEnrollments)
    .values(values)
    .onConflictDoNothing({ target: [challengeEnrollments.challengeId, challengeEnrollments.userId] })
    .returning();
  return row;
}

/** The enrollment, locked for the rest of the transaction (serialises check-ins of one enrollment). */
export async function lockEnrollment(tx: Executor, id: string): Promise<ChallengeEnrollment> {
  const [row] = await tx.select().from(challengeEnrollments).where(eq(challengeEnrollments.id, id)).for('update');
  return row;
}

export async function updateEnrollment(
  db: Executor,
  id: string,
  patch: Partial<typeof challengeEnrollments.$inferInsert>,
): Promise<ChallengeEnrollment> {
  const [row] = await db.update(challengeEnrollments).set(patch).where(eq(challengeEnrollments.id, id)).returning();
  return row;
}

/** Inserts a check-in unless that day is checked in already; returns it only when inserted. */
export async function insertCheckin(db: Executor, values: typeof challengeCheckins.$inferInsert): Promise<ChallengeCheckin | undefined> {
  const [row] = await db
    .insert(challengeCheckins)
    .values(values)
    .onConflictDoNothing({ target: [challengeCheckins.enrollmentId, challengeCheckins.dayNumber] })
    .returning();
  return row;
}

export async function updateCheckin(db: Executor, id: string, patch: Partial<typeof challengeCheckins.$inferInsert>): Promise<ChallengeCheckin> {
  const [row] = await db.update(challengeCheckins).set(patch).where(eq(challengeCheckins.id, id)).returning();
  return row;
}

/** Day numbers the enrollment checked in, highest first. */
export async function checkedInDays(db: Executor, enrollmentId: string): Promise<number[]> {
  const rows = await db
    .select({ day: challengeCheckins.dayNumber })
    .from(challengeCheckins)
    .where(eq(challengeCheckins.enrollmentId, enrollmentId))
    .orderBy(desc(challengeCheckins.dayNumber));
  return rows.map((r) => r.day);
}

/** What a leaderboard entry is made of: the enrollment's columns the page shows or computes the streak from. */
const leaderboardColumns = {
  userId: challengeEnrollments.userId,
  status: challengeEnrollments.status,
  startedAt: challengeEnrollments.startedAt,
  completedDays: challengeEnrollments.completedDays,
  streakRun: challengeEnrollments.streakRun,
  lastCheckinDay: challengeEnrollments.lastCheckinDay,
  lastCheckinAt: challengeEnrollments.lastCheckinAt,
  xpEarned: challengeEnrollments.xpEarned,
};
export type LeaderboardRow = Pick<ChallengeEnrollment, keyof typeof leaderboardColumns>;

/**
 * One leaderboard page: completed days (desc), then XP earned in the challenge (desc), then who reached it
 * first (last check-in asc, never checked in last), then id. One statement prepared once per database, served
 * by `challenge_enrollments_leaderboard_idx`; it reads only the columns an entry is made of.
 */
export async function leaderboard(db: Executor, challengeId: string, limit: number, offset: number): Promise<LeaderboardRow[]> {
  return leaderboardPage(db).execute({ challengeId, limit, offset });
}

const leaderboardPage = preparedOnce((db) =>
  db
    .select(leaderboardColumns)
    .from(challengeEnrollments)
    .where(eq(challengeEnrollments.challengeId, sql.placeholder('challengeId')))
    .orderBy(
      desc(challengeEnrollments.completedDays),
      desc(challengeEnrollments.xpEarned),
      sql`${challengeEnrollments.lastCheckinAt} asc nulls last`,
      asc(challengeEnrollments.id),
    )
    .limit(sql.placeholder('limit'))
    .offset(sql.placeholder('offset'))
    .prepare('challenges_leaderboard_page'),
);

/** Deletes the enrollment an order granted (a full refund takes it back); true when there was one. */
export async function deleteEnrollmentOfOrder(tx: Executor, orderId: string): Promise<boolean> {
  const rows = await tx.delete(challengeEnrollments).where(eq(challengeEnrollments.orderId, orderId)).returning({ id: challengeEnrollments.id });
  return rows.length > 0;
}
