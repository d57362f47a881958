// Shared factories of the course, challenge, wins, affiliate and checkout tests.
import { expect } from '@jest/globals';
import { sql, type SQL } from 'drizzle-orm';
import { accessToken, createTribe, gql, join, setRole, signupUser, type TestService, type TestUser } from './helpers.js';

export type Actor = TestUser & { token: string };

export const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/** A clock the test moves: real time plus an offset, so tokens issued "now" stay valid. */
export function movableClock() {
  let offsetMs = 0;
  return {
    now: () => new Date(Date.now() + offsetMs),
    advance(ms: number) {
      offsetMs += ms;
    },
    advanceDays(days: number) {
      offsetMs += days * 24 * 60 * 60 * 1000;
    },
  };
}

export const bearer = (who: Actor) => ({ authorization: `Bearer ${who.token}` });

/** Asserts a resource-API error: status, code, and the `{error: {code, message}}` envelope. */
export function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(res.body).toEqual({ error: expect.objectContaining({ code, message: expect.any(String) }) });
}

export async function rows(t: TestService, query: SQL): Promise<Record<string, any>[]> {
  const result = (await t.deps.database.db.execute(query)) as unknown as { rows: Record<string, any>[] };
  return result.rows;
}

export async function countOf(t: TestService, query: SQL): Promise<number> {
  return Number((await rows(t, query))[0].n);
}

export async function actor(t: TestService): Promise<Actor> {
  const user = await signupUser(t);
  return { ...user, token: await accessToken(t, user) };
}

/** A fresh access token (after the test clock moved past the old one's hour). */
export async function refreshToken(t: TestService, who: Actor): Promise<Actor> {
  who.token = await accessToken(t, who);
  return who;
}

export interface Cast {
  owner: Actor;
  admin: Actor;
  moderator: Actor;
  member: Actor;
  member2: Actor;
  outsider: Actor;
}

export async function crew(t: TestService): Promise<Cast> {
  const [owner, admin, moderator, member, member2, outsider] = await Promise.all(Array.from({ length: 6 }, () => actor(t)));
  return { owner, admin, moderator, member, member2, outsider };
}

/** A new tribe of `cast`: owner, admin, moderator and two members; the outsider never joins. */
export async function staffedTribe(t: TestService, cast: Cast, options: { isPublic?: boolean } = {}) {
  const tribe = await createTribe(t, cast.owner, { isPublic: options.isPublic ?? true });
  let code: string | undefined;
  if (!tribe.isPublic) {
    const invite = await gql(t, cast.owner, 'mutation($c: ID!){ createInvite(communityId: $c) }', { c: tribe.id });
    code = invite.data.createInvite;
  }
  for (const m of [cast.admin, cast.moderator, cast.member, cast.member2]) await join(t, m, tribe.handle, code);
  await setRole(t, cast.owner, tribe.id, cast.admin.id, 'admin');
  await setRole(t, cast.owner, tribe.id, cast.moderator.id, 'moderator');
  return { ...cast, tribe };
}

export async function memberXp(t: TestService, communityId: string, userId: string) {
  return (await rows(t, sql`select xp, level from members where community_id = ${communityId} and user_id = ${userId}`))[0];
}

export async function xpAwards(t: TestService, communityId: string, userId: string, source: string) {
  return rows(
    t,
    sql`select amount, source_key from xp_awards where community_id = ${communityId} and user_id = ${userId} and source = ${source} order by created_at, source_key`,
  );
}

export async function eventsOf(t: TestService, communityId: string, type: string) {
  return rows(t, sql`select data from outbox_events where community_id = ${communityId} and type = ${type} order by created_at`);
}

/** Marks an order paid through the manual provider's GraphQL operation, as `who`. */
export async function markPaid(t: TestService, who: TestUser, orderId: string) {
  return gql(t, who, 'mutation($o: ID!){ markOrderPaid(orderId: $o){ id status paidAt } }', { o: orderId });
}
