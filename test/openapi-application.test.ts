// The Application API's OpenAPI 3.1 document (issue 31): served at GET /openapi/application.json beside the other two,
// valid (redocly lint, as the resource API's), describing every route the Application router and the /media router
// mount (read from their Express stacks), with the sign-up rules as schema constraints; real answers validate against it.
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
import { APPLICATION_OPENAPI } from '../rest-facade/src/application/openapi.js';
import { applicationRouter, flatErrors } from '../rest-facade/src/application/router.js';
import { createTribe, signupUser, unique } from './factory.js';
import { mountedRoutes, type Layer } from './routes.js';
import { startService, type TestService } from './support.js';

const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;

const doc = JSON.parse(JSON.stringify(APPLICATION_OPENAPI));
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** `METHOD /path` of every route in an Express stack; parameters as `{}`. */
const mounted = (stack: Layer[], prefix: string, out?: Set<string>) => mountedRoutes(stack, prefix, normal, out);
const normal = (path: string) => path.replace(/\/$/, '').replace(/:\w+|\{\w+\}/g, '{}');

const documented = () =>
  new Set(Object.entries(doc.paths as Record<string, object>).flatMap(([path, item]) => Object.keys(item).filter((m) => METHODS.includes(m)).map((m) => `${m.toUpperCase()} ${normal(path)}`)));

describe('Application API OpenAPI document (issue 31)', () => {
  let t: TestService;
  let api: OpenAPIBackend;

  /** Fails unless a real answer's status is documented for its operation and its body matches the schema. */
  function expectValid(method: string, path: string, res: Response) {
    const op = api.router.matchOperation({ method, path, headers: {}, query: {} });
    if (!op) throw new Error(`${method} ${path} is not in the document`);
    expect(Object.keys(op.responses ?? {})).toContain(String(res.status));
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
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('is served at GET /openapi/application.json, beside /openapi.json and /openapi/resource.json', async () => {
    const res = await t.api.get('/openapi/application.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual(doc);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.components.securitySchemes.SessionCookie).toEqual(expect.objectContaining({ type: 'apiKey', in: 'cookie', name: 'svc_session' }));
    for (const other of ['/openapi.json', '/openapi/resource.json']) expect((await t.api.get(other)).status).toBe(200);
  });

  it('passes redocly lint (a valid OpenAPI 3.1 document)', () => {
    const file = joinPath(mkdtempSync(joinPath(tmpdir(), 'openapi-application-')), 'application.json');
    writeFileSync(file, JSON.stringify(doc));
    const bin = new URL('../node_modules/.bin/redocly', import.meta.url).pathname;
    const run = spawnSync(bin, ['lint', '--format=stylish', file], { encoding: 'utf8', env: { ...process.env, REDOCLY_TELEMETRY: 'off', NODE_OPTIONS: '' } });
    expect(`${run.stdout}${run.stderr}`).not.toMatch(/\berror\b/i);
    expect(run.status).toBe(0);
  });

  it('describes every route the Application router and /media mount (/auth/* included)', () => {
    const routes = mounted((applicationRouter(t.deps, t.graph.execute) as unknown as { stack: Layer[] }).stack, '');
    mounted((mediaRouter(t.deps, flatErrors) as unknown as { stack: Layer[] }).stack, '/media', routes);
    for (const route of ['POST /auth/signup', 'POST /auth/login', 'POST /auth/logout', 'GET /auth/me', 'POST /communities/{}/webhooks']) expect(routes).toContain(route);
    const missing = [...routes].filter((r) => !documented().has(r));
    expect(missing).toEqual([]);
  });

  it('states the sign-up rules as schema constraints, with the numbers the service enforces', () => {
    const signup = doc.paths['/auth/signup'].post.requestBody.content['application/json'].schema;
    expect(signup.required).toEqual(['email', 'password', 'username', 'displayName']);
    expect(signup.properties.password).toMatchObject({ minLength: 10, maxLength: 256 });
    expect(signup.properties.username).toMatchObject({ minLength: 3, maxLength: 30, pattern: '^[a-z0-9_]{3,30}$' });
    expect(signup.properties.displayName).toMatchObject({ minLength: 1, maxLength: 80 });
    expect(signup.properties.email).toMatchObject({ format: 'email', maxLength: 254 });
    const webhook = doc.paths['/communities/{handle}/webhooks'].post.requestBody.content['application/json'].schema;
    expect(webhook.properties.url).toMatchObject({ maxLength: 2048, pattern: '^https://' });
    expect(webhook.properties.description).toMatchObject({ maxLength: 140 });
  });

  it('real answers validate against it: sign-up, its refusals, me, login, logout, keys, webhooks', async () => {
    const u = unique();
    const body = { email: `oa_${u}@example.com`, password: 'correct horse battery', username: `oa_${u}`, displayName: 'Open Api' };
    const created = await t.api.post('/auth/signup').send(body);
    expectValid('post', '/auth/signup', created);
    expectValid('post', '/auth/signup', await t.api.post('/auth/signup').send({ ...body, password: 'short' }));
    expectValid('post', '/auth/signup', await t.api.post('/auth/signup').send(body)); // 409
    const cookie = (created.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
    expectValid('get', '/auth/me', await t.api.get('/auth/me').set('cookie', cookie));
    expectValid('get', '/auth/me', await t.api.get('/auth/me')); // 401
    expectValid('post', '/auth/login', await t.api.post('/auth/login').send({ email: body.email, password: body.password }));
    expectValid('post', '/auth/login', await t.api.post('/auth/login').send({ email: body.email, password: 'wrong password!' }));
    expectValid('post', '/auth/logout', await t.api.post('/auth/logout').set('cookie', cookie));

    const owner = await signupUser(t);
    const tribe = await createTribe(t, owner);
    const keys = `/communities/${tribe.handle}/api-keys`;
    expectValid('post', keys, await t.api.post(keys).set('cookie', owner.cookie).send({ name: 'ci', scopes: ['posts:read'] }));
    expectValid('post', keys, await t.api.post(keys).set('cookie', owner.cookie).send({ name: 'ci' }));
    expectValid('get', keys, await t.api.get(keys).set('cookie', owner.cookie));
    const hooks = `/communities/${tribe.handle}/webhooks`;
    expectValid('get', hooks, await t.api.get(hooks).set('cookie', owner.cookie));
    expectValid('post', hooks, await t.api.post(hooks).set('cookie', owner.cookie).send({ url: 'http://example.com/x', events: ['member.joined'] }));
  });
});
