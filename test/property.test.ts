// Property-based hostile input (issue 9, "Input"): every route of the Platform API contract (rest-facade/openapi.json),
// every resource-API and Application REST route that takes JSON, and every GraphQL mutation of the supergraph, driven
// with generated hostile values as a signed-in owner. Each request must answer below 500, refuse in its surface's
// envelope, and a refused request must leave the row count of every table unchanged. The service runs on a database
// of its own so the counts are exact while other test files run. Runs and seed: PROPERTY_RUNS, PROPERTY_SEED.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import fc from 'fast-check';
import {
  buildSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLField,
  type GraphQLInputType,
} from 'graphql';
import { accessToken, createTribe, join, signupUser, type TestUser } from './factory.js';
import { gql, isolatedDatabase, LOOPBACK_ALLOWED, startService, type TestService } from './support.js';
import {
  RUNS,
  SEED,
  changedTables,
  contentType,
  envelopeProblem,
  hostileFor,
  hostileObject,
  hostilePathSegment,
  hostileQuery,
  hostileValue,
  jsonText,
  kindOf,
  plausibleFor,
  rowCounter,
  unknownId,
  type Kind,
  type Surface,
} from './property-support.js';

jest.setTimeout(120_000);

const PARAMS = { seed: SEED, numRuns: RUNS, endOnFailure: true } as const;

// ---- the service, its seed, and one raw HTTP exchange ----

let t: TestService;
let drop: () => Promise<void>;
let port: number;
let counts: () => Promise<Record<string, number>>;
let baseline: Record<string, number>;
const agent = new Agent({ keepAlive: true, maxSockets: 4 });

/** Real things of the seeded tribe, by path-parameter or argument name. */
const real: Record<string, string> = {};
let owner: TestUser;
let token = '';
let apiKey = '';

interface Answer {
  status: number;
  contentType: string;
  text: string;
  body: any;
}

/** One request exactly as given (raw path, raw body bytes): no client library re-encodes anything. */
function send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.from(body, 'utf8');
    const req = httpRequest(
      { host: '127.0.0.1', port, method, path, agent, headers: { ...headers, ...(data ? { 'content-length': String(data.length) } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = undefined;
          }
          resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), text, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

/** Percent-encodes the UTF-8 form but unreserved characters (lone surrogates become U+FFFD, as clients send them). */
const pct = (s: string) =>
  [...Buffer.from(s, 'utf8')].map((b) => (/[A-Za-z0-9._~-]/.test(String.fromCharCode(b)) && b < 128 ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0').toUpperCase()}`)).join('');

/** Answers by surface and outcome, so the last test can show the properties reached both sides of validation. */
const tally: Record<string, { accepted: number; refused: number }> = {};

const describeRequest = (method: string, path: string, ct: string | undefined, body: string | undefined) =>
  `${method} ${path.length > 300 ? `${path.slice(0, 300)}… (${path.length} chars)` : path}${ct ? ` [${ct}]` : ''} ${body === undefined ? '' : body.length > 300 ? `${body.slice(0, 300)}… (${body.length} chars)` : body}`;

/**
 * The three promises of every exchange: below 500; a refusal in the surface's envelope; a refusal writes no row.
 * An accepted request may write: the counts become the new baseline.
 */
async function expectSafe(surface: Surface, what: string, answer: Answer, refused: boolean): Promise<void> {
  if (process.env.PROPERTY_VERBOSE) console.log(what.slice(0, 150), answer.status, answer.text.slice(0, 150));
  const seen = (tally[surface] ??= { accepted: 0, refused: 0 });
  seen[refused ? 'refused' : 'accepted']++;
  const after = await counts();
  const changed = changedTables(baseline, after);
  baseline = after;
  const problems: string[] = [];
  if (answer.status >= 500) problems.push(`status ${answer.status}`);
  if (refused) {
    const problem = answer.status === 204 ? 'refusal without a body' : envelopeProblem(surface, answer.body);
    if (problem) problems.push(`envelope: ${problem}`);
    if (answer.status >= 400 && !answer.contentType.startsWith('application/json')) problems.push(`content type ${answer.contentType}`);
    if (changed.length) problems.push(`rows written by a refused request: ${changed.join(', ')}`);
  }
  if (problems.length) throw new Error(`${what}\n→ ${answer.status} ${answer.text.slice(0, 500)}\n${problems.join('\n')}`);
}

/** Keeps the seed usable after an accepted request (a PATCH may have renamed the tribe's handle). */
async function refreshSeed(): Promise<void> {
  const res = await send('GET', `/v1/communities/${real.cid}`, { authorization: `Bearer ${token}` });
  if (res.status === 200) real.handle = res.body.data.handle;
}

// ---- REST routes ----

interface Route {
  surface: Surface;
  method: string;
  /** With `{name}` path parameters. */
  path: string;
  query?: readonly string[];
  /** Field names of the JSON body (null: no body is read, a hostile one is sent anyway). */
  body?: readonly string[] | null;
  /** Deletes or revokes its last path parameter: that one is never a real id (the seed must survive). */
  destructive?: boolean;
  /** Sent without credentials (logout would end the owner's session). */
  anonymous?: boolean;
}

/** Every path and method of the committed Platform API contract, with its query parameters. */
function openApiRoutes(): Route[] {
  const doc = JSON.parse(readFileSync(new URL('../rest-facade/openapi.json', import.meta.url), 'utf8'));
  const resolve = (p: any) => (p.$ref ? p.$ref.split('/').slice(1).reduce((o: any, k: string) => o[k], doc) : p);
  const routes: Route[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      const op = item[method];
      if (!op) continue;
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map(resolve);
      const body = op.requestBody ? Object.keys(resolve(op.requestBody).content?.['application/json']?.schema?.properties ?? {}) : null;
      routes.push({ surface: 'platform', method: method.toUpperCase(), path, query: params.filter((p) => p.in === 'query').map((p) => p.name), body });
    }
  }
  return routes;
}

const PAGE = ['page', 'per_page'];
const C = '/v1/communities/{cid}';
const community = ['name', 'handle', 'description', 'is_public', 'category'];
const post = ['content', 'media_urls', 'is_pinned', 'visibility', 'status'];
const course = ['title', 'description', 'access_type', 'price', 'currency', 'xp_reward'];
const challenge = ['title', 'description', 'duration_days', 'challenge_type', 'access_type', 'xp_reward', 'price', 'currency'];
const event = ['title', 'description', 'event_type', 'location', 'starts_at', 'ends_at', 'max_attendees', 'price', 'currency'];

/** The resource API (spec 4.5): rest-facade/src/resource/{router,learning,events,webhooks}.ts. */
const RESOURCE: Route[] = [
  { method: 'POST', path: '/v1/auth/login', body: ['email', 'password'] },
  { method: 'POST', path: '/v1/auth/refresh', body: ['refresh_token'] },
  { method: 'GET', path: '/v1/auth/me' },
  { method: 'GET', path: '/v1/communities', query: ['search', ...PAGE] },
  { method: 'POST', path: '/v1/communities', body: community },
  { method: 'GET', path: C },
  { method: 'PATCH', path: C, body: community },
  { method: 'DELETE', path: C, destructive: true },
  { method: 'GET', path: `${C}/members`, query: ['role', 'search', ...PAGE] },
  { method: 'GET', path: `${C}/members/{uid}` },
  { method: 'PATCH', path: `${C}/members/{uid}`, body: ['role'] },
  { method: 'DELETE', path: `${C}/members/{uid}`, destructive: true },
  { method: 'GET', path: `${C}/posts`, query: ['pinned', 'author_id', ...PAGE] },
  { method: 'POST', path: `${C}/posts`, body: post },
  { method: 'GET', path: `${C}/posts/{pid}` },
  { method: 'PATCH', path: `${C}/posts/{pid}`, body: post },
  { method: 'DELETE', path: `${C}/posts/{pid}`, destructive: true },
  { method: 'GET', path: `${C}/posts/{pid}/comments`, query: PAGE },
  { method: 'POST', path: `${C}/posts/{pid}/comments`, body: ['content', 'parent_id'] },
  { method: 'GET', path: `${C}/courses`, query: PAGE },
  { method: 'POST', path: `${C}/courses`, body: course },
  { method: 'GET', path: `${C}/courses/{course}` },
  { method: 'POST', path: `${C}/courses/{course}/modules`, body: ['title', 'position'] },
  { method: 'POST', path: `${C}/courses/{course}/modules/{module}/lessons`, body: ['title', 'content', 'position'] },
  { method: 'POST', path: `${C}/courses/{course}/enroll`, body: null },
  { method: 'GET', path: `${C}/courses/{course}/progress` },
  { method: 'POST', path: `${C}/courses/{course}/lessons/{lesson}/complete`, body: null },
  { method: 'GET', path: `${C}/challenges`, query: PAGE },
  { method: 'POST', path: `${C}/challenges`, body: challenge },
  { method: 'GET', path: `${C}/challenges/{challenge}` },
  { method: 'POST', path: `${C}/challenges/{challenge}/enroll`, body: null },
  { method: 'GET', path: `${C}/challenges/{challenge}/progress` },
  { method: 'POST', path: `${C}/challenges/{challenge}/checkins`, body: ['content', 'day_number', 'tags'] },
  { method: 'GET', path: `${C}/challenges/{challenge}/leaderboard`, query: PAGE },
  { method: 'GET', path: `${C}/events`, query: ['status', ...PAGE] },
  { method: 'POST', path: `${C}/events`, body: event },
  { method: 'GET', path: `${C}/events/{event}` },
  { method: 'POST', path: `${C}/events/{event}/register`, body: null },
  { method: 'POST', path: `${C}/events/{event}/checkin`, body: ['ticket_code'] },
  { method: 'GET', path: `${C}/webhooks` },
  { method: 'POST', path: `${C}/webhooks`, body: ['url', 'events', 'description', 'is_active'] },
  { method: 'GET', path: `${C}/webhooks/{hook}` },
  { method: 'PATCH', path: `${C}/webhooks/{hook}`, body: ['url', 'events', 'description', 'is_active'] },
  { method: 'DELETE', path: `${C}/webhooks/{hook}`, destructive: true },
  { method: 'POST', path: `${C}/webhooks/{hook}/test`, body: null },
  { method: 'GET', path: `${C}/webhooks/{hook}/logs`, query: PAGE },
].map((r) => ({ ...r, surface: 'resource' as const }));

const H = '/communities/{handle}';

/** The Application API (flat errors): rest-facade/src/application/*.ts. */
const APPLICATION: Route[] = [
  { method: 'POST', path: '/auth/signup', body: ['email', 'password', 'username', 'displayName', 'inviteCode'] },
  { method: 'POST', path: '/auth/login', body: ['email', 'password'] },
  { method: 'POST', path: '/auth/logout', body: null, anonymous: true },
  { method: 'GET', path: '/auth/me' },
  { method: 'GET', path: '/posts/{pid}' },
  { method: 'POST', path: '/affiliate/track', body: ['code'] },
  { method: 'POST', path: '/webhooks/payments/stripe', body: ['id', 'type', 'data'] },
  { method: 'POST', path: `${H}/orders/{order}/mark-paid`, body: null },
  { method: 'POST', path: `${H}/api-keys`, body: ['name', 'scopes'] },
  { method: 'GET', path: `${H}/api-keys` },
  { method: 'DELETE', path: `${H}/api-keys/{key}`, destructive: true },
  { method: 'POST', path: `${H}/webhooks`, body: ['url', 'events', 'description', 'enabled'] },
  { method: 'GET', path: `${H}/webhooks` },
  { method: 'GET', path: `${H}/webhooks/{hook}` },
  { method: 'PATCH', path: `${H}/webhooks/{hook}`, body: ['url', 'events', 'description', 'enabled'] },
  { method: 'DELETE', path: `${H}/webhooks/{hook}`, destructive: true },
  { method: 'POST', path: `${H}/webhooks/{hook}/test`, body: null },
  { method: 'GET', path: `${H}/webhooks/{hook}/deliveries`, query: ['page', 'perPage'] },
  { method: 'POST', path: `${H}/webhooks/{hook}/deliveries/{delivery}/resend`, body: null },
].map((r) => ({ ...r, surface: 'application' as const }));

/** Real values a path parameter may take (the OpenAPI `username` is the member's). */
const REAL_PARAM: Record<string, string> = { username: 'username', uid: 'member' };

function pathParam(name: string, hostileOnly: boolean): fc.Arbitrary<string> {
  const key = REAL_PARAM[name] ?? name;
  const hostile = fc.oneof(hostilePathSegment, fc.constant('').map(() => unknownId()));
  if (hostileOnly) return hostile;
  return fc.oneof({ arbitrary: fc.constant(key).map((k) => pct(real[k] ?? unknownId())), weight: 3 }, { arbitrary: hostile, weight: 2 });
}

/** A JSON body over the route's field names: mostly one hostile field among plausible ones (see hostileObject). */
function bodyOf(fields: readonly string[] | null | undefined): fc.Arbitrary<unknown> {
  return hostileObject(Object.fromEntries((fields ?? []).map((f) => [f, { plausible: plausibleFor(f), hostile: hostileFor(kindOf(f)) }])));
}

function requestOf(route: Route): fc.Arbitrary<{ path: string; ct: string; body: string | undefined }> {
  const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  const params = fc.tuple(...names.map((n, i) => pathParam(n, Boolean(route.destructive) && i === names.length - 1)));
  const query = route.query?.length ? fc.oneof(fc.constant(''), hostileQuery(route.query)) : fc.constantFrom('', '', '?x=1&x=2');
  const sendsBody = route.method !== 'GET' && route.method !== 'DELETE';
  const body = sendsBody ? bodyOf(route.body).map(jsonText) : fc.constant(undefined);
  return fc.record({ params, query, ct: contentType, body }).map(({ params: values, query: q, ct, body: b }) => {
    let i = 0;
    const path = route.path.replace(/\{\w+\}/g, () => values[i++]);
    return { path: `${path}${q}`, ct, body: b };
  });
}

function credentials(route: Route): Record<string, string> {
  if (route.anonymous) return {};
  if (route.surface === 'platform') return { authorization: `Bearer ${apiKey}` };
  if (route.surface === 'resource') return { authorization: `Bearer ${token}` };
  return { cookie: owner.cookie, 'stripe-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` };
}

async function driveRoute(route: Route): Promise<void> {
  await fc.assert(
    fc.asyncProperty(requestOf(route), async ({ path, ct, body }) => {
      const headers = { ...credentials(route), accept: 'application/json', ...(body === undefined ? {} : { 'content-type': ct }) };
      const answer = await send(route.method, path, headers, body);
      await expectSafe(route.surface, describeRequest(route.method, path, body === undefined ? undefined : ct, body), answer, answer.status >= 400);
      if (answer.status < 400) await refreshSeed();
    }),
    PARAMS,
  );
}

// ---- GraphQL mutations ----

const SCHEMA = buildSchema(readFileSync(new URL('../gateway/supergraph.graphql', import.meta.url), 'utf8'));
const MUTATIONS = Object.values(SCHEMA.getMutationType()!.getFields());

/** What a mutation's `id` argument names. */
const ID_OF: Record<string, string> = {
  updateCommunity: 'cid',
  deleteCommunity: 'cid',
  updatePost: 'pid',
  deletePost: 'pid',
  updateComment: 'comment',
  deleteComment: 'comment',
  revokeApiKey: 'key',
  updateWebhookEndpoint: 'hook',
  deleteWebhookEndpoint: 'hook',
  testWebhookEndpoint: 'hook',
  approveWin: 'win',
};
/** Real values by argument name. */
const ARG_REAL: Record<string, string> = {
  communityId: 'cid',
  handle: 'handle',
  userId: 'member',
  postId: 'pid',
  parentId: 'comment',
  courseId: 'course',
  moduleId: 'module',
  lessonId: 'lesson',
  challengeId: 'challenge',
  eventId: 'event',
  endpointId: 'hook',
  deliveryId: 'delivery',
  orderId: 'order',
};
const DESTRUCTIVE = /^(delete|remove|revoke)/;

const KINDS: Record<string, Kind> = { Int: 'int', Float: 'float', Boolean: 'boolean' };

/** A valid value of a GraphQL input type (real ids where the name says which), for the fields not under test. */
function plausibleOf(type: GraphQLInputType, name: string, realKey?: string): fc.Arbitrary<unknown> {
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) return plausibleFor(name);
  if (isInputObjectType(inner)) {
    return fc.record(Object.fromEntries(Object.values(inner.getFields()).map((f) => [f.name, plausibleOf(f.type, f.name, ARG_REAL[f.name])])));
  }
  if (realKey) return fc.constant(realKey).map((k) => real[k] ?? unknownId());
  return plausibleFor(name);
}

/** A hostile value for a GraphQL input type: input objects one hostile field at a time, lists item by item. */
function hostileOf(type: GraphQLInputType, name: string): fc.Arbitrary<unknown> {
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) {
    const item = hostileOf(inner.ofType as GraphQLInputType, name);
    return fc.oneof(fc.array(item, { minLength: 1, maxLength: 3 }), hostileValue);
  }
  if (isInputObjectType(inner)) {
    const fields = Object.values(inner.getFields());
    return hostileObject(Object.fromEntries(fields.map((f) => [f.name, { plausible: plausibleOf(f.type, f.name, ARG_REAL[f.name]), hostile: hostileOf(f.type, f.name) }])));
  }
  return hostileFor(isScalarType(inner) || isEnumType(inner) ? (KINDS[inner.name] ?? 'string') : 'string');
}

function mutationDocument(field: GraphQLField<unknown, unknown>): string {
  const vars = field.args.map((a) => `$${a.name}: ${a.type.toString()}`).join(', ');
  const args = field.args.map((a) => `${a.name}: $${a.name}`).join(', ');
  const selection = isObjectType(getNamedType(field.type)) ? ' { __typename }' : '';
  return `mutation Hostile${vars ? `(${vars})` : ''} { ${field.name}${args ? `(${args})` : ''}${selection} }`;
}

function variablesOf(field: GraphQLField<unknown, unknown>): fc.Arbitrary<unknown> {
  const destructive = DESTRUCTIVE.test(field.name);
  return hostileObject(
    Object.fromEntries(
      field.args.map((a) => {
        const realKey = a.name === 'id' ? ID_OF[field.name] : ARG_REAL[a.name];
        // A destructive mutation never gets a real target: the seed must survive the run.
        const keep = realKey && !(destructive && (a.name === 'id' || a.name === 'userId'));
        return [a.name, { plausible: plausibleOf(a.type, a.name, keep ? realKey : undefined), hostile: hostileOf(a.type, a.name) }];
      }),
    ),
  );
}

async function driveMutation(field: GraphQLField<unknown, unknown>): Promise<void> {
  const query = mutationDocument(field);
  await fc.assert(
    fc.asyncProperty(variablesOf(field), contentType, async (variables, ct) => {
      const body = jsonText({ query, variables });
      const answer = await send('POST', '/graphql', { cookie: owner.cookie, 'content-type': ct, accept: 'application/json' }, body);
      const data = answer.body?.data?.[field.name];
      const refused = answer.status >= 400 || Boolean(answer.body?.errors?.length) || data === undefined || data === null;
      await expectSafe('graphql', describeRequest('POST', '/graphql', ct, body), answer, refused);
      if (!refused) await refreshSeed();
    }),
    PARAMS,
  );
}

// ---- the seed ----

async function graphql(who: TestUser, query: string, variables: Record<string, unknown>): Promise<any> {
  const out = await gql(t, who, query, variables);
  if (out.errors) throw new Error(`seed: ${JSON.stringify(out.errors)}`);
  return out.data;
}

beforeAll(async () => {
  const db = await isolatedDatabase();
  drop = db.drop;
  t = await startService({
    ...(db.url ? { DATABASE_URL: db.url } : {}),
    RATE_LIMIT_PER_MINUTE: '1000000',
    WEBHOOK_ALLOWED_PRIVATE_HOSTS: LOOPBACK_ALLOWED,
    WEBHOOK_TIMEOUT_MS: '1000',
    STRIPE_WEBHOOK_SECRET: 'whsec_property_test_secret',
  });
  port = await t.listen(0, '127.0.0.1');

  owner = await signupUser(t);
  const member = await signupUser(t);
  const tribe = await createTribe(t, owner);
  await join(t, member, tribe.handle);
  token = await accessToken(t, owner);
  Object.assign(real, { cid: tribe.id, handle: tribe.handle, owner: owner.id, member: member.id, username: member.username });

  const c = tribe.id;
  const p = await graphql(owner, 'mutation($c: ID!){ createPost(communityId: $c, input: {content: "seed post"}){ id } }', { c });
  real.pid = p.createPost.id;
  const cm = await graphql(owner, 'mutation($p: ID!){ createComment(postId: $p, input: {content: "seed comment"}){ id } }', { p: real.pid });
  real.comment = cm.createComment.id;
  const co = await graphql(owner, 'mutation($c: ID!){ createCourse(communityId: $c, input: {title: "Seed course", accessType: "free"}){ id } }', { c });
  real.course = co.createCourse.id;
  const mo = await graphql(owner, 'mutation($k: ID!){ addCourseModule(courseId: $k, input: {title: "M1"}){ id } }', { k: real.course });
  real.module = mo.addCourseModule.id;
  const le = await graphql(owner, 'mutation($k: ID!, $m: ID!){ addLesson(courseId: $k, moduleId: $m, input: {title: "L1", content: "x"}){ id } }', {
    k: real.course,
    m: real.module,
  });
  real.lesson = le.addLesson.id;
  const ch = await graphql(owner, 'mutation($c: ID!){ createChallenge(communityId: $c, input: {title: "Seed challenge", durationDays: 7, challengeType: "daily", accessType: "free"}){ id } }', { c });
  real.challenge = ch.createChallenge.id;
  const start = new Date(Date.now() + 86_400_000);
  const ev = await graphql(owner, 'mutation($c: ID!, $i: CreateEventInput!){ createEvent(communityId: $c, input: $i){ id } }', {
    c,
    i: { title: 'Seed event', eventType: 'online', startsAt: start.toISOString(), endsAt: new Date(start.getTime() + 3_600_000).toISOString() },
  });
  real.event = ev.createEvent.id;
  const win = await graphql(member, 'mutation($c: ID!){ postWin(communityId: $c, input: {title: "A win", content: "x"}){ id } }', { c });
  real.win = win.postWin.id;

  const key = await t.api.post(`/communities/${tribe.handle}/api-keys`).set('cookie', owner.cookie).send({ name: 'property', scopes: ['members:read', 'posts:read', 'events:read', 'orders:read', 'community:read'] });
  if (key.status !== 201) throw new Error(`seed key: ${key.status} ${JSON.stringify(key.body)}`);
  apiKey = key.body.key;
  real.key = key.body.id;
  // Port 9 on loopback refuses at once: a test ping fails fast and leaves a failed delivery to resend.
  const hook = await t.api.post(`/communities/${tribe.handle}/webhooks`).set('cookie', owner.cookie).send({ url: 'https://127.0.0.1:9/hook', events: ['member.joined'] });
  if (hook.status !== 201) throw new Error(`seed hook: ${hook.status} ${JSON.stringify(hook.body)}`);
  real.hook = hook.body.id;
  const ping = await t.api.post(`/communities/${tribe.handle}/webhooks/${real.hook}/test`).set('cookie', owner.cookie);
  if (ping.body?.delivery?.id) real.delivery = ping.body.delivery.id;

  counts = await rowCounter(t);
  baseline = await counts();
}, 120_000);

afterAll(async () => {
  if (process.env.PROPERTY_VERBOSE) console.log(JSON.stringify(tally));
  agent.destroy();
  await t?.stop();
  await drop?.();
});

// ---- the properties ----

describe('hostile input', () => {
  describe('Platform API (every route of rest-facade/openapi.json)', () => {
    const routes = openApiRoutes();
    it('reads the contract', () => {
      expect(routes.length).toBeGreaterThanOrEqual(6);
    });
    it.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))('%s never answers 500, refuses in its envelope, writes nothing', async (_n, route) => {
      await driveRoute(route);
    });
    it.each(['POST', 'PUT', 'PATCH', 'DELETE'])('%s with a hostile body on every contract path is a typed refusal', async (method) => {
      for (const route of routes) await driveRoute({ ...route, method, body: ['limit', 'page'] });
    });
  });

  describe('resource API', () => {
    it.each(RESOURCE.map((r) => [`${r.method} ${r.path}`, r] as const))('%s never answers 500, refuses in its envelope, writes nothing', async (_n, route) => {
      await driveRoute(route);
    });
  });

  describe('Application API', () => {
    it.each(APPLICATION.map((r) => [`${r.method} ${r.path}`, r] as const))('%s never answers 500, refuses in its envelope, writes nothing', async (_n, route) => {
      await driveRoute(route);
    });
  });

  describe('GraphQL (every mutation of the supergraph)', () => {
    it('reads the supergraph', () => {
      expect(MUTATIONS.length).toBeGreaterThanOrEqual(30);
    });
    it.each(MUTATIONS.map((m) => [m.name, m] as const))('%s never answers 500 or INTERNAL_SERVER_ERROR, writes nothing when refused', async (_n, field) => {
      await driveMutation(field);
    });
  });

  it('the seed survived and every surface both accepted and refused some requests (validation was passed, not only hit)', async () => {
    const res = await send('GET', `/v1/communities/${real.cid}`, { authorization: `Bearer ${token}` });
    expect(res.status).toBe(200);
    for (const surface of ['platform', 'resource', 'application', 'graphql']) {
      expect({ surface, accepted: tally[surface]?.accepted > 0, refused: tally[surface]?.refused > 0 }).toEqual({ surface, accepted: true, refused: true });
    }
  });
});
