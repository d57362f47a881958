// Test data factories: users, tribes and memberships, API keys, webhook endpoints, posts, events and orders.
// Each makes unique data (`unique()`) and takes overrides, so test files run in parallel on one database
// without truncating tables. Most go through the public APIs; a few insert rows that no API creates yet.
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { gql, sqlRows, type Receiver, type TestService } from './support.js';

/** A short unique suffix so tests never collide on unique columns. */
export const unique = (): string => randomBytes(5).toString('hex');

/** A well-formed UUID that names nothing. */
export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

// ---------------------------------------------------------------------------------------------------------
// Users

export interface TestUser {
  id: string;
  email: string;
  username: string;
  password: string;
  /** `svc_session=<token>` for the Cookie header. */
  cookie: string;
}

/** A user with a resource-API access token too. */
export type Actor = TestUser & { token: string };

/** Signs a new user up through the Application API. */
export async function signupUser(t: TestService, overrides: Partial<{ username: string; displayName: string; inviteCode: string }> = {}): Promise<TestUser> {
  const u = unique();
  const body = {
    email: `user_${u}@example.com`,
    password: 'correct horse battery',
    username: overrides.username ?? `u_${u}`,
    displayName: overrides.displayName ?? `User ${u}`,
    ...(overrides.inviteCode ? { inviteCode: overrides.inviteCode } : {}),
  };
  const res = await t.api.post('/auth/signup').send(body);
  if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${JSON.stringify(res.body)}`);
  const cookie = String(res.headers['set-cookie'][0]).split(';')[0];
  return { id: res.body.user.id, email: body.email, username: body.username, password: body.password, cookie };
}

/** A resource-API access token for the user. */
export async function accessToken(t: TestService, user: TestUser): Promise<string> {
  const res = await t.api.post('/v1/auth/login').send({ email: user.email, password: user.password });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.access_token;
}

/** A new user with an access token. */
export async function actor(t: TestService): Promise<Actor> {
  const user = await signupUser(t);
  return { ...user, token: await accessToken(t, user) };
}

/** A fresh access token (after the test clock moved past the old one's hour). */
export async function refreshToken(t: TestService, who: Actor): Promise<Actor> {
  who.token = await accessToken(t, who);
  return who;
}

/** The people of a staffed tribe (see `staffedTribe`). */
export interface Cast {
  owner: Actor;
  admin: Actor;
  moderator: Actor;
  member: Actor;
  member2: Actor;
  outsider: Actor;
}

/** Six new actors, to staff tribes with. */
export async function crew(t: TestService): Promise<Cast> {
  const [owner, admin, moderator, member, member2, outsider] = await Promise.all(Array.from({ length: 6 }, () => actor(t)));
  return { owner, admin, moderator, member, member2, outsider };
}

// ---------------------------------------------------------------------------------------------------------
// Tribes and memberships

/** Creates a tribe owned by `owner` through GraphQL. */
export async function createTribe(t: TestService, owner: TestUser, overrides: Record<string, unknown> = {}) {
  const input = { name: `Tribe ${unique()}`, handle: `t-${unique()}`, ...overrides };
  const out = await gql(t, owner, 'mutation($input: CreateCommunityInput!){ createCommunity(input: $input){ id handle name isPublic } }', { input });
  if (out.errors) throw new Error(`createCommunity failed: ${JSON.stringify(out.errors)}`);
  return out.data.createCommunity as { id: string; handle: string; name: string; isPublic: boolean };
}

/** Joins `user` to the tribe (with an invite code for a private one). */
export async function join(t: TestService, user: TestUser, handle: string, inviteCode?: string) {
  const out = await gql(t, user, 'mutation($h: String!, $c: String){ joinCommunity(handle: $h, inviteCode: $c){ id role } }', { h: handle, c: inviteCode });
  if (out.errors) throw new Error(`join failed: ${JSON.stringify(out.errors)}`);
  return out.data.joinCommunity as { id: string; role: string };
}

/** Sets a member's role as `actor`. */
export async function setRole(t: TestService, actor: TestUser, communityId: string, userId: string, role: string) {
  const out = await gql(t, actor, 'mutation($c: ID!, $u: ID!, $r: String!){ updateMemberRole(communityId: $c, userId: $u, role: $r){ role } }', {
    c: communityId,
    u: userId,
    r: role,
  });
  if (out.errors) throw new Error(`setRole failed: ${JSON.stringify(out.errors)}`);
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

/** Sets a membership's joinedAt directly. */
export async function setJoinedAt(t: TestService, communityId: string, userId: string, joinedAt: string): Promise<void> {
  await sqlRows(t, sql`update members set joined_at = ${joinedAt}::timestamptz where community_id = ${communityId} and user_id = ${userId}`);
}

// ---------------------------------------------------------------------------------------------------------
// API keys and webhook endpoints

/** Every Platform API scope. */
export const ALL_SCOPES = ['members:read', 'posts:read', 'events:read', 'orders:read', 'community:read'];

export interface CreatedKey {
  id: string;
  name: string;
  key: string;
  keyPrefix: string;
  scopes: string[];
}

/** Creates an API key through the control plane as `owner` (must be owner or admin of the tribe). */
export async function createKey(t: TestService, owner: TestUser, handle: string, scopes: string[] = ALL_SCOPES, name = `key ${unique()}`): Promise<CreatedKey> {
  const res = await t.api.post(`/communities/${handle}/api-keys`).set('cookie', owner.cookie).send({ name, scopes });
  if (res.status !== 201) throw new Error(`createKey failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as CreatedKey;
}

/** Registers an endpoint through the control plane as `owner`; the receiver learns its secret. */
export async function registerEndpoint(
  t: TestService,
  owner: TestUser,
  handle: string,
  body: { url: string; events?: string[]; description?: string; enabled?: boolean },
  receiver?: Receiver,
): Promise<{ id: string; secret: string; url: string; events: string[]; enabled: boolean }> {
  const res = await t.api.post(`/communities/${handle}/webhooks`).set('cookie', owner.cookie).send({ events: ['member.joined'], ...body });
  if (res.status !== 201) throw new Error(`register endpoint failed: ${res.status} ${JSON.stringify(res.body)}`);
  if (receiver) receiver.secret = res.body.secret;
  return res.body;
}

// ---------------------------------------------------------------------------------------------------------
// Posts, events and orders

/** A post created through GraphQL as `author`. */
export async function createPost(t: TestService, author: TestUser, communityId: string, input: Record<string, unknown> = {}): Promise<{ id: string }> {
  const out = await gql(t, author, 'mutation($c: ID!, $i: CreatePostInput!){ createPost(communityId: $c, input: $i){ id } }', {
    c: communityId,
    i: { content: `<p>post ${unique()}</p>`, ...input },
  });
  if (out.errors) throw new Error(`createPost failed: ${JSON.stringify(out.errors)}`);
  return out.data.createPost;
}

/** Sets a post's timestamps directly (the clock of the tests decides the sort order, not insertion speed). */
export async function setPostTimes(t: TestService, id: string, times: { createdAt?: string; publishedAt?: string | null }): Promise<void> {
  if (times.createdAt) await sqlRows(t, sql`update posts set created_at = ${times.createdAt}::timestamptz where id = ${id}`);
  if (times.publishedAt !== undefined) await sqlRows(t, sql`update posts set published_at = ${times.publishedAt}::timestamptz where id = ${id}`);
}

/** Inserts a calendar event row directly (for the Platform API's read tests). */
export async function seedEvent(t: TestService, communityId: string, values: Partial<Record<string, unknown>> = {}): Promise<{ id: string }> {
  const v = {
    title: `Event ${unique()}`,
    description: 'A session',
    eventType: 'online',
    location: null,
    startsAt: '2030-05-01T18:00:00.000Z',
    endsAt: '2030-05-01T19:00:00.000Z',
    maxAttendees: null,
    priceCents: 0,
    currency: 'BRL',
    ...values,
  };
  const [row] = await sqlRows<{ id: string }>(
    t,
    sql`insert into tribe_events (community_id, title, description, event_type, location, starts_at, ends_at, max_attendees, price_cents, currency)
        values (${communityId}, ${v.title}, ${v.description}, ${v.eventType}, ${v.location}, ${v.startsAt}::timestamptz, ${v.endsAt}::timestamptz,
                ${v.maxAttendees}, ${v.priceCents}, ${v.currency}) returning id`,
  );
  return row;
}

/** Inserts an order row directly, paid by default (for the Platform API's read tests). */
export async function seedOrder(t: TestService, communityId: string, buyerId: string | null, values: Partial<Record<string, unknown>> = {}): Promise<{ id: string }> {
  const v = {
    productType: 'course',
    productId: null,
    amountCents: 4990,
    currency: 'BRL',
    status: 'paid',
    paidAt: '2030-01-02T10:00:05.000Z',
    createdAt: '2030-01-02T10:00:00.000Z',
    ...values,
  };
  const [row] = await sqlRows<{ id: string }>(
    t,
    sql`insert into orders (community_id, buyer_id, product_type, product_id, amount_cents, currency, status, paid_at, created_at, updated_at)
        values (${communityId}, ${buyerId}, ${v.productType}, ${v.productId}, ${v.amountCents}, ${v.currency}, ${v.status},
                ${v.paidAt}::timestamptz, ${v.createdAt}::timestamptz, ${v.createdAt}::timestamptz) returning id`,
  );
  return row;
}

/** Marks an order paid through the manual provider's GraphQL operation, as `who`. */
export async function markPaid(t: TestService, who: TestUser, orderId: string) {
  return gql(t, who, 'mutation($o: ID!){ markOrderPaid(orderId: $o){ id status paidAt } }', { o: orderId });
}
