// docs/platform-api.md shows one example of each object the Platform API answers (and of the created key): each is
// compared with a real answer, key by key at every level and JSON type by JSON type, so the documented examples
// cannot drift from what the API returns (issue 31). The OpenAPI document's own examples are checked the same way.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { platformGet, startService, type TestService } from './support.js';
import { createPost, createTribe, seedEvent, seedOrder, signupUser, type TestUser } from './factory.js';

const DOC = readFileSync(new URL('../docs/platform-api.md', import.meta.url), 'utf8');
const OPENAPI = JSON.parse(readFileSync(new URL('../rest-facade/openapi.json', import.meta.url), 'utf8'));

/** The documented examples, by the name of their `<!-- example: name (...) -->` mark. */
function documentedExamples(): Map<string, unknown> {
  const examples = new Map<string, unknown>();
  for (const m of DOC.matchAll(/<!-- example: ([a-z ]+?) \(.*?\) -->\n```json\n([\s\S]*?)\n```/g)) examples.set(m[1], JSON.parse(m[2]));
  return examples;
}

const typeOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/**
 * Where `documented` and `real` differ in shape: a key one has and the other lacks, or a value of another JSON type
 * (a null on either side is allowed where the other has a value: nullable fields). Arrays compare their first items.
 */
function shapeDifferences(documented: unknown, real: unknown, path = '$'): string[] {
  const [d, r] = [typeOf(documented), typeOf(real)];
  if (d === 'null' || r === 'null') return [];
  if (d !== r) return [`${path}: documented ${d}, answered ${r}`];
  if (d === 'array') {
    const [a, b] = [(documented as unknown[])[0], (real as unknown[])[0]];
    return a === undefined || b === undefined ? [] : shapeDifferences(a, b, `${path}[0]`);
  }
  if (d !== 'object') return [];
  const [dk, rk] = [Object.keys(documented as object), Object.keys(real as object)];
  return [
    ...dk.filter((k) => !rk.includes(k)).map((k) => `${path}.${k}: documented, not answered`),
    ...rk.filter((k) => !dk.includes(k)).map((k) => `${path}.${k}: answered, not documented`),
    ...dk.filter((k) => rk.includes(k)).flatMap((k) => shapeDifferences((documented as any)[k], (real as any)[k], `${path}.${k}`)),
  ];
}

describe('the Platform API guide\'s examples', () => {
  let t: TestService;
  let owner: TestUser;
  let key: string;
  const real = new Map<string, unknown>();
  const examples = documentedExamples();

  beforeAll(async () => {
    t = await startService();
    owner = await signupUser(t);
    const tribe = await createTribe(t, owner);
    await createPost(t, owner, tribe.id);
    await seedEvent(t, tribe.id, { location: 'São Paulo', maxAttendees: 40 });
    await seedOrder(t, tribe.id, owner.id);
    const created = await t.api.post(`/communities/${tribe.handle}/api-keys`).set('cookie', owner.cookie).send({ name: 'CRM sync', scopes: ['members:read', 'posts:read', 'events:read', 'orders:read'] });
    expect(created.status).toBe(201);
    real.set('created key', created.body);
    key = created.body.key;
    const get = async (path: string) => {
      const res = await platformGet(t, path, key);
      expect(res.status).toBe(200);
      return res.body;
    };
    real.set('me', await get('/v1/me'));
    real.set('member', await get(`/v1/members/${owner.username}`));
    real.set('member list', await get('/v1/members'));
    real.set('post', (await get('/v1/posts')).data[0]);
    real.set('event', (await get('/v1/events')).data[0]);
    real.set('order', (await get('/v1/orders')).data[0]);
  });

  afterAll(async () => {
    await t?.stop();
  });

  it('documents one example of each object: the created key, me, member, member list, post, event, order', () => {
    expect([...examples.keys()].sort()).toEqual(['created key', 'event', 'me', 'member', 'member list', 'order', 'post']);
  });

  it.each(['created key', 'me', 'member', 'member list', 'post', 'event', 'order'])('the %s example has the fields and types of a real answer', (name) => {
    expect(real.get(name)).toBeDefined();
    expect(shapeDifferences(examples.get(name), real.get(name))).toEqual([]);
  });

  it('the documented key prefix is as long as a real one', () => {
    const documented = examples.get('created key') as { keyPrefix: string };
    expect(documented.keyPrefix).toHaveLength((real.get('created key') as { keyPrefix: string }).keyPrefix.length);
  });

  it('the OpenAPI document\'s examples have the fields and types of real answers', () => {
    const byObject: Record<string, string> = { Member: 'member', Post: 'post', Event: 'event', Order: 'order', KeyIdentity: 'me' };
    const checked = Object.entries(OPENAPI.components.schemas as Record<string, { example?: unknown }>).filter(([, s]) => s.example !== undefined);
    expect(checked.length).toBeGreaterThan(0);
    for (const [schema, s] of checked) {
      expect(byObject[schema]).toBeDefined();
      expect({ schema, differences: shapeDifferences(s.example, real.get(byObject[schema])) }).toEqual({ schema, differences: [] });
    }
  });

  it('tells a difference apart (the comparison is not blind)', () => {
    expect(shapeDifferences({ a: 1, b: 'x' }, { a: '1', c: 'x' })).toEqual(['$.b: documented, not answered', '$.c: answered, not documented', '$.a: documented number, answered string']);
  });
});
