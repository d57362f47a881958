// The resource API's OpenAPI 3.1 document (issue 16): served at GET /openapi/resource.json, valid (redocly lint),
// describing exactly the routes the resource router (and the /v1/media router) really mount (read from their Express
// stacks, so a route added without documenting it fails here), and real answers validate against it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { OpenAPIBackend } from 'openapi-backend';
import type { Response } from 'supertest';
import { mediaRouter } from '../rest-facade/src/application/media.js';
import { RESOURCE_OPENAPI } from '../rest-facade/src/resource/openapi.js';
import { resourceErrors, resourceRouter } from '../rest-facade/src/resource/router.js';
import { actor, type Actor } from './factory.js';
import { mountedRoutes, type Layer } from './routes.js';
import { bearer, startService, type TestService } from './support.js';

const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;

const doc = JSON.parse(JSON.stringify(RESOURCE_OPENAPI));
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** `METHOD /path` of every route in an Express stack; parameters as `{}`. */
const mounted = (stack: Layer[], prefix: string, out?: Set<string>) => mountedRoutes(stack, prefix, normal, out);
const normal = (path: string) => path.replace(/:\w+|\{\w+\}/g, '{}');

const documented = () =>
  new Set(Object.entries(doc.paths as Record<string, object>).flatMap(([path, item]) => Object.keys(item).filter((m) => METHODS.includes(m)).map((m) => `${m.toUpperCase()} ${normal(path)}`)));

describe('resource API OpenAPI document (issue 16)', () => {
  let t: TestService;
  let api: OpenAPIBackend;
  let owner: Actor;
  let tribe: { id: string };

  /** Fails unless a real answer's status is documented for its operation and its body matches the schema. */
  function expectValid(method: string, path: string, res: Response) {
    const op = api.router.matchOperation({ method, path, headers: {}, query: {} });
    if (!op) throw new Error(`${method} ${path} is not in the document`);
    expect(Object.keys(op.responses ?? {})).toContain(String(res.status));
    if (res.status !== 204) expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(api.validator.validateResponse(res.body, op, res.status).errors ?? []).toEqual([]);
  }

  beforeAll(async () => {
    api = new OpenAPIBackend({
      definition: structuredClone(doc),
      strict: true,
      validate: true,
      quick: true, // this library's own document check knows OpenAPI 3.0 only: redocly checks 3.1 (below)
      customizeAjv: (_ajv, options) => {
        const ajv = new Ajv2020({ ...options, strict: false, allErrors: true });
        addFormats(ajv);
        return ajv as any;
      },
    });
    await api.init();
    t = await startService();
    owner = await actor(t);
    const created = await t.api.post('/v1/communities').set(bearer(owner)).send({ name: 'Doc tribe', handle: `doc-${Date.now()}` });
    expect(created.status).toBe(201);
    tribe = created.body.data;
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('is served at GET /openapi/resource.json as OpenAPI 3.1 with the Bearer JWT scheme', async () => {
    const res = await t.api.get('/openapi/resource.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual(doc);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.components.securitySchemes.BearerAuth).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }));
    expect(res.body.security).toEqual([{ BearerAuth: [] }, { PersonalApiKey: [] }]);
    expect(res.body.components.securitySchemes.PersonalApiKey).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer', bearerFormat: expect.stringContaining('svc_pk_') }));
  });

  it('passes redocly lint (a valid OpenAPI 3.1 document)', () => {
    const file = joinPath(mkdtempSync(joinPath(tmpdir(), 'openapi-resource-')), 'resource.json');
    writeFileSync(file, JSON.stringify(doc));
    const bin = new URL('../node_modules/.bin/redocly', import.meta.url).pathname;
    const run = spawnSync(bin, ['lint', '--format=stylish', file], { encoding: 'utf8', env: { ...process.env, REDOCLY_TELEMETRY: 'off', NODE_OPTIONS: '' } });
    expect(`${run.stdout}${run.stderr}`).not.toMatch(/\berror\b/i);
    expect(run.status).toBe(0);
  });

  it('documents exactly the routes the resource router and /v1/media mount', () => {
    const routes = mounted((resourceRouter(t.deps, t.graph.execute) as unknown as { stack: Layer[] }).stack, '/v1');
    mounted((mediaRouter(t.deps, resourceErrors) as unknown as { stack: Layer[] }).stack, '/v1/media', routes);
    expect(routes.size).toBeGreaterThan(40);
    expect(routes).toContain('GET /v1/communities/{}/webhooks/{}/logs'); // a nested router's routes are read too
    expect([...documented()].sort()).toEqual([...routes].sort());
  });

  it('every operation has an id, a tag, a 2xx answer and the error envelope', () => {
    for (const item of Object.values(doc.paths as Record<string, Record<string, any>>)) {
      for (const op of Object.values(item)) {
        expect(op.operationId).toEqual(expect.any(String));
        expect(op.tags).toHaveLength(1);
        expect(Object.keys(op.responses).some((s) => /^2/.test(s))).toBe(true);
        expect(op.responses['400'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
      }
    }
  });

  it('real answers validate against the document: auth, tribes, posts, comments, events, webhooks', async () => {
    const login = await t.api.post('/v1/auth/login').send({ email: owner.email, password: owner.password });
    expectValid('post', '/v1/auth/login', login);
    const refreshed = await t.api.post('/v1/auth/refresh').send({ refresh_token: login.body.data.refresh_token });
    expectValid('post', '/v1/auth/refresh', refreshed);
    expectValid('get', '/v1/auth/me', await t.api.get('/v1/auth/me').set(bearer(owner)));

    const cid = tribe.id;
    expectValid('get', '/v1/communities', await t.api.get('/v1/communities').set(bearer(owner)));
    expectValid('get', `/v1/communities/${cid}`, await t.api.get(`/v1/communities/${cid}`).set(bearer(owner)));
    expectValid('get', `/v1/communities/${cid}/members`, await t.api.get(`/v1/communities/${cid}/members`).set(bearer(owner)));

    const post = await t.api.post(`/v1/communities/${cid}/posts`).set(bearer(owner)).send({ content: '<p>Hello</p>', media_urls: [] });
    expect(post.status).toBe(201);
    expectValid('post', `/v1/communities/${cid}/posts`, post);
    expectValid('get', `/v1/communities/${cid}/posts`, await t.api.get(`/v1/communities/${cid}/posts`).set(bearer(owner)));
    const comment = await t.api.post(`/v1/communities/${cid}/posts/${post.body.data.id}/comments`).set(bearer(owner)).send({ content: 'First' });
    expect(comment.status).toBe(201);
    expectValid('post', `/v1/communities/${cid}/posts/${post.body.data.id}/comments`, comment);

    const event = await t.api.post(`/v1/communities/${cid}/events`).set(bearer(owner)).send({
      title: 'Meetup', event_type: 'online', starts_at: new Date(Date.now() + 86_400_000).toISOString(), ends_at: new Date(Date.now() + 90_000_000).toISOString(),
    });
    expect(event.status).toBe(201);
    expectValid('post', `/v1/communities/${cid}/events`, event);
    expectValid('get', `/v1/communities/${cid}/events`, await t.api.get(`/v1/communities/${cid}/events`).set(bearer(owner)));
    expectValid('get', `/v1/communities/${cid}/webhooks`, await t.api.get(`/v1/communities/${cid}/webhooks`).set(bearer(owner)));
  });

  it('error answers validate against the documented envelope and statuses', async () => {
    const noToken = await t.api.get('/v1/auth/me');
    expect(noToken.status).toBe(401);
    expectValid('get', '/v1/auth/me', noToken);
    const badLogin = await t.api.post('/v1/auth/login').send({ email: owner.email, password: 'wrong password here' });
    expect(badLogin.status).toBe(401);
    expectValid('post', '/v1/auth/login', badLogin);
    const missing = await t.api.get('/v1/communities/00000000-0000-4000-8000-000000000000').set(bearer(owner));
    expect(missing.status).toBe(404);
    expectValid('get', '/v1/communities/00000000-0000-4000-8000-000000000000', missing);
    const badQuery = await t.api.get(`/v1/communities/${tribe.id}/posts?pinned=maybe`).set(bearer(owner));
    expect(badQuery.status).toBe(400);
    expectValid('get', `/v1/communities/${tribe.id}/posts`, badQuery);
    expect(badQuery.body.error.code).toBe('invalid_query');
  });
});
