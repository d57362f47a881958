/**
 * GraphQL results to the Platform API's objects (spec 2.1, 2.2): camelCase, ISO 8601 UTC timestamps, money in
 * integer cents. These shapes are the v1 contract (rest-facade/openapi.json): add fields, never remove or rename.
 */

import type { PlatformEventsQuery, PlatformMeQuery, PlatformMemberQuery, PlatformOrdersQuery, PlatformPostsQuery } from '../generated.js';

type KeyIdentity = PlatformMeQuery['platformMe'];
type Member = PlatformMemberQuery['platformMember'];
type Post = PlatformPostsQuery['platformPosts']['items'][number];
type Event = PlatformEventsQuery['platformEvents']['items'][number];
type Order = PlatformOrdersQuery['platformOrders']['items'][number];
type Person = { id: string; username: string; displayName: string };

/** A person as other objects embed them (post author, order buyer); null when the account is gone. */
const person = (u: Person | null | undefined) => (u ? { userId: u.id, username: u.username, displayName: u.displayName } : null);

export const keyIdentityObject = (k: KeyIdentity) => ({
  object: 'api_key' as const,
  id: k.id,
  name: k.name,
  keyPrefix: k.keyPrefix,
  scopes: k.scopes,
  community: { id: k.community.id, handle: k.community.handle, name: k.community.name },
});

export const memberObject = (m: Member) => ({
  object: 'member' as const,
  userId: m.user.id,
  username: m.user.username,
  displayName: m.user.displayName,
  avatarUrl: m.user.avatarUrl ?? null,
  role: m.role,
  xp: m.xp,
  level: m.level,
  joinedAt: m.joinedAt,
});

export const postObject = (p: Post) => ({
  object: 'post' as const,
  id: p.id,
  author: person(p.author),
  body: p.body,
  mediaUrls: p.mediaUrls,
  isPinned: p.isPinned,
  publishedAt: p.publishedAt ?? p.createdAt,
  createdAt: p.createdAt,
  updatedAt: p.updatedAt,
});

export const eventObject = (e: Event) => ({
  object: 'event' as const,
  id: e.id,
  title: e.title,
  description: e.description,
  eventType: e.eventType,
  location: e.location ?? null,
  startsAt: e.startsAt,
  endsAt: e.endsAt,
  maxAttendees: e.maxAttendees ?? null,
  priceCents: e.priceCents,
  currency: e.currency,
  createdAt: e.createdAt,
  updatedAt: e.updatedAt,
});

export const orderObject = (o: Order) => ({
  object: 'order' as const,
  id: o.id,
  buyer: person(o.buyer),
  productType: o.productType,
  productId: o.productId ?? null,
  amountCents: o.amountCents,
  currency: o.currency,
  status: o.status,
  paidAt: o.paidAt ?? null,
  createdAt: o.createdAt,
  updatedAt: o.updatedAt,
});

/** The list envelope: no totals, `hasMore` when the page came back full. */
export const listObject = <I, T>(page: { items: I[]; page: number; pageSize: number; hasMore: boolean }, shape: (x: I) => T) => ({
  object: 'list' as const,
  data: page.items.map(shape),
  page: page.page,
  pageSize: page.pageSize,
  hasMore: page.hasMore,
});
