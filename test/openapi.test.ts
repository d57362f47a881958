import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { OpenAPIBackend, type Operation } from 'openapi-backend';
import type { Response } from 'supertest';
import { ALL_SCOPES, createKey, createPost, createTribe, join, seedEvent, seedOrder, signupUser, type CreatedKey, type TestUser } from './factory.js';
import { platformGet, startService, type TestService } from './support.js';

// CommonJS packages seen from ESM: their `default` export hangs off the module object.
const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;

const DOC_PATH = new URL('../rest-facade/openapi.json', import.meta.url);
const committed = JSON.parse(readFileSync(DOC_PATH, 'utf8'));

/**
 * The document made strict for testing: every object schema refuses properties it does not name, so a response
 * field that the contract does not describe fails the test (the published document stays open for additions).
 */
function strict(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strict);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) out[k] = k === 'properties' ? Object.fromEntries(Object.entries(v as object).map(([p, s]) => [p, strict(s)])) : strict(v);
  if ('properties' in out && typeof out.properties === 'object') out.additionalProperties = false;
  return out;
}

/** Validates real responses against the document with openapi-backend (JSON Schema 2020-12 through Ajv). */
class Contract {
  readonly api = new OpenAPIBackend({
    definition: strict(structuredClone(committed)) as any,
    strict: true,
    validate: true,
    // quick: skips this library's check of the document itself, which knows OpenAPI 3.0 only; the document's
    // validity as OpenAPI 3.1 is redocly's job (below). Responses are still validated, with JSON Schema 2020-12.
    quick: true,
    customizeAjv: (_ajv, options) => {
      const ajv = new Ajv2020({ ...options, strict: false, allErrors: true });
      addFormats(ajv);
      return ajv as any;
    },
  });
  readonly checked = new Map<string, Set<number>>();

  init() {
    return this.api.init();
  }

  /** The documented operation of a request path, or a test failure. */
  operation(path: string): Operation {
    const op = this.api.router.matchOperation({ method: 'get', path: path.split('?')[0], headers: {}, query: {} });
    if (!op) throw new Error(`GET ${path} is not described by the OpenAPI document`);
    return op;
  }

  /** Fails unless the status, body and documented headers of a real response match the document. */
  expectValid(path: string, res: Response): void {
    const op = this.operation(path);
    const status = String(res.status);
    expect(Object.keys(op.responses ?? {})).toContain(status);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = this.api.validator.validateResponse(res.body, op, res.status);
    expect(body.errors ?? []).toEqual([]);
    const headers = this.api.validator.validateResponseHeaders(res.headers, op, { statusCode: res.status, setMatchType: 'superset' as any });
    expect(headers.errors ?? []).toEqual([]);
    if (!this.checked.has(op.operationId!)) this.checked.set(op.operationId!, new Set());
    this.checked.get(op.operationId!)!.add(res.status);
  }

  /** Fails unless `body` matches a named schema of the document (for answers outside any operation: 404 route, 405). */
  expectSchema(name: string, body: unknown): void {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const doc = strict(structuredClone(committed)) as any;
    ajv.addSchema({ $id: 'doc', components: doc.components });
    const validate = ajv.compile({ $ref: `doc#/components/schemas/${name}` });
    validate(body);
    expect(validate.errors ?? []).toEqual([]);
  }
}

describe('OpenAPI contract (rest-facade/openapi.json)', () => {
  let t: TestService;
  let contract: Contract;
  let owner: TestUser;
  let buyer: TestUser;
  let tribe: { id: string; handle: string };
  let key: CreatedKey;
  let noScopes: CreatedKey;

  beforeAll(async () => {
    contract = new Contract();
    await contract.init();
    t = await startService({ RATE_LIMIT_PER_MINUTE: '40' });
    [owner, buyer] = await Promise.all([signupUser(t), signupUser(t)]);
    tribe = await createTribe(t, owner);
    const other = await createTribe(t, buyer);
    await join(t, buyer, tribe.handle);
    await createPost(t, buyer, tribe.id, { mediaUrls: ['https://cdn.example.org/a.png'] });
    await createPost(t, owner, tribe.id, { isPinned: true });
    await createPost(t, buyer, other.id);
    await seedEvent(t, tribe.id);
    await seedEvent(t, tribe.id, { eventType: 'in_person', location: 'Recife', maxAttendees: 12, priceCents: 1500, currency: 'USD' });
    await seedOrder(t, tribe.id, buyer.id);
    await seedOrder(t, tribe.id, null, { status: 'pending', paidAt: null, productId: '00000000-0000-4000-8000-000000000001' });
    key = await createKey(t, owner, tribe.handle, ALL_SCOPES);
    noScopes = await createKey(t, owner, tribe.handle, ['community:read']);
  });
  afterAll(async () => {
    await t?.stop();
  });

  describe('the document', () => {
    it('is served at GET /openapi.json exactly as committed', async () => {
      const res = await t.api.get('/openapi.json');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual(committed);
    });

    it('is OpenAPI 3.1, version 1.0.0, with the bearer scheme required everywhere', () => {
      expect(committed.openapi).toMatch(/^3\.1\.\d+$/);
      expect(committed.info.version).toBe('1.0.0');
      expect(committed.components.securitySchemes.ApiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
      expect(committed.security).toEqual([{ ApiKey: [] }]);
    });

    it('describes exactly the Platform API endpoints, GET only, each with its error responses', () => {
      const paths = committed.paths as Record<string, Record<string, { responses: Record<string, unknown>; parameters?: Array<{ $ref: string }> }>>;
      expect(Object.keys(paths).sort()).toEqual(['/v1/events', '/v1/me', '/v1/members', '/v1/members/{username}', '/v1/orders', '/v1/posts']);
      for (const [path, item] of Object.entries(paths)) {
        expect(Object.keys(item)).toEqual(['get']);
        const codes = Object.keys(item.get.responses).sort();
        const expected = ['200', '401', '403', '429', '500', '503', ...(path === '/v1/members/{username}' ? ['404'] : [])].sort();
        expect(codes).toEqual(expected);
      }
      for (const list of ['/v1/members', '/v1/posts', '/v1/events', '/v1/orders']) {
        expect(paths[list].get.parameters).toEqual([{ $ref: '#/components/parameters/Page' }, { $ref: '#/components/parameters/PageSize' }]);
      }
      expect(committed.components.parameters.PageSize.schema).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 25 });
    });

    it('names the four error types and the Retry-After header', () => {
      const types = ['UnauthorizedError', 'ForbiddenError', 'NotFoundError', 'RateLimitedError'].map(
        (s) => committed.components.schemas[s].properties.error.properties.type.const,
      );
      expect(types).toEqual(['unauthorized', 'forbidden', 'not_found', 'rate_limited']);
      expect(committed.components.responses.RateLimited.headers['Retry-After']).toEqual({ $ref: '#/components/headers/RetryAfter' });
      expect(committed.components.headers.RetryAfter.schema).toEqual({ type: 'integer', const: 60 });
    });

    it('passes redocly lint', () => {
      const bin = new URL('../node_modules/.bin/redocly', import.meta.url).pathname;
      const run = spawnSync(bin, ['lint', '--format=stylish', DOC_PATH.pathname], {
        encoding: 'utf8',
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NODE_OPTIONS: '' },
        timeout: 60_000,
      });
      const output = `${run.stdout}\n${run.stderr}`;
      expect(output).toContain('Your API description is valid');
      expect(output).not.toMatch(/You have \d+ (warning|error)/i);
      expect(run.status).toBe(0);
    });
  });

  describe('real responses validate against it', () => {
    it.each(['/v1/me', '/v1/members', '/v1/posts', '/v1/events', '/v1/orders'])('200 of GET %s', async (path) => {
      const res = await platformGet(t, `${path}?pageSize=100`, key.key);
      expect(res.status).toBe(200);
      if (path !== '/v1/me') expect(res.body.data.length).toBeGreaterThanOrEqual(2);
      contract.expectValid(path, res);
    });

    it('200 of GET /v1/members/{username}', async () => {
      const res = await platformGet(t, `/v1/members/${buyer.username}`, key.key);
      expect(res.status).toBe(200);
      contract.expectValid(`/v1/members/${buyer.username}`, res);
    });

    it('an empty page', async () => {
      const res = await platformGet(t, '/v1/members?page=50', key.key);
      expect(res.body.data).toEqual([]);
      contract.expectValid('/v1/members', res);
    });

    it('401 unauthorized of every endpoint', async () => {
      for (const path of ['/v1/me', '/v1/members', '/v1/members/someone', '/v1/posts', '/v1/events', '/v1/orders']) {
        const res = await t.api.get(path).set('authorization', 'Bearer svc_sk_nope');
        expect(res.status).toBe(401);
        contract.expectValid(path, res);
      }
    });

    it('403 forbidden of every scoped endpoint', async () => {
      for (const path of ['/v1/members', `/v1/members/${buyer.username}`, '/v1/posts', '/v1/events', '/v1/orders']) {
        const res = await platformGet(t, path, noScopes.key);
        expect(res.status).toBe(403);
        contract.expectValid(path, res);
      }
    });

    it('403 forbidden of every endpoint, /v1/me too, for a key of a tribe suspended by platform staff', async () => {
      const suspended = await createTribe(t, owner);
      const its = await createKey(t, owner, suspended.handle, ALL_SCOPES);
      await t.deps.database.db.execute(sql`update communities set suspended_at = now(), suspension_reason = 'contract test' where id = ${suspended.id}`);
      for (const path of ['/v1/me', '/v1/members', `/v1/members/${owner.username}`, '/v1/posts', '/v1/events', '/v1/orders']) {
        const res = await platformGet(t, path, its.key);
        expect([res.status, res.body.error.type]).toEqual([403, 'forbidden']);
        expect(res.body.error.message).toContain('contract test');
        contract.expectValid(path, res);
      }
    });

    it('404 not_found of GET /v1/members/{username}', async () => {
      const res = await platformGet(t, '/v1/members/nobody_at_all', key.key);
      expect(res.status).toBe(404);
      contract.expectValid('/v1/members/nobody_at_all', res);
    });

    it('429 rate_limited with Retry-After of every endpoint', async () => {
      const spent = await createKey(t, owner, tribe.handle);
      for (let i = 0; i < 40; i += 1) await platformGet(t, '/v1/me', spent.key).expect(200);
      for (const path of ['/v1/me', '/v1/members', '/v1/members/someone', '/v1/posts', '/v1/events', '/v1/orders']) {
        const res = await platformGet(t, path, spent.key);
        expect(res.status).toBe(429);
        contract.expectValid(path, res);
      }
    });

    it('the typed 404 of an unknown /v1 path and the 405 of another method match the NotFoundError schema', async () => {
      const unknown = await platformGet(t, '/v1/nothing-here', key.key);
      expect(unknown.status).toBe(404);
      contract.expectSchema('NotFoundError', unknown.body);
      const post = await t.api.post('/v1/members').set('authorization', `Bearer ${key.key}`);
      expect(post.status).toBe(405);
      contract.expectSchema('NotFoundError', post.body);
      expect(committed.info.description).toContain('Allow: GET');
    });

    it('covered every documented status of every operation except 500 and 503 (test/faults/database-down.test.ts)', () => {
      for (const [path, item] of Object.entries(committed.paths as Record<string, { get: { operationId: string; responses: object } }>)) {
        const documented = Object.keys(item.get.responses).filter((s) => s !== '500' && s !== '503').map(Number).sort();
        expect([path, [...(contract.checked.get(item.get.operationId) ?? [])].sort()]).toEqual([path, documented]);
      }
    });
  });

  describe('the validator itself', () => {
    it('rejects a response that drifted from the contract', async () => {
      const res = await platformGet(t, '/v1/members', key.key);
      const op = contract.operation('/v1/members');
      const v = contract.api.validator;
      const member = res.body.data[0];
      const drifted = [
        { ...res.body, total: 3 },
        { ...res.body, data: [{ ...member, email: 'leak@example.com' }] },
        { ...res.body, data: [{ ...member, username: undefined }] },
        { ...res.body, data: [{ ...member, joinedAt: '2030-01-01 00:00:00+00' }] },
        { ...res.body, pageSize: 500 },
        { ...res.body, object: 'members' },
      ];
      for (const body of drifted) expect(v.validateResponse(JSON.parse(JSON.stringify(body)), op, 200).valid).toBe(false);
      expect(v.validateResponse(res.body, op, 200).valid).toBe(true);
      const headers = (h: Record<string, string>, statusCode: number) => v.validateResponseHeaders(h, op, { statusCode, setMatchType: 'superset' as any }).valid;
      expect(headers({ 'retry-after': '60' }, 429)).toBe(true);
      expect(headers({ 'retry-after': '30' }, 429)).toBe(false);
      expect(headers({}, 429)).toBe(false);
      expect(headers({}, 401)).toBe(false);
    });
  });
});
