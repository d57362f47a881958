// Support of the property-based hostile-input test: generators of hostile values, a JSON text writer that can
// say what JSON.stringify cannot (1e999, duplicate keys), a row counter over every table, and each surface's
// error envelope as a predicate.
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import type { TestService } from './support.js';

/**
 * The fixed fast-check seed of the hostile-input test: a failure prints its seed and path and reruns the same
 * way. `PROPERTY_SEED=<n>` explores other values; `PROPERTY_RUNS=<n>` changes the runs per route or mutation.
 */
export const SEED = Number(process.env.PROPERTY_SEED ?? 20260109);
export const RUNS = Number(process.env.PROPERTY_RUNS ?? 12);

/** A number JSON.stringify cannot write (`1e999` parses to Infinity, `-0`, `1e-400`): written into the body as is. */
export class RawNumber {
  constructor(readonly text: string) {}
}

/** An object whose JSON text repeats a key (`{"page":1,"page":"x"}`): the parser keeps the last one. */
export class DuplicateKeys {
  constructor(readonly entries: Array<[string, unknown]>) {}
}

/** The JSON text of a generated value, `RawNumber` and `DuplicateKeys` included (iterative: deep nesting is fine). */
export function jsonText(value: unknown): string {
  if (value instanceof RawNumber) return value.text;
  if (value instanceof DuplicateKeys) return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`).join(',')}}`;
  if (value instanceof Nested) return value.open.repeat(value.depth) + jsonText(value.leaf) + value.close.repeat(value.depth);
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** `depth` levels of `[` or `{"a":` around a leaf, written without recursion. */
export class Nested {
  constructor(
    readonly depth: number,
    readonly kind: 'array' | 'object',
    readonly leaf: unknown = 1,
  ) {}
  get open(): string {
    return this.kind === 'array' ? '[' : '{"a":';
  }
  get close(): string {
    return this.kind === 'array' ? ']' : '}';
  }
}

/** The hostile classes of the test, each named once so the report and the README can list them. */
export const HOSTILE_CLASSES = [
  'wrong types (null, boolean, number, object, array where another type is expected)',
  'NUL and other C0 control characters inside strings',
  'lone UTF-16 surrogates (high, low, reversed pair)',
  '1 MB strings (beyond the 100 KB body limit) and 60 KB strings (inside it)',
  'deep nesting (5,000 levels of arrays or objects)',
  'huge and negative numbers (2^31, 2^53, 1e308, 1e999 = Infinity, -1, -2^31-1, -0)',
  'floats where integers are expected (1.5, 1e-7)',
  'number-like strings (NaN, Infinity, 1e999, 0x10, 99999999999999999999)',
  'duplicate keys in JSON objects and duplicate query parameters',
  'prototype keys (__proto__, constructor)',
  'unusual but valid Unicode (emoji, combining marks, RTL override, BOM, non-characters)',
  'hostile path parameters (percent-encoded NUL, invalid UTF-8, lone surrogates, dot segments, 2 KB ids)',
  'non-JSON content types and charsets on JSON routes',
] as const;

const MB = 1_000_000;

/** Strings a validator must refuse or handle: control characters, lone surrogates, lengths, number-likes. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'a\u0000b',
    '\u0000',
    'tab\tnewline\ncr\r ok',
    'bell\u0007 escape\u001b unit\u001f del\u007f',
    '\ud800',
    'x\udfffy',
    '\udc00\ud800',
    'end\ud83d',
    '',
    '   ',
    'NaN',
    'Infinity',
    '-Infinity',
    '1e999',
    '0x10',
    '99999999999999999999',
    '-1',
    '1.5',
    '\ufeffbom',
    '\u202etxet lthgir',
    'e\u0301\u0301\u0301\u0301',
    '🦄🏳️‍🌈',
    '\uffff\ufffe',
    "' or 1=1 --",
    '<script>alert(1)</script>',
    '../../etc/passwd',
    '%00',
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 8 }),
  fc.constantFrom(60_000, MB).map((n) => 'a'.repeat(n)),
);

/** Numbers at and past every boundary: Int32, 2^53, Float64, negative, fractional, Infinity written as 1e999. */
export const hostileNumber: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    2 ** 31,
    2 ** 31 - 1,
    -(2 ** 31) - 1,
    2 ** 53,
    2 ** 53 + 2,
    -(2 ** 53),
    1e308,
    -1e308,
    -1,
    0,
    1.5,
    1e-7,
    new RawNumber('1e999'),
    new RawNumber('-1e999'),
    new RawNumber('-0'),
    new RawNumber('1e-400'),
    new RawNumber('123456789012345678901234567890'),
  ),
  fc.double(),
  fc.integer(),
);

/** Values of the wrong shape: null, booleans, containers, deep nesting, duplicate and prototype keys. */
export const hostileShape: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    null,
    true,
    false,
    {},
    [],
    [null],
    { $gt: '' },
    JSON.parse('{"__proto__": {"polluted": true}}'),
    { constructor: { prototype: { polluted: true } } },
    new DuplicateKeys([['a', 1], ['a', 'x']]),
    new Nested(5_000, 'array'),
    new Nested(5_000, 'object'),
  ),
  fc.array(fc.oneof(fc.string({ maxLength: 5 }), fc.integer(), fc.constant(null)), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }), { maxKeys: 3 }),
);

/** Any hostile value. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(hostileString, hostileNumber, hostileShape);

/** The kind of value a field takes, from its GraphQL scalar or, in a REST body, from its name. */
export type Kind = 'string' | 'int' | 'float' | 'boolean';

/** Hostile values of the right JSON type, so they pass type coercion and reach the services' own rules. */
export function typedHostile(kind: Kind): fc.Arbitrary<unknown> {
  switch (kind) {
    case 'string':
      return hostileString;
    case 'int':
      return fc.oneof(fc.constantFrom(2_147_483_647, -2_147_483_648, -1, 0, 1_000_000_001), fc.integer());
    case 'float':
      return fc.oneof(fc.constantFrom(1e308, -1e308, -1, 0, 1e-7, 2 ** 53, 0.005, 21_474_836.48, 99_999_999.99), fc.double({ noNaN: true, noDefaultInfinity: true }));
    case 'boolean':
      return fc.boolean();
  }
}

/** A REST body field's kind, guessed from its name. */
export function kindOf(name: string): Kind {
  const n = name.toLowerCase();
  if (/^price$/.test(n)) return 'float';
  if (/position|days|xp|attendees|number|page|size/.test(n)) return 'int';
  if (/^(is_|is[A-Z])|enabled|pinned|public/.test(name)) return 'boolean';
  return 'string';
}


/** Valid-looking values for a field by its name: the other fields of a request, so the hostile one is what is judged. */
export function plausibleFor(name: string): fc.Arbitrary<unknown> {
  const n = name.toLowerCase();
  if (/url/.test(n)) return fc.constantFrom('https://example.com/hook', 'https://8.8.8.8/x');
  if (/starts?_?at/.test(n)) return fc.constant('2031-01-01T10:00:00Z');
  if (/ends?_?at/.test(n)) return fc.constant('2031-01-01T12:00:00Z');
  if (/events$/.test(n)) return fc.constantFrom(['member.joined'], ['post.created']);
  if (/scopes$/.test(n)) return fc.constantFrom(['posts:read'], ['members:read', 'community:read']);
  if (/tags/.test(n)) return fc.constantFrom(['a', 'b'], []);
  if (/media/.test(n)) return fc.constantFrom(['https://example.com/a.png'], []);
  if (/email/.test(n)) return fc.constant('nobody@example.com');
  if (/password/.test(n)) return fc.constant('correct horse battery');
  if (/pinned/.test(n)) return fc.constant(false);
  if (/^(is|enabled)/.test(n) || /enabled|public|active/.test(n)) return fc.boolean();
  if (/^price$/.test(n)) return fc.constantFrom(0, 9.99);
  if (/position|xp|attendees|page|size/.test(n)) return fc.integer({ min: 1, max: 50 });
  if (/days|number/.test(n)) return fc.integer({ min: 1, max: 7 });
  if (/currency/.test(n)) return fc.constantFrom('USD', 'EUR', 'JPY');
  if (/role/.test(n)) return fc.constantFrom('member', 'moderator');
  if (/access/.test(n)) return fc.constant('free');
  if (/event_?type/.test(n)) return fc.constantFrom('online', 'in_person');
  if (/challenge_?type/.test(n)) return fc.constantFrom('daily', 'weekly');
  if (/visibility/.test(n)) return fc.constantFrom('public', 'members');
  if (/status/.test(n)) return fc.constantFrom('published', 'draft');
  if (/category/.test(n)) return fc.constantFrom('tech', 'art');
  if (/handle|username/.test(n)) return fc.stringMatching(/^[a-z][a-z0-9]{3,20}$/);
  if (/code$/.test(n)) return fc.constantFrom('ABCDEF', 'svc-unknown');
  return fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 30 });
}

/** A hostile value for one field: of its own type but hostile content (mostly), or of any hostile type or shape. */
export const hostileFor = (kind: Kind): fc.Arbitrary<unknown> =>
  fc.oneof({ arbitrary: typedHostile(kind), weight: 3 }, { arbitrary: hostileValue, weight: 2 });

/**
 * Objects over `fields` with one hostile field among plausible ones (most runs: so each hostile value is judged by
 * the rule of its own field, past the others), every field random, or a hostile value in place of the object.
 */
export function hostileObject(fields: Record<string, { plausible: fc.Arbitrary<unknown>; hostile: fc.Arbitrary<unknown> }>): fc.Arbitrary<unknown> {
  const names = Object.keys(fields);
  if (names.length === 0) return fc.oneof(fc.constant({}), hostileValue, hostileShape);
  const base = fc.record(Object.fromEntries(names.map((n) => [n, fields[n].plausible])));
  const oneHostile = fc
    .tuple(base, fc.constantFrom(...names))
    .chain(([b, name]) => fields[name].hostile.map((v) => ({ ...b, [name]: v })));
  const allRandom = fc.record(
    Object.fromEntries(names.map((n) => [n, fc.oneof(fields[n].plausible, fields[n].hostile)])),
    { requiredKeys: [] },
  );
  const withExtra = fc.tuple(base, fc.constantFrom('extra', '__proto__', 'constructor'), hostileValue).map(([b, k, v]) => ({ ...b, [k]: v }));
  return fc.oneof(
    { arbitrary: oneHostile, weight: 12 },
    { arbitrary: allRandom, weight: 3 },
    { arbitrary: withExtra, weight: 1 },
    { arbitrary: hostileValue, weight: 1 },
    { arbitrary: hostileShape, weight: 1 },
  );
}

/** A random well-formed id that names nothing. */
export const unknownId = (): string => randomUUID();

/** Path segments (already percent-encoded) an attacker sends where an id, handle or username goes. */
export const hostilePathSegment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '%00',
    'a%00b',
    '%ED%A0%80', // a lone surrogate in CESU-8: invalid UTF-8
    '%FF%FE',
    '%C0%AE%C0%AE',
    '..%2F..%2Fetc',
    '%2e%2e',
    '%25',
    '-1',
    '0',
    '1.5',
    '99999999999999999999',
    '00000000-0000-0000-0000-000000000000',
    'ffffffff-ffff-ffff-ffff-ffffffffffff',
    '%F0%9F%A6%84',
    'null',
    'undefined',
    '__proto__',
    'constructor',
  ),
  fc.uuid().map((u) => u),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }).map(encodeURIComponent),
  fc.constant('x'.repeat(2_000)),
);

/** Query-string values (percent-encoded) for a named parameter; 2 KB at most: a whole request line stays under Node's 16 KB header limit (beyond it Node answers 431 itself). */
export const hostileQueryValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '1',
    '0',
    '-1',
    '1.5',
    '1e3',
    '2147483648',
    '9007199254740993',
    '99999999999999999999',
    'NaN',
    'Infinity',
    '%00',
    'a%00b',
    '%ED%A0%80',
    '%FF',
    '',
    'true',
    'yes',
    '+1',
    '%201',
    '%20',
    'x'.repeat(2_000),
  ),
  fc.string({ unit: 'binary', maxLength: 20 }).map(encodeURIComponent),
);

/** A query string over `names`, with duplicates (`page=1&page=2`) and bracket forms (`page[]=1`, `page[a]=1`). */
export function hostileQuery(names: readonly string[]): fc.Arbitrary<string> {
  if (names.length === 0) return fc.constantFrom('', '?x=1&x=2', '?%00=1');
  const pair = fc.tuple(fc.constantFrom(...names), fc.constantFrom('', '[]', '[a]', '%00'), hostileQueryValue).map(([n, suffix, v]) => `${n}${suffix}=${v}`);
  return fc.array(pair, { minLength: 1, maxLength: 4 }).chain((pairs) =>
    fc.boolean().map((dup) => `?${(dup ? [...pairs, pairs[0]] : pairs).join('&')}`),
  );
}

/** The content type a hostile body is sent with: JSON mostly, otherwise types and charsets a JSON route refuses. */
export const contentType: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constant('application/json'), weight: 6 },
  {
    arbitrary: fc.constantFrom(
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/json; charset=utf-16',
      'application/json; charset=koi8-r',
      'application/vnd.api+json',
      'multipart/form-data; boundary=x',
    ),
    weight: 1,
  },
);

/** Counters of attempts, not data: a refused sign-in counts one there by design (test/sign-in-throttle.test.ts). */
const ATTEMPT_COUNTERS = new Set(['sign_in_attempts']);

/** Counts of the rows of every table of the public schema, in one statement. */
export async function rowCounter(t: TestService): Promise<() => Promise<Record<string, number>>> {
  const exec = async (q: ReturnType<typeof sql.raw>) => ((await t.deps.database.db.execute(q)) as unknown as { rows: Array<Record<string, unknown>> }).rows;
  const tables = (await exec(sql.raw(`select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by 1`)))
    .map((r) => String(r.name))
    .filter((name) => !ATTEMPT_COUNTERS.has(name));
  const quote = (s: string) => `"${s.replace(/"/g, '""')}"`;
  const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;
  // One row per table (json_build_object would take two arguments a table, and PostgreSQL stops at 100).
  const query = sql.raw(tables.map((n) => `select ${literal(n)} as name, count(*) as n from ${quote(n)}`).join(' union all '));
  return async () => Object.fromEntries((await exec(query)).map((r) => [String(r.name), Number(r.n)]));
}

/** The tables whose counts differ between two snapshots, as `table: before → after`. */
export function changedTables(before: Record<string, number>, after: Record<string, number>): string[] {
  return Object.keys({ ...before, ...after })
    .filter((k) => before[k] !== after[k])
    .map((k) => `${k}: ${before[k]} → ${after[k]}`);
}

/** The error envelopes of the four surfaces, as predicates over a parsed body. */
export const PLATFORM_TYPES = ['unauthorized', 'forbidden', 'not_found', 'rate_limited'];

export type Surface = 'platform' | 'resource' | 'application' | 'graphql';

/** Why `body` is not the surface's error envelope (null when it is). */
export function envelopeProblem(surface: Surface, body: any): string | null {
  const isString = (v: unknown) => typeof v === 'string' && v.length > 0;
  switch (surface) {
    case 'platform':
      return body?.error && PLATFORM_TYPES.includes(body.error.type) && isString(body.error.message) && Object.keys(body).length === 1
        ? null
        : 'not {"error":{"type":<one of the four>,"message"}}';
    case 'resource':
      return body?.error && isString(body.error.code) && isString(body.error.message) ? null : 'not {"error":{"code","message"}}';
    case 'application':
      return isString(body?.error) ? null : 'not {"error":"<code>"}';
    case 'graphql':
      if (!Array.isArray(body?.errors) || body.errors.length === 0) return 'no errors[]';
      for (const e of body.errors) {
        if (!isString(e?.message) || !isString(e?.extensions?.code)) return 'an error without message or extensions.code';
        if (e.extensions.code === 'INTERNAL_SERVER_ERROR') return `INTERNAL_SERVER_ERROR: ${e.message}`;
      }
      return null;
  }
}
