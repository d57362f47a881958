/** Factories and helpers shared by the Platform API and API-key tests. */
import { expect } from '@jest/globals';
import { sql, type SQL } from 'drizzle-orm';
import type request from 'supertest';
import { gql, unique, type TestService, type TestUser } from './helpers.js';

export const ALL_SCOPES = ['members:read', 'posts:read', 'events:read', 'orders:read', 'community:read'];
export const KEY_FORMAT = /^svc_sk_[A-Za-z0-9_-]{43}$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The exact 401 body of the Platform API. */
export const UNAUTHORIZED = { error: { type: 'unauthorized', message: 'Send a valid API key: Authorization: Bearer <key>.' } };
/** The exact 404 body of an unknown /v1 path. */
export const NO_ENDPOINT = { error: { type: 'not_found', message: 'No such Platform API endpoint.' } };
/** The exact 405 body of a method other than GET on a Platform path. */
export const READ_ONLY = { error: { type: 'not_found', message: 'The Platform API is read-only: use GET.' } };
/** The exact 403 body for a key without `scope`. */
export const forbiddenBody = (scope: string) => ({ error: { type: 'forbidden', message: `This API key lacks the ${scope} scope.` } });
/** The exact 429 body at the default limit. */
export const RATE_LIMITED = {
  error: { type: 'rate_limited', message: 'Too many requests: at most 120 per 60 seconds per key. Retry after 60 seconds.' },
};

/** Rows of a SQL query on the service's database. */
export async function rows<T = Record<string, any>>(t: TestService, query: SQL): Promise<T[]> {
  return ((await t.deps.database.db.execute(query)) as unknown as { rows: T[] }).rows;
}

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

/** GET a Platform API path with the key as `Authorization: Bearer`. */
export const platformGet = (t: TestService, path: string, key: string): request.Test => t.api.get(path).set('authorization', `Bearer ${key}`);

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
  if (times.createdAt) await rows(t, sql`update posts set created_at = ${times.createdAt}::timestamptz where id = ${id}`);
  if (times.publishedAt !== undefined) await rows(t, sql`update posts set published_at = ${times.publishedAt}::timestamptz where id = ${id}`);
}

/** Sets a membership's joinedAt directly. */
export async function setJoinedAt(t: TestService, communityId: string, userId: string, joinedAt: string): Promise<void> {
  await rows(t, sql`update members set joined_at = ${joinedAt}::timestamptz where community_id = ${communityId} and user_id = ${userId}`);
}

/** Inserts a calendar event (no API creates events yet). */
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
  const [row] = await rows<{ id: string }>(
    t,
    sql`insert into tribe_events (community_id, title, description, event_type, location, starts_at, ends_at, max_attendees, price_cents, currency)
        values (${communityId}, ${v.title}, ${v.description}, ${v.eventType}, ${v.location}, ${v.startsAt}::timestamptz, ${v.endsAt}::timestamptz,
                ${v.maxAttendees}, ${v.priceCents}, ${v.currency}) returning id`,
  );
  return row;
}

/** Inserts an order (no API creates orders yet). */
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
  const [row] = await rows<{ id: string }>(
    t,
    sql`insert into orders (community_id, buyer_id, product_type, product_id, amount_cents, currency, status, paid_at, created_at, updated_at)
        values (${communityId}, ${buyerId}, ${v.productType}, ${v.productId}, ${v.amountCents}, ${v.currency}, ${v.status},
                ${v.paidAt}::timestamptz, ${v.createdAt}::timestamptz, ${v.createdAt}::timestamptz) returning id`,
  );
  return row;
}

/** Headers of a response that must never appear on the Platform API. */
export function expectNoCorsOrRateHeaders(headers: Record<string, unknown>): void {
  const names = Object.keys(headers).map((h) => h.toLowerCase());
  expect(names.filter((h) => h.startsWith('access-control-') || h.startsWith('x-ratelimit') || h.startsWith('ratelimit'))).toEqual([]);
}
