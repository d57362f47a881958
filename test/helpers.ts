import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import request from 'supertest';
import { createService, type Service } from '../server/service.js';
import { type AppConfig, type Clock, loadConfig } from '../subgraphs/kernel/index.js';

/** The test database URL chosen by `npm test` (empty: embedded PGlite in memory). */
export const TEST_DATABASE_URL = process.env.SVC_TEST_DATABASE_URL || undefined;

export function testConfig(overrides: Record<string, string> = {}): AppConfig {
  return loadConfig({
    DATABASE_URL: TEST_DATABASE_URL,
    DATA_DIR: 'memory://',
    COOKIE_SECURE: 'false',
    LOG_LEVEL: 'silent',
    JWT_SECRET: 'test-secret-test-secret-test-secret-0123',
    DATABASE_POOL_SIZE: '5',
    // No background worker unless a test asks for one: a worker drains every tribe's deliveries in the database.
    WORKER_ENABLED: 'false',
    ...overrides,
  });
}

export interface TestService extends Service {
  api: ReturnType<typeof request>;
}

/** The whole service on the test database, with a supertest client. Stop it in afterAll. */
export async function startService(overrides: Record<string, string> = {}, clock?: Clock): Promise<TestService> {
  const service = await createService(testConfig(overrides), { clock, log: pino({ level: 'silent' }) });
  return Object.assign(service, { api: request(service.http) });
}

/** A short unique suffix so tests never collide on unique columns. */
export const unique = (): string => randomBytes(5).toString('hex');

export interface TestUser {
  id: string;
  email: string;
  username: string;
  password: string;
  /** `svc_session=<token>` for the Cookie header. */
  cookie: string;
}

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

/** Runs a GraphQL operation as the given user (or anonymously). */
export async function gql(t: TestService, user: TestUser | null, query: string, variables: Record<string, unknown> = {}) {
  const req = t.api.post('/graphql').set('content-type', 'application/json');
  if (user) req.set('cookie', user.cookie);
  const res = await req.send({ query, variables });
  return res.body as { data?: any; errors?: Array<{ message: string; extensions?: Record<string, any> }> };
}

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

/** A resource-API access token for the user. */
export async function accessToken(t: TestService, user: TestUser): Promise<string> {
  const res = await t.api.post('/v1/auth/login').send({ email: user.email, password: user.password });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.access_token;
}
