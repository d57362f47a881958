// Issue 29, "Read rules at every seam": every entity type of the supergraph resolved by reference answers what its
// root field answers, for the same viewer. The supergraph (gateway/supergraph.graphql) is read, every @key type and
// every subgraph that resolves it is listed, and each must have its cases in the table below: for each hidden state
// the domain has (draft, paid without access, members-only to an outsider, removed, held for review, private tribe,
// suspended tribe, blocked user, left conversation...), the root field is asked through the gateway and the
// reference through the subgraph's own `_entities` (what the gateway's query plan calls for `Notification.post`,
// `EventRegistration.order`, ...), with the viewer as caller; both must answer the same: null (the root field's
// NOT_FOUND, FORBIDDEN or UNAUTHENTICATED) or the same fields, field errors included.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { execute, Kind, parse, type GraphQLSchema, type ObjectTypeDefinitionNode, type ValueNode } from 'graphql';
import { buildSubgraph, SUBGRAPH_NAMES, type SubgraphName } from '../subgraphs/index.js';
import { toSubgraphError } from '../subgraphs/kernel/graphql-errors.js';
import { createPost, createTribe, join, seedEvent, seedOrder, setRole, signupUser, unique, type TestUser } from './factory.js';
import { gql, ok, sqlRows, startService, type TestService } from './support.js';

// ---- the supergraph's entity types ----

const valueOf = (node: ValueNode | undefined): string | boolean | undefined =>
  node?.kind === Kind.STRING || node?.kind === Kind.ENUM ? node.value : node?.kind === Kind.BOOLEAN ? node.value : undefined;

/** Every type with a resolvable @key in the supergraph, and the subgraphs that resolve it. */
function entityTypesOfSupergraph(): Map<string, Set<string>> {
  const document = parse(readFileSync(new URL('../gateway/supergraph.graphql', import.meta.url), 'utf8'));
  const graphs = new Map<string, string>();
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.ENUM_TYPE_DEFINITION || definition.name.value !== 'join__Graph') continue;
    for (const value of definition.values ?? []) {
      const name = value.directives?.find((d) => d.name.value === 'join__graph')?.arguments?.find((a) => a.name.value === 'name');
      graphs.set(value.name.value, String(valueOf(name?.value)));
    }
  }
  const types = new Map<string, Set<string>>();
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OBJECT_TYPE_DEFINITION) continue;
    for (const directive of (definition as ObjectTypeDefinitionNode).directives ?? []) {
      if (directive.name.value !== 'join__type') continue;
      const arg = (name: string) => valueOf(directive.arguments?.find((a) => a.name.value === name)?.value);
      if (arg('key') === undefined || arg('resolvable') === false) continue;
      const graph = graphs.get(String(arg('graph')));
      if (!graph) throw new Error(`unknown graph ${String(arg('graph'))}`);
      if (!types.has(definition.name.value)) types.set(definition.name.value, new Set());
      types.get(definition.name.value)!.add(graph);
    }
  }
  return types;
}

// ---- the world the cases read ----

interface World {
  owner: TestUser;
  moderator: TestUser;
  member: TestUser;
  member2: TestUser;
  outsider: TestUser;
  staff: TestUser;
  pub: { id: string; handle: string };
  priv: { id: string; handle: string };
  suspended: { id: string; handle: string };
  ids: Record<string, string>;
}

type Viewer = keyof Pick<World, 'owner' | 'moderator' | 'member' | 'member2' | 'outsider' | 'staff'> | 'anonymous';

/** What a path answers: the entity's fields or null, and the errors of its fields (path below the entity, code). */
interface Answer {
  value: unknown;
  errors: string[];
}

interface Case {
  /** The hidden (or shown) state, as a reader would name it. */
  state: string;
  viewer: Viewer;
  /** The subgraph whose `__resolveReference` is asked. */
  subgraph: SubgraphName;
  id: (w: World) => string;
  /** The type's key field when it is not `id` (`CommunitySettings` is keyed by `communityId`). */
  key?: string;
  /** The selection on the type, asked on both paths. */
  fields: string;
  /** The root field: a document with `FIELDS` where the selection goes, its variables, and the path to the entity. */
  root: (w: World) => { query: string; variables?: Record<string, unknown>; path: string[] };
  /** Whether the viewer reads the row (both paths), or both refuse it. */
  shown: boolean;
}

const REFUSALS = new Set(['NOT_FOUND', 'FORBIDDEN', 'UNAUTHENTICATED']);

/** `field(id: $id)`, the usual root field of a type. */
const rootById = (field: string, key: string) => (w: World) => ({ query: `query($id: ID!) { ${field}(id: $id) { FIELDS } }`, variables: { id: w.ids[key] }, path: [field] });

const POST = 'id body status visibility moderation { reason }';
const post = (state: string, key: string, viewer: Viewer, shown: boolean): Case => ({ state, viewer, shown, subgraph: 'content', id: (w) => w.ids[key], fields: POST, root: rootById('post', key) });
const byRoot = (field: string, subgraph: SubgraphName, fields: string) => (state: string, key: string, viewer: Viewer, shown: boolean): Case => ({
  state,
  viewer,
  shown,
  subgraph,
  id: (w) => w.ids[key],
  fields,
  root: rootById(field, key),
});
const course = byRoot('course', 'courses', 'id title accessType modules { title lessons { title content } }');
const event = byRoot('event', 'events', 'id title priceCents registeredCount');
const challenge = byRoot('challenge', 'challenges', 'id title accessType');
const win = byRoot('win', 'wins', 'id title status');
const conversation = byRoot('conversation', 'engagement', 'id unreadCount lastMessage { id body }');
const message = byRoot('message', 'engagement', 'id body deletedAt');
const member = (state: string, key: string, viewer: Viewer, shown: boolean): Case => ({
  state,
  viewer,
  shown,
  subgraph: 'members',
  id: (w) => w.ids[key],
  fields: 'id role xp',
  root: (w) => ({ query: 'query($c: ID!, $u: ID!) { member(communityId: $c, userId: $u) { FIELDS } }', variables: { c: w.ids[`${key}.community`], u: w.ids[`${key}.user`] }, path: ['member'] }),
});
/** A tribe's settings, by `community(id) { settings }`: the communities subgraph's switches, the content subgraph's automod part. */
const settings = (subgraph: SubgraphName, fields: string) => (state: string, tribe: 'pub' | 'priv', viewer: Viewer): Case => ({
  state,
  viewer,
  shown: true,
  subgraph,
  key: 'communityId',
  id: (w) => w[tribe].id,
  fields,
  root: (w) => ({ query: 'query($id: ID!) { community(id: $id) { settings { FIELDS } } }', variables: { id: w[tribe].id }, path: ['community', 'settings'] }),
});
const community = (subgraph: SubgraphName, fields: string) => (state: string, tribe: 'pub' | 'priv' | 'suspended', viewer: Viewer): Case => ({
  state,
  viewer,
  shown: true,
  subgraph,
  id: (w) => w[tribe].id,
  fields,
  root: (w) => ({ query: 'query($id: ID!) { community(id: $id) { FIELDS } }', variables: { id: w[tribe].id }, path: ['community'] }),
});
const user = (subgraph: SubgraphName, fields: string) => (state: string, who: 'member' | 'suspendedUser', viewer: Viewer): Case => ({
  state,
  viewer,
  shown: true,
  subgraph,
  id: (w) => w.ids[`user.${who}`],
  fields,
  root: (w) => ({ query: 'query($u: String!) { user(username: $u) { FIELDS } }', variables: { u: w.ids[`username.${who}`] }, path: ['user'] }),
});
/** Order has no root field by id: its owner reads it in `refundRequests`, its buyer through their registration. */
const order = (state: string, viewer: Viewer, shown: boolean, via: 'refundRequests' | 'registration'): Case => ({
  state,
  viewer,
  shown,
  subgraph: 'commerce',
  id: (w) => w.ids.order,
  fields: 'id status amountCents',
  root: (w) =>
    via === 'refundRequests'
      ? { query: 'query($c: ID!) { refundRequests(communityId: $c) { edges { node { FIELDS } } } }', variables: { c: w.pub.id }, path: ['refundRequests', 'edges', '0', 'node'] }
      : { query: 'query($e: ID!) { event(id: $e) { viewerRegistration { order { FIELDS } } } }', variables: { e: w.ids['event.paid'] }, path: ['event', 'viewerRegistration', 'order'] },
});

/** Every @key type of the supergraph and its cases. A type without cases here fails the enumeration test. */
const CASES: Record<string, Case[]> = {
  Post: [
    post('published, members-only, to a member', 'post.members', 'member', true),
    post('members-only, to an outsider', 'post.members', 'outsider', false),
    post('members-only, to an anonymous reader', 'post.members', 'anonymous', false),
    post('draft, to another member', 'post.draft', 'member2', false),
    post('draft, to its author', 'post.draft', 'member', true),
    post('draft, to a moderator', 'post.draft', 'moderator', true),
    post('paid, to a member without access', 'post.paid', 'member2', false),
    post('removed by a moderator, to a member', 'post.removed', 'member2', false),
    post('removed, to a moderator (with the reason)', 'post.removed', 'moderator', true),
    post('held for review, to a member', 'post.held', 'member2', false),
    post('held for review, to a moderator', 'post.held', 'moderator', true),
    post('in a private tribe, to an outsider', 'post.private', 'outsider', false),
    post('in a private tribe, to its member', 'post.private', 'member', true),
  ],
  Course: [
    course('in a public tribe, to anyone', 'course.free', 'anonymous', true),
    course('paid, to an outsider without access (lessons hidden on both paths)', 'course.paid', 'outsider', true),
    course('members-only, to an outsider (lessons hidden on both paths)', 'course.membersOnly', 'outsider', true),
    course('in a private tribe, to an outsider', 'course.private', 'outsider', false),
    course('in a private tribe, to an anonymous reader', 'course.private', 'anonymous', false),
    course('in a private tribe, to its member', 'course.private', 'member', true),
  ],
  Event: [
    event('paid, in a public tribe, to an outsider', 'event.paid', 'outsider', true),
    event('in a private tribe, to an outsider', 'event.private', 'outsider', false),
    event('in a private tribe, to an anonymous reader', 'event.private', 'anonymous', false),
    event('in a private tribe, to its member', 'event.private', 'member', true),
  ],
  Challenge: [
    challenge('members-only, to an outsider of a public tribe', 'challenge.membersOnly', 'outsider', true),
    challenge('in a private tribe, to an outsider', 'challenge.private', 'outsider', false),
    challenge('in a private tribe, to its member', 'challenge.private', 'member', true),
  ],
  Win: [
    win('pending, to another member', 'win.pending', 'member2', false),
    win('pending, to an anonymous reader', 'win.pending', 'anonymous', false),
    win('pending, to its author', 'win.pending', 'member', true),
    win('pending, to a moderator', 'win.pending', 'moderator', true),
    win('approved, to anyone', 'win.approved', 'anonymous', true),
    win('approved, in a private tribe, to an outsider', 'win.private', 'outsider', false),
    win('approved, in a private tribe, to its member', 'win.private', 'member', true),
  ],
  Member: [
    member('of a public tribe, to anyone', 'member.pub', 'anonymous', true),
    member('of a private tribe, to an outsider', 'member.priv', 'outsider', false),
    member('of a private tribe, to an anonymous reader', 'member.priv', 'anonymous', false),
    member('of a private tribe, to a fellow member', 'member.priv', 'member2', true),
    member('removed from the tribe', 'member.removed', 'owner', false),
  ],
  Conversation: [
    conversation('to a participant', 'conversation', 'member', true),
    conversation('to someone outside it', 'conversation', 'outsider', false),
    conversation('to an anonymous reader', 'conversation', 'anonymous', false),
    conversation('to a participant who left it', 'conversation.left', 'member2', false),
    conversation('to a participant the other one blocked', 'conversation.blocked', 'member', true),
  ],
  Message: [
    message('to a participant', 'message', 'member', true),
    message('to someone outside its conversation', 'message', 'outsider', false),
    message('to an anonymous reader', 'message', 'anonymous', false),
    message('to a participant who left the conversation', 'message.left', 'member2', false),
    message('deleted (a tombstone), to a participant', 'message.deleted', 'member', true),
  ],
  Order: [
    order('to the tribe owner', 'owner', true, 'refundRequests'),
    order('to a moderator of the tribe', 'moderator', false, 'refundRequests'),
    order('to an outsider', 'outsider', false, 'refundRequests'),
    order('to an anonymous reader', 'anonymous', false, 'refundRequests'),
    order('to its buyer', 'member', true, 'registration'),
  ],
  Community: [
    community('communities', 'id handle name isPublic')('private, to an outsider (its metadata is public)', 'priv', 'outsider'),
    community('communities', 'id handle name isPublic')('suspended, to an anonymous reader', 'suspended', 'anonymous'),
    community('members', 'id memberCount viewerRole')('private, to an outsider', 'priv', 'outsider'),
    community('members', 'id memberCount viewerRole')('private, to its member', 'priv', 'member'),
    community('platform', 'id suspended featured suspensionReason')('suspended, to a member (the reason is for staff only)', 'suspended', 'member'),
    community('platform', 'id suspended featured suspensionReason')('suspended, to platform staff', 'suspended', 'staff'),
  ],
  CommunitySettings: [
    settings('communities', 'communityId visibility joinPolicy defaultPostVisibility')('a private tribe\'s, to an outsider (its switches are public)', 'priv', 'outsider'),
    settings('content', 'communityId moderation { requireApproval newMemberPostLimit blockedWords }')('a private tribe\'s automod, to an outsider (null)', 'priv', 'outsider'),
    settings('content', 'communityId moderation { requireApproval newMemberPostLimit blockedWords }')('a private tribe\'s automod, to a member (null)', 'priv', 'member'),
    settings('content', 'communityId moderation { requireApproval newMemberPostLimit blockedWords }')('a private tribe\'s automod, to its moderator', 'priv', 'moderator'),
  ],
  User: [
    user('identity', 'id username email emailVerified')('themself (their e-mail)', 'member', 'member'),
    user('identity', 'id username email emailVerified')('another user (no e-mail)', 'member', 'outsider'),
    user('identity', 'id username email emailVerified')('an anonymous reader (no e-mail)', 'member', 'anonymous'),
    user('members', 'id memberships { edges { node { id role } } }')('a member of a private tribe, to an outsider', 'member', 'outsider'),
    user('members', 'id memberships { edges { node { id role } } }')('a member of a private tribe, to a fellow member', 'member', 'member2'),
    user('platform', 'id suspension { reason }')('to a user who is not staff', 'member', 'outsider'),
    user('platform', 'id suspension { reason }')('a suspended user, to platform staff', 'suspendedUser', 'staff'),
  ],
};

describe('Entity references follow the root fields\' read rules', () => {
  let t: TestService;
  let w: World;
  const schemas = new Map<SubgraphName, GraphQLSchema>();

  const as = (w: World, viewer: Viewer) => (viewer === 'anonymous' ? null : w[viewer]);

  beforeAll(async () => {
    t = await startService();
    const [owner, moderator, memberUser, member2, outsider, staff, suspendedUser] = await Promise.all(Array.from({ length: 7 }, () => signupUser(t)));
    const pub = await createTribe(t, owner, { isPublic: true });
    const priv = await createTribe(t, owner, { isPublic: false });
    const suspended = await createTribe(t, owner, { isPublic: true });
    const invite = ok(await gql(t, owner, 'mutation($c: ID!){ createInvite(communityId: $c) }', { c: priv.id })).createInvite;
    for (const u of [moderator, memberUser, member2]) {
      await join(t, u, pub.handle);
      await join(t, u, priv.handle, invite);
    }
    await join(t, memberUser, suspended.handle);
    await setRole(t, owner, pub.id, moderator.id, 'moderator');
    await setRole(t, owner, priv.id, moderator.id, 'moderator');
    const ids: Record<string, string> = {};
    w = { owner, moderator, member: memberUser, member2, outsider, staff, pub, priv, suspended, ids };
    for (const [name, u] of Object.entries({ member: memberUser, outsider, staff, suspendedUser })) {
      ids[`user.${name}`] = u.id;
      ids[`username.${name}`] = u.username;
    }

    // Posts in each state.
    const postIn = async (author: TestUser, tribeId: string, input: Record<string, unknown>) => (await createPost(t, author, tribeId, input)).id;
    ids['post.members'] = await postIn(memberUser, pub.id, { visibility: 'members' });
    ids['post.draft'] = await postIn(memberUser, pub.id, { status: 'draft' });
    ids['post.paid'] = await postIn(owner, pub.id, { visibility: 'paid' });
    ids['post.removed'] = await postIn(memberUser, pub.id, {});
    await sqlRows(t, sql`update posts set removed_at = now(), removed_by = ${moderator.id}, removed_reason = 'spam' where id = ${ids['post.removed']}`);
    ids['post.held'] = await postIn(memberUser, pub.id, {});
    await sqlRows(t, sql`update posts set status = 'pending_review' where id = ${ids['post.held']}`);
    ids['post.private'] = await postIn(memberUser, priv.id, {});

    // Courses, with a module and a lesson each.
    const courseIn = async (tribeId: string, input: Record<string, unknown>) => {
      const c = ok(await gql(t, owner, 'mutation($c: ID!, $i: CreateCourseInput!){ createCourse(communityId: $c, input: $i){ id } }', { c: tribeId, i: { title: `Course ${unique()}`, ...input } })).createCourse;
      const m = ok(await gql(t, owner, 'mutation($c: ID!, $i: CreateCourseModuleInput!){ addCourseModule(courseId: $c, input: $i){ id } }', { c: c.id, i: { title: 'Module' } })).addCourseModule;
      ok(await gql(t, owner, 'mutation($c: ID!, $m: ID!, $i: CreateLessonInput!){ addLesson(courseId: $c, moduleId: $m, input: $i){ id } }', { c: c.id, m: m.id, i: { title: 'Lesson', content: '<p>secret</p>' } }));
      return c.id as string;
    };
    ids['course.free'] = await courseIn(pub.id, { accessType: 'free' });
    ids['course.paid'] = await courseIn(pub.id, { accessType: 'paid', price: 10, currency: 'USD' });
    ids['course.membersOnly'] = await courseIn(pub.id, { accessType: 'members_only' });
    ids['course.private'] = await courseIn(priv.id, { accessType: 'free' });

    // Events; the paid one registers the member with a paid order (refund requested, so the owner lists it).
    ids['event.paid'] = (await seedEvent(t, pub.id, { priceCents: 1000, currency: 'USD' })).id;
    ids['event.private'] = (await seedEvent(t, priv.id)).id;
    ids.order = (await seedOrder(t, pub.id, memberUser.id, { productType: 'event', productId: ids['event.paid'], amountCents: 1000, currency: 'USD' })).id;
    await sqlRows(t, sql`update orders set refund_requested_at = now(), refund_request_reason = 'full' where id = ${ids.order}`);
    await sqlRows(
      t,
      sql`insert into event_registrations (event_id, community_id, user_id, ticket_code, order_id) values (${ids['event.paid']}, ${pub.id}, ${memberUser.id}, ${randomBytes(16).toString('base64url')}, ${ids.order})`,
    );

    // Challenges.
    const challengeIn = async (tribeId: string, accessType: string) =>
      ok(
        await gql(t, owner, 'mutation($c: ID!, $i: CreateChallengeInput!){ createChallenge(communityId: $c, input: $i){ id } }', {
          c: tribeId,
          i: { title: `Challenge ${unique()}`, durationDays: 7, challengeType: 'daily', accessType },
        }),
      ).createChallenge.id as string;
    ids['challenge.membersOnly'] = await challengeIn(pub.id, 'members_only');
    ids['challenge.private'] = await challengeIn(priv.id, 'free');

    // Wins: pending, approved, approved in a private tribe.
    const winIn = async (tribeId: string) =>
      ok(await gql(t, memberUser, 'mutation($c: ID!, $i: PostWinInput!){ postWin(communityId: $c, input: $i){ id } }', { c: tribeId, i: { title: `Win ${unique()}` } })).postWin.id as string;
    const approve = async (tribeId: string, id: string) => ok(await gql(t, owner, 'mutation($c: ID!, $id: ID!){ approveWin(communityId: $c, id: $id){ id } }', { c: tribeId, id }));
    ids['win.pending'] = await winIn(pub.id);
    ids['win.approved'] = await winIn(pub.id);
    await approve(pub.id, ids['win.approved']);
    ids['win.private'] = await winIn(priv.id);
    await approve(priv.id, ids['win.private']);

    // Memberships: the member's in each tribe, and one removed.
    const membership = async (key: string, tribeId: string, userId: string) => {
      const [row] = await sqlRows<{ id: string }>(t, sql`select id from members where community_id = ${tribeId} and user_id = ${userId}`);
      Object.assign(ids, { [key]: row.id, [`${key}.community`]: tribeId, [`${key}.user`]: userId });
    };
    await membership('member.pub', pub.id, memberUser.id);
    await membership('member.priv', priv.id, memberUser.id);
    const leaver = await signupUser(t);
    await join(t, leaver, pub.handle);
    await membership('member.removed', pub.id, leaver.id);
    ok(await gql(t, owner, 'mutation($c: ID!, $u: ID!){ removeMember(communityId: $c, userId: $u) }', { c: pub.id, u: leaver.id }));

    // Conversations: one of member and member2 (member2 leaves it), one of member, moderator and member2 that
    // member2 leaves, and one where the moderator blocks the member after it started.
    const start = async (who: TestUser, others: TestUser[]) =>
      ok(await gql(t, who, 'mutation($u: [ID!]!){ startConversation(userIds: $u){ id } }', { u: others.map((o) => o.id) })).startConversation.id as string;
    const send = async (who: TestUser, conversationId: string, body: string) =>
      ok(await gql(t, who, 'mutation($c: ID!, $b: String!){ sendMessage(conversationId: $c, body: $b){ id } }', { c: conversationId, b: body })).sendMessage.id as string;
    ids.conversation = await start(memberUser, [moderator]);
    ids.message = await send(memberUser, ids.conversation, 'hello');
    ids['message.deleted'] = await send(memberUser, ids.conversation, 'gone');
    ok(await gql(t, memberUser, 'mutation($id: ID!){ deleteMessage(id: $id) }', { id: ids['message.deleted'] }));
    ids['conversation.left'] = await start(memberUser, [member2, moderator]);
    ids['message.left'] = await send(member2, ids['conversation.left'], 'before leaving');
    ok(await gql(t, member2, 'mutation($c: ID!){ leaveConversation(conversationId: $c) }', { c: ids['conversation.left'] }));
    ids['conversation.blocked'] = await start(memberUser, [member2]);
    await send(memberUser, ids['conversation.blocked'], 'hi');
    ok(await gql(t, member2, 'mutation($u: ID!){ blockUser(userId: $u) }', { u: memberUser.id }));

    // Platform states: a suspended tribe, a suspended user, a staff member.
    await sqlRows(t, sql`update communities set suspended_at = now(), suspension_reason = 'fraud' where id = ${suspended.id}`);
    await sqlRows(t, sql`insert into platform_staff (user_id, granted_by) values (${staff.id}, 'script')`);
    ok(await gql(t, staff, 'mutation($u: ID!){ suspendUser(userId: $u, reason: "spam"){ id } }', { u: suspendedUser.id }));
  }, 60_000);
  afterAll(async () => {
    await t?.stop();
  });

  /** The root field's answer: its refusal (NOT_FOUND, FORBIDDEN, UNAUTHENTICATED) is null; field errors are kept. */
  async function rootAnswer(c: Case): Promise<Answer> {
    const root = c.root(w);
    const query = root.query.replace('FIELDS', c.fields);
    const out = await gql(t, as(w, c.viewer), query, root.variables ?? {});
    let value: unknown = out.data;
    for (const step of root.path) value = value == null ? null : (value as Record<string, unknown>)[step];
    const errors: string[] = [];
    for (const error of out.errors ?? []) {
      const path = ((error as { path?: Array<string | number> }).path ?? []).map(String);
      const code = String(error.extensions?.code);
      const atEntity = path.length <= root.path.length && root.path.slice(0, path.length).join('.') === path.join('.');
      if (atEntity && REFUSALS.has(code)) continue;
      errors.push(`${path.slice(root.path.length).join('.')}:${code}`);
    }
    return { value: value ?? null, errors: errors.sort() };
  }

  /** The subgraph's `_entities` for the same id, with the viewer as the request's caller. */
  async function referenceAnswer(c: Case, type: string): Promise<Answer> {
    if (!schemas.has(c.subgraph)) schemas.set(c.subgraph, buildSubgraph(c.subgraph));
    const viewer = as(w, c.viewer);
    const out = await execute({
      schema: schemas.get(c.subgraph)!,
      document: parse(`query($r: [_Any!]!) { _entities(representations: $r) { ... on ${type} { ${c.fields} } } }`),
      variableValues: { r: [{ __typename: type, [c.key ?? 'id']: c.id(w) }] },
      contextValue: { app: t.deps, caller: viewer && { userId: viewer.id }, requestId: `entity-references-${unique()}`, operation: 'query' },
    });
    const value = (out.data as { _entities?: unknown[] } | null | undefined)?._entities?.[0] ?? null;
    // As the subgraph's server answers them (domain errors with their code), which is what the gateway receives.
    const errors = (out.errors ?? [])
      .map((e) => toSubgraphError(e, t.deps.log, 'entity-references'))
      .map((e) => `${(e.path ?? []).slice(2).map(String).join('.')}:${String(e.extensions?.code)}`);
    return { value: value === null ? null : JSON.parse(JSON.stringify(value)), errors: errors.sort() };
  }

  it('every @key type of the supergraph has its cases, for every subgraph that resolves it', () => {
    const types = entityTypesOfSupergraph();
    expect(types.size).toBeGreaterThan(0);
    for (const [type, subgraphs] of types) {
      const cases = CASES[type] ?? [];
      expect({ type, covered: [...subgraphs].filter((s) => cases.some((c) => c.subgraph === s)).sort() }).toEqual({ type, covered: [...subgraphs].sort() });
      for (const s of subgraphs) expect(SUBGRAPH_NAMES).toContain(s);
    }
    expect(Object.keys(CASES).sort()).toEqual([...types.keys()].sort());
  });

  // The first of each list is a private tribe's (its tribe and the caller's role are read); the others add nothing.
  const lists: Array<[string, SubgraphName, string[]]> = [
    ['Course', 'courses', ['course.private', 'course.free', 'course.paid', 'course.membersOnly']],
    ['Event', 'events', ['event.private', 'event.paid']],
    ['Challenge', 'challenges', ['challenge.private', 'challenge.membersOnly']],
    ['Win', 'wins', ['win.private', 'win.pending', 'win.approved']],
    ['Member', 'members', ['member.priv', 'member.pub', 'member.removed']],
  ];
  it.each(lists)('%s: a list of references costs the statements of one (the rule is batched)', async (type, subgraph, keys) => {
    const schema = buildSubgraph(subgraph);
    const statements = async (ids: string[]) => {
      const before = t.deps.database.stats.statements;
      const out = await execute({
        schema,
        document: parse(`query($r: [_Any!]!) { _entities(representations: $r) { ... on ${type} { id } } }`),
        variableValues: { r: ids.map((id) => ({ __typename: type, id })) },
        contextValue: { app: t.deps, caller: { userId: w.outsider.id }, requestId: `entity-references-${unique()}`, operation: 'query' },
      });
      expect(out.errors).toBeUndefined();
      return t.deps.database.stats.statements - before;
    };
    const all = keys.map((k) => w.ids[k]);
    await statements(all); // what the service remembers across requests (tribes, users) is read once here
    const one = await statements([all[0]]);
    expect(await statements(all)).toBe(one);
  });

  const table = Object.entries(CASES).flatMap(([type, cases]) => cases.map((c) => [type, c.subgraph, c.state, c] as const));

  it.each(table)('%s by reference (%s): %s', async (type, _subgraph, _state, c) => {
    const root = await rootAnswer(c);
    const reference = await referenceAnswer(c, type);
    expect(reference).toEqual(root);
    expect(root.value === null ? 'refused' : 'shown').toBe(c.shown ? 'shown' : 'refused');
  });
});
