/** Fixed GraphQL documents the Platform API runs through the gateway (never built from input). */

import { restDocument } from '../typed-document.js';

const PERSON = 'id username displayName';
const MEMBER = 'role xp level joinedAt user { id username displayName avatarUrl }';
const POST = `id author { ${PERSON} } body mediaUrls isPinned publishedAt createdAt updatedAt`;
const EVENT = 'id title description eventType location startsAt endsAt maxAttendees priceCents currency createdAt updatedAt';
const ORDER = `id buyer { ${PERSON} } productType productId amountCents currency status paidAt createdAt updatedAt`;
const PAGE = 'page pageSize hasMore';

export const PlatformDocs = {
  me: restDocument('query PlatformMe { platformMe { id name keyPrefix scopes community { id handle name } } }'),
  members: restDocument(`query PlatformMembers($page: Int, $pageSize: Int) {
    platformMembers(page: $page, pageSize: $pageSize) { items { ${MEMBER} } ${PAGE} } }`),
  member: restDocument(`query PlatformMember($username: String!) { platformMember(username: $username) { ${MEMBER} } }`),
  posts: restDocument(`query PlatformPosts($page: Int, $pageSize: Int) {
    platformPosts(page: $page, pageSize: $pageSize) { items { ${POST} } ${PAGE} } }`),
  events: restDocument(`query PlatformEvents($page: Int, $pageSize: Int) {
    platformEvents(page: $page, pageSize: $pageSize) { items { ${EVENT} } ${PAGE} } }`),
  orders: restDocument(`query PlatformOrders($page: Int, $pageSize: Int) {
    platformOrders(page: $page, pageSize: $pageSize) { items { ${ORDER} } ${PAGE} } }`),
} as const;
