// CHANGELOG.md (spec §9: deprecations are announced in the changelog): every `deprecated` mark of the contracts the
// service serves (each OpenAPI document under /openapi*.json, found in the routes' sources, as the service answers it)
// and of the GraphQL schema (the composed supergraph and each subgraph's schema.graphql) has a line under a
// `### Deprecated` heading naming it, in the forms the changelog's header gives. Marks are read at run time, so a
// deprecation added anywhere is checked without touching this file. /docs/changelog itself: test/docs-pages.test.ts.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { Kind, parse, type ConstDirectiveNode } from 'graphql';
import { startService, type TestService } from './support.js';

const ROOT = new URL('../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');

/** One deprecation mark: where it is, and the backticked names a changelog line must all carry. */
interface Mark {
  where: string;
  names: string[];
}

/** The text of every line under a `### Deprecated` heading (until the next heading of level 1 to 3). */
function deprecatedLines(changelog: string): string[] {
  const lines: string[] = [];
  let inside = false;
  for (const line of changelog.split('\n')) {
    if (/^#{1,3} /.test(line)) inside = /^### Deprecated\b/.test(line);
    else if (inside && line.trim()) lines.push(line);
  }
  // A list item may wrap: join continuation lines to their item.
  return lines.reduce<string[]>((items, line) => {
    if (/^\s*[-*] /.test(line) || items.length === 0) items.push(line.trim());
    else items[items.length - 1] += ` ${line.trim()}`;
    return items;
  }, []);
}

const covered = (mark: Mark, lines: string[]) => lines.some((line) => mark.names.every((name) => line.includes(`\`${name}\``)));

// ---------------------------------------------------------------------------------------------------------
// OpenAPI

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Every deprecated operation, parameter and schema property of an OpenAPI 3.x document. */
function openApiMarks(doc: any, source: string): Mark[] {
  const marks: Mark[] = [];
  /** Properties marked deprecated anywhere inside a schema (nested objects, arrays, compositions). */
  const walkSchema = (schema: any, at: string, names: (prop: string) => string[], seen = new Set<any>()) => {
    if (!schema || typeof schema !== 'object' || seen.has(schema)) return;
    seen.add(schema);
    for (const [prop, sub] of Object.entries<any>(schema.properties ?? {})) {
      if (sub?.deprecated === true) marks.push({ where: `${source} ${at}.${prop}`, names: names(prop) });
      walkSchema(sub, `${at}.${prop}`, names, seen);
    }
    for (const key of ['items', 'additionalProperties']) walkSchema(schema[key], at, names, seen);
    for (const key of ['allOf', 'anyOf', 'oneOf']) for (const s of schema[key] ?? []) walkSchema(s, at, names, seen);
  };
  for (const [name, schema] of Object.entries<any>(doc.components?.schemas ?? {})) {
    walkSchema(schema, name, (prop) => [`${name}.${prop}`]);
  }
  for (const [path, item] of Object.entries<any>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item?.[method];
      if (!op) continue;
      const operation = `${method.toUpperCase()} ${path}`;
      if (op.deprecated === true) marks.push({ where: `${source} ${operation}`, names: [operation] });
      for (const p of [...(item.parameters ?? []), ...(op.parameters ?? [])]) {
        if (p?.deprecated === true) marks.push({ where: `${source} ${operation} parameter ${p.name}`, names: [operation, p.name] });
      }
      const bodies = [op.requestBody, ...Object.values<any>(op.responses ?? {})];
      for (const body of bodies) {
        for (const media of Object.values<any>(body?.content ?? {})) {
          // Only schemas written inline: a $ref'd one is checked once, under its own name.
          if (media?.schema && !media.schema.$ref) walkSchema(media.schema, operation, (prop) => [operation, prop]);
        }
      }
    }
  }
  return marks;
}

/** The OpenAPI documents the service serves: every `/openapi….json` route named in rest-facade's sources. */
function openApiRoutes(): string[] {
  const routes = new Set<string>();
  const walk = (dir: URL) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(new URL(`${entry.name}/`, dir));
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) {
        const text = readFileSync(new URL(entry.name, dir), 'utf8');
        for (const m of text.matchAll(/['"`](\/openapi(?:\/[\w.-]+)?\.json)['"`]/g)) routes.add(m[1]!);
      }
    }
  };
  walk(new URL('rest-facade/src/', ROOT));
  return [...routes].sort();
}

// ---------------------------------------------------------------------------------------------------------
// GraphQL

const deprecatedDirective = (directives: readonly ConstDirectiveNode[] | undefined) => directives?.some((d) => d.name.value === 'deprecated') ?? false;

/** Every deprecated field, argument, input field and enum value of an SDL document. */
function graphqlMarks(sdl: string, source: string): Mark[] {
  const marks: Mark[] = [];
  for (const def of parse(sdl).definitions) {
    if (!('name' in def) || !def.name) continue;
    const type = def.name.value;
    if ('fields' in def && def.fields) {
      for (const field of def.fields) {
        const name = `${type}.${field.name.value}`;
        if (deprecatedDirective(field.directives)) marks.push({ where: `${source} ${name}`, names: [name] });
        if (field.kind === Kind.FIELD_DEFINITION) {
          for (const arg of field.arguments ?? []) {
            const argName = `${name}(${arg.name.value})`;
            if (deprecatedDirective(arg.directives)) marks.push({ where: `${source} ${argName}`, names: [argName] });
          }
        }
      }
    }
    if ((def.kind === Kind.ENUM_TYPE_DEFINITION || def.kind === Kind.ENUM_TYPE_EXTENSION) && def.values) {
      for (const value of def.values) {
        const name = `${type}.${value.name.value}`;
        if (deprecatedDirective(value.directives)) marks.push({ where: `${source} ${name}`, names: [name] });
      }
    }
  }
  return marks;
}

function graphqlSchemas(): Array<[string, string]> {
  const files: Array<[string, string]> = [['gateway/supergraph.graphql', read('gateway/supergraph.graphql')]];
  for (const entry of readdirSync(new URL('subgraphs/', ROOT), { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    try {
      files.push([`subgraphs/${entry.name}/schema.graphql`, read(`subgraphs/${entry.name}/schema.graphql`)]);
    } catch {
      // a folder without a schema (kernel, outbox)
    }
  }
  return files;
}

// ---------------------------------------------------------------------------------------------------------

describe('CHANGELOG.md', () => {
  let t: TestService;
  const changelog = read('CHANGELOG.md');

  beforeAll(async () => {
    t = await startService();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('is in Keep a Changelog form: a title, an Unreleased section first, then released versions with dates, newest first', () => {
    expect(changelog.split('\n')[0]).toBe('# Changelog');
    const versions = [...changelog.matchAll(/^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$/gm)].map((m) => ({ version: m[1]!, date: m[2] }));
    expect(versions[0]).toEqual({ version: 'Unreleased', date: undefined });
    const released = versions.slice(1);
    expect(released.map((v) => v.version)).toContain('0.1.0');
    for (const v of released) {
      expect(v.version).toMatch(/^\d+\.\d+\.\d+$/);
      expect(v.date).toBeDefined();
    }
    const dates = released.map((v) => v.date!);
    expect([...dates].sort().reverse()).toEqual(dates);
    // Only Keep a Changelog's kinds of change as subsections.
    for (const m of changelog.matchAll(/^### (.+)$/gm)) expect(['Added', 'Changed', 'Deprecated', 'Removed', 'Fixed', 'Security']).toContain(m[1]);
  });

  it('announces every deprecated mark of the OpenAPI documents the service serves and of the GraphQL schema', async () => {
    const routes = openApiRoutes();
    expect(routes).toEqual(expect.arrayContaining(['/openapi.json', '/openapi/resource.json']));
    const marks: Mark[] = [];
    for (const route of routes) {
      const res = await t.api.get(route);
      expect(res.status).toBe(200);
      marks.push(...openApiMarks(JSON.parse(res.text), route));
    }
    for (const [file, sdl] of graphqlSchemas()) marks.push(...graphqlMarks(sdl, file));

    const lines = deprecatedLines(changelog);
    const missing = marks.filter((mark) => !covered(mark, lines)).map((m) => `${m.where}: a line under "### Deprecated" naming ${m.names.map((n) => `\`${n}\``).join(' and ')}`);
    expect(missing).toEqual([]);
  });

  it('finds marks where they are (the reader of marks checked against a planted document)', () => {
    const planted = {
      paths: {
        '/v1/things/{id}': {
          parameters: [{ name: 'id', in: 'path' }],
          get: { deprecated: true, parameters: [{ name: 'old', in: 'query', deprecated: true }], responses: { 200: { content: { 'application/json': { schema: { type: 'object', properties: { body: { type: 'string', deprecated: true } } } } } } } },
        },
      },
      components: { schemas: { Post: { type: 'object', properties: { body: { deprecated: true }, nested: { type: 'object', properties: { x: { deprecated: true } } } } } } },
    };
    expect(openApiMarks(planted, 'doc').map((m) => m.names)).toEqual([
      ['Post.body'],
      ['Post.x'],
      ['GET /v1/things/{id}'],
      ['GET /v1/things/{id}', 'old'],
      ['GET /v1/things/{id}', 'body'],
    ]);
    const sdl = 'type Post { body: String @deprecated(reason: "Use content.") feed(old: Int @deprecated): [Post] } enum Sort { OLD @deprecated NEW } input PostInput { text: String @deprecated }';
    expect(graphqlMarks(sdl, 'sdl').map((m) => m.names)).toEqual([['Post.body'], ['Post.feed(old)'], ['Sort.OLD'], ['PostInput.text']]);
    const lines = deprecatedLines('## [Unreleased]\n### Deprecated\n- `Post.body`: use\n  `Post.content`.\n### Added\n- `Sort.OLD`\n');
    expect(covered({ where: '', names: ['Post.body'] }, lines)).toBe(true);
    expect(covered({ where: '', names: ['Sort.OLD'] }, lines)).toBe(false); // under Added, not Deprecated
  });
});
