import { and, count, desc, eq, getTableColumns, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import { preparedOnce, rememberedPerDatabase, SteppedKeys, type Executor } from '../../db/src/index.js';
import { communityInvites, memberSanctions, members, xpAwards, type Member, type MemberSanction, type Role } from './members.tables.js';

/** Inserts a membership unless one exists; returns the new row, or undefined when it existed. */
export async function insertIfAbsent(db: Executor, communityId: string, userId: string, role: Role): Promise<Member | undefined> {
  const [row] = await db.insert(members).values({ communityId, userId, role }).onConflictDoNothing().returning();
  return row;
}

export async function find(db: Executor, communityId: string, userId: string): Promise<Member | undefined> {
  const [row] = await db
    .select()
    .from(members)
    .where(and(eq(members.communityId, communityId), eq(members.userId, userId)))
    .limit(1);
  return row;
}

export async function findByIds(db: Executor, ids: readonly string[]): Promise<Member[]> {
  if (ids.length === 0) return [];
  return db.select().from(members).where(inArray(members.id, [...ids]));
}

const rolesOf = preparedOnce((db) =>
  db
    .select({ communityId: members.communityId, role: members.role })
    .from(members)
    .where(eq(members.userId, sql.placeholder('userId')))
    .prepare('members_roles_of_user'),
);

/** Every tribe a user belongs to and their role in it (one prepared statement; the home feed iterates these). */
export async function rolesOfUser(db: Executor, userId: string): Promise<Array<{ communityId: string; role: Role }>> {
  return rolesOf(db).execute({ userId });
}

const forUser = preparedOnce((db) =>
  db
    .select()
    .from(members)
    .where(and(eq(members.userId, sql.placeholder('userId')), sql`${members.communityId} = any(${sql.placeholder('communityIds')}::uuid[])`))
    .prepare('members_for_user'),
);

/** A user's memberships among `communityIds` (every role check of a request): one prepared statement. */
export async function findForUser(db: Executor, userId: string, communityIds: readonly string[]): Promise<Member[]> {
  if (communityIds.length === 0) return [];
  return forUser(db).execute({ userId, communityIds: [...communityIds] });
}

/** A user's roles per tribe (null: not a member), remembered across requests until a trigger announces `m:<user id>`. */
const rememberedRoles = rememberedPerDatabase<Role | null>('m');

/**
 * The user's role in each of `communityIds`, in order (null: not a member): every role check of a request. Through
 * the database's root handle, remembered across requests (see `Remembered`); otherwise `findForUser`'s statement.
 */
export async function rolesIn(db: Executor, userId: string, communityIds: readonly string[]): Promise<Array<Role | null>> {
  const load = async (ids: string[]) => {
    const byCommunity = new Map((await findForUser(db, userId, ids)).map((r) => [r.communityId, r.role]));
    return ids.map((id) => byCommunity.get(id) ?? null);
  };
  const cache = rememberedRoles(db);
  return cache ? cache.read(userId, communityIds, load) : load([...communityIds]);
}

export async function countByCommunity(db: Executor, communityIds: readonly string[]): Promise<Map<string, number>> {
  if (communityIds.length === 0) return new Map();
  const rows = await db
    .select({ communityId: members.communityId, n: count() })
    .from(members)
    .where(inArray(members.communityId, [...communityIds]))
    .groupBy(members.communityId);
  return new Map(rows.map((r) => [r.communityId, Number(r.n)]));
}

/**
 * An SQL expression: the number of members of the tribe whose id is `communityId` (a column or expression of the
 * caller's query), counting only those who joined at or after `joinedSince` when given. Discover sorts by it
 * (LARGEST: every member; TRENDING: joins of the last 7 days); each evaluation is one range scan of
 * `members_community_joined_idx`.
 */
export const memberCountExpr = (communityId: SQL, joinedSince?: Date): SQL =>
  sql`(select count(*) from members m where m.community_id = ${communityId}${
    joinedSince ? sql` and m.joined_at >= ${joinedSince.toISOString()}::timestamptz` : sql``
  })::int`;

export async function list(
  db: Executor,
  communityId: string,
  filter: { role?: Role; userIds?: string[] },
  limit: number,
  offset: number,
): Promise<Member[]> {
  return db
    .select()
    .from(members)
    .where(
      and(
        eq(members.communityId, communityId),
        filter.role ? eq(members.role, filter.role) : undefined,
        // One array parameter, however many users matched (a bind per id would hit PostgreSQL's 65535 limit).
        filter.userIds ? sql`${members.userId} = any(${sql.param(filter.userIds)}::uuid[])` : undefined,
      ),
    )
    .orderBy(desc(members.joinedAt), desc(members.id))
    .limit(limit)
    .offset(offset);
}

/**
 * A page of a tribe's members, newest first, as one prepared statement (`limit` and `offset` placeholders): the
 * page's ids by an index-only scan of `members_community_joined_idx` (where `filter` holds, if any), then their rows.
 */
const deferredPage = (db: Executor, filter: SQL | undefined, name: string) =>
  db
    .select()
    .from(members)
    .where(
      inArray(
        members.id,
        db
          .select({ id: members.id })
          .from(members)
          .where(and(eq(members.communityId, sql.placeholder('communityId')), filter))
          .orderBy(desc(members.joinedAt), desc(members.id))
          .limit(sql.placeholder('limit'))
          .offset(sql.placeholder('offset')),
      ),
    )
    .orderBy(desc(members.joinedAt), desc(members.id))
    .prepare(name);

const pageOfCommunity = preparedOnce((db) => deferredPage(db, undefined, 'members_page_of_community'));

/** Deep pages seek from a remembered key every `MEMBER_PAGE_STEP` rows (see `pageOfMembers`). */
export const MEMBER_PAGE_STEP = 5_000;
/** How long a remembered key stands for its offset. */
export const MEMBER_PAGE_KEY_TTL_MS = 5_000;

/** The sort key of the row at an offset: `joined_at` as PostgreSQL's text (microseconds kept) and the id. */
interface PageKey {
  joinedAt: string;
  id: string;
}
const pageKeys = new SteppedKeys<PageKey>(MEMBER_PAGE_STEP, MEMBER_PAGE_KEY_TTL_MS);

const pageAfterKey = preparedOnce((db) =>
  deferredPage(
    db,
    sql`(${members.joinedAt}, ${members.id}) <= (${sql.placeholder('joinedAt')}::timestamptz, ${sql.placeholder('id')}::uuid)`,
    'members_page_after_key',
  ),
);

/**
 * Members of a tribe, newest first (the Platform API list): a statement prepared once per database. The offset is
 * taken over ids alone, by an index-only scan of `members_community_joined_idx`, and only the page's rows are read
 * (a deferred join): a deep page skips index entries, not table rows.
 *
 * An offset of `MEMBER_PAGE_STEP` or more seeks instead: the sort key of the row at the step below the offset is
 * remembered for `MEMBER_PAGE_KEY_TTL_MS` (by the clock passed), and the page is read from that key with the rest
 * of the offset (under `MEMBER_PAGE_STEP` entries), so page 5,000 costs about what page 50 costs. A key is counted
 * from the key of the step below when that one stands, else from the start once. While a key stands, a member who
 * joined or left above it shifts the deep pages by one, as a plain offset list does between two requests (the
 * Platform API's paging allows an item seen twice or missed while records change); the rows are always read now.
 */
export async function pageOfMembers(db: Executor, communityId: string, limit: number, offset: number, now: Date): Promise<Member[]> {
  if (offset < MEMBER_PAGE_STEP) return pageOfCommunity(db).execute({ communityId, limit, offset });
  const step = offset - (offset % MEMBER_PAGE_STEP);
  const key = await pageKeys.at(db, communityId, step, now.getTime(), (from, skip) => findKey(db, communityId, from, skip));
  if (!key) return [];
  return pageAfterKey(db).execute({ communityId, joinedAt: key.joinedAt, id: key.id, limit, offset: offset - step });
}

/** The sort key of the row `skip` entries after `from` (included), or from the start. */
async function findKey(db: Executor, communityId: string, from: PageKey | undefined, skip: number): Promise<PageKey | undefined> {
  const [row] = await db
    .select({ joinedAt: sql<string>`${members.joinedAt}::text`, id: members.id })
    .from(members)
    .where(
      and(
        eq(members.communityId, communityId),
        from ? sql`(${members.joinedAt}, ${members.id}) <= (${from.joinedAt}::timestamptz, ${from.id}::uuid)` : undefined,
      ),
    )
    .orderBy(desc(members.joinedAt), desc(members.id))
    .limit(1)
    .offset(skip);
  return row;
}

export async function setRole(db: Executor, id: string, role: Role): Promise<Member> {
  const [row] = await db.update(members).set({ role }).where(eq(members.id, id)).returning();
  return row;
}

export async function remove(db: Executor, id: string): Promise<boolean> {
  const rows = await db.delete(members).where(eq(members.id, id)).returning({ id: members.id });
  return rows.length === 1;
}

export async function insertInvite(db: Executor, code: string, communityId: string, createdBy: string): Promise<void> {
  await db.insert(communityInvites).values({ code, communityId, createdBy });
}

export async function findLiveInvite(db: Executor, code: string) {
  const [row] = await db
    .select()
    .from(communityInvites)
    .where(and(eq(communityInvites.code, code), isNull(communityInvites.revokedAt)))
    .limit(1);
  return row;
}

// ---- XP ----

const membership = (communityId: string, userId: string) => and(eq(members.communityId, communityId), eq(members.userId, userId));

/** Locks the membership row (`FOR UPDATE`) until the transaction ends; false when the user is not a member. */
export async function lockMembership(tx: Executor, communityId: string, userId: string): Promise<boolean> {
  const [row] = await tx.select({ userId: members.userId }).from(members).where(membership(communityId, userId)).for('update');
  return !!row;
}

/** Records an XP award unless one with its `sourceKey` exists; true when it was recorded. */
export async function insertXpAwardIfNew(tx: Executor, award: typeof xpAwards.$inferInsert): Promise<boolean> {
  const inserted = await tx.insert(xpAwards).values(award).onConflictDoNothing({ target: xpAwards.sourceKey }).returning({ id: xpAwards.id });
  return inserted.length > 0;
}

/** Adds `amount` to the member's XP and sets the level of the new total (level = floor(sqrt(xp / 100)) + 1). */
export async function addXp(tx: Executor, communityId: string, userId: string, amount: number): Promise<void> {
  await tx
    .update(members)
    .set({
      xp: sql`${members.xp} + ${amount}`,
      level: sql`floor(sqrt((${members.xp} + ${amount}) / 100.0))::int + 1`,
    })
    .where(membership(communityId, userId));
}

/** Records activity of a member in a tribe (never moves the time backwards); nothing when not a member. */
export async function touch(db: Executor, communityId: string, userId: string, at: Date): Promise<void> {
  await db
    .update(members)
    .set({ lastActiveAt: sql`greatest(${members.lastActiveAt}, ${at.toISOString()}::timestamptz)` })
    .where(and(eq(members.communityId, communityId), eq(members.userId, userId)));
}

/** Which of `userIds` are members of the tribe, in one statement. */
export async function memberUserIdsAmong(db: Executor, communityId: string, userIds: readonly string[]): Promise<string[]> {
  if (userIds.length === 0) return [];
  const rows = await db
    .select({ userId: members.userId })
    .from(members)
    .where(and(eq(members.communityId, communityId), inArray(members.userId, [...userIds])));
  return rows.map((r) => r.userId);
}

/** The user ids of a tribe's members with one of `roles`, in one statement. */
export async function userIdsWithRole(db: Executor, communityId: string, roles: readonly Role[]): Promise<string[]> {
  const rows = await db
    .select({ userId: members.userId })
    .from(members)
    .where(and(eq(members.communityId, communityId), inArray(members.role, [...roles])));
  return rows.map((r) => r.userId);
}

/** True when one tribe has every one of `userIds` (distinct ids) as a member, in one statement. */
export async function haveCommonTribe(db: Executor, userIds: readonly string[], unmuted?: { userId: string; at: Date }): Promise<boolean> {
  if (userIds.length === 0) return false;
  // With `unmuted`: only tribes where that user is not muted at `at` count.
  const notMuted = unmuted
    ? sql`not exists (select 1 from ${memberSanctions} s where s.community_id = ${members.communityId} and s.user_id = ${unmuted.userId}
        and s.muted_until > ${unmuted.at.toISOString()}::timestamptz)`
    : undefined;
  const rows = await db
    .select({ communityId: members.communityId })
    .from(members)
    .where(and(inArray(members.userId, [...userIds]), notMuted))
    .groupBy(members.communityId)
    .having(sql`count(*) = ${userIds.length}`)
    .limit(1);
  return rows.length > 0;
}

/** Member user ids of a tribe after `afterUserId` in user-id order (the `(community_id, user_id)` unique index). */
export async function memberUserIdsPage(db: Executor, communityId: string, afterUserId: string | null, limit: number): Promise<string[]> {
  const rows = await db
    .select({ userId: members.userId })
    .from(members)
    .where(and(eq(members.communityId, communityId), afterUserId ? sql`${members.userId} > ${afterUserId}` : undefined))
    .orderBy(members.userId)
    .limit(limit);
  return rows.map((r) => r.userId);
}

// ---- memberships of a user (`User.memberships`) ----

/** The ids of the tribes a user belongs to. */
export async function communityIdsOf(db: Executor, userId: string): Promise<string[]> {
  const rows = await db.select({ communityId: members.communityId }).from(members).where(eq(members.userId, userId));
  return rows.map((r) => r.communityId);
}

/** A membership with its activity time as an exact (microsecond) ISO string: the keyset position of the row. */
export type ActiveMember = Member & { activeKey: string };

/**
 * A page of a user's memberships, most recently active first (`last_active_at desc, id desc`, the index
 * `members_user_active_idx`), after the keyset position `after`, limited to `communityIds` unless null.
 * The key keeps the timestamp's microseconds, so rows that differ below a millisecond are neither skipped nor repeated.
 */
export async function membershipsOf(
  db: Executor,
  userId: string,
  communityIds: readonly string[] | null,
  after: readonly [string, string] | null,
  limit: number,
): Promise<ActiveMember[]> {
  return db
    .select({
      ...getTableColumns(members),
      activeKey: sql<string>`to_char(${members.lastActiveAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`,
    })
    .from(members)
    .where(
      and(
        eq(members.userId, userId),
        communityIds ? sql`${members.communityId} = any(${sql.param([...communityIds])}::uuid[])` : undefined,
        after ? sql`(${members.lastActiveAt}, ${members.id}) < (${after[0]}::timestamptz, ${after[1]}::uuid)` : undefined,
      ),
    )
    .orderBy(desc(members.lastActiveAt), desc(members.id))
    .limit(limit);
}

/** A user's mute and ban in a tribe, if any. */
export async function findSanction(db: Executor, communityId: string, userId: string): Promise<MemberSanction | undefined> {
  const [row] = await db
    .select()
    .from(memberSanctions)
    .where(and(eq(memberSanctions.communityId, communityId), eq(memberSanctions.userId, userId)))
    .limit(1);
  return row;
}

/** Sets (`undefined` leaves alone) the mute end and the ban time of a user in a tribe, creating the row when absent. */
export async function setSanction(
  db: Executor,
  communityId: string,
  userId: string,
  patch: { mutedUntil?: Date | null; bannedAt?: Date | null },
): Promise<void> {
  await db
    .insert(memberSanctions)
    .values({ communityId, userId, mutedUntil: patch.mutedUntil ?? null, bannedAt: patch.bannedAt ?? null })
    .onConflictDoUpdate({ target: [memberSanctions.communityId, memberSanctions.userId], set: patch });
}

/** Removes a user's membership of a tribe by user id (a ban); false when they were not a member. */
export async function removeByUser(db: Executor, communityId: string, userId: string): Promise<boolean> {
  const rows = await db
    .delete(members)
    .where(and(eq(members.communityId, communityId), eq(members.userId, userId)))
    .returning({ id: members.id });
  return rows.length > 0;
}
