import { beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import madge, { type MadgeInstance } from 'madge';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** Every TypeScript tree of the service (the verifier package has its own build and no imports from here). */
const TREES = ['db/src', 'subgraphs', 'gateway/src', 'rest-facade/src', 'jobs/src', 'server', 'scripts', 'test', 'bench'];

/**
 * The compiler options of tsconfig.json, parsed once and handed over parsed (`{ options }`): given the path, or the
 * raw JSON, the module resolver converts them again for every import it resolves (6 of the file's 8 s of CPU).
 */
const compilerOptions = () => ts.parseJsonSourceFileConfigFileContent(ts.readJsonConfigFile(ROOT + 'tsconfig.json', ts.sys.readFile), ts.sys, ROOT).options;

const graph = () =>
  madge(
    TREES.filter((t) => existsSync(ROOT + t)).map((t) => ROOT + t),
    { baseDir: ROOT, fileExtensions: ['ts'], tsConfig: { options: compilerOptions() }, excludeRegExp: [/node_modules/, /[\\/]dist[\\/]/, /\.d\.ts$/] },
  );

/** The top-level folder of a file under `subgraphs/` (its domain), or null for files elsewhere and `subgraphs/*.ts`. */
const domainOf = (file: string): string | null => /^subgraphs\/([^/]+)\//.exec(file)?.[1] ?? null;

/** The cycles of a directed graph (one per strongly connected component of two or more nodes, or a self-loop). */
function cyclesOf(edges: Map<string, Set<string>>): string[][] {
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    indexOf.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!indexOf.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indexOf.get(w)!));
    }
    if (low.get(v) === indexOf.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || edges.get(v)?.has(v)) found.push(component.sort());
    }
  };
  for (const v of edges.keys()) if (!indexOf.has(v)) visit(v);
  return found;
}

describe('architecture', () => {
  describe('imports', () => {
    let g: MadgeInstance;
    beforeAll(async () => {
      g = await graph();
    }, 180_000);

    it('resolves the .js specifiers of the TypeScript sources (so a cycle cannot hide behind an unresolved import)', async () => {
      const deps = g.obj();
      const importers = Object.values(deps).filter((imports) => imports.includes('subgraphs/kernel/index.ts'));
      expect(importers.length).toBeGreaterThan(20);
      expect(Object.keys(deps).filter((f) => f.startsWith('subgraphs/')).length).toBeGreaterThan(50);
      expect(g.warnings().skipped.filter((f) => !f.startsWith('..') && /\.(ts|js)$/.test(f))).toEqual([]);
    });

    it('has no import cycle among the TypeScript files', async () => {
      const cycles = g.circular().map((c) => c.join(' > '));
      expect(cycles).toEqual([]);
    });

    it('has no import cycle between the domain folders of subgraphs/ (a domain may use another only one way round)', async () => {
      const edges = new Map<string, Set<string>>();
      const via = new Map<string, string>();
      for (const [file, imports] of Object.entries(g.obj())) {
        const from = domainOf(file);
        if (!from) continue;
        if (!edges.has(from)) edges.set(from, new Set());
        for (const target of imports) {
          const to = domainOf(target);
          if (!to || to === from) continue;
          edges.get(from)!.add(to);
          if (!via.has(`${from}>${to}`)) via.set(`${from}>${to}`, `${file} imports ${target}`);
        }
      }
      const cycles = cyclesOf(edges).map((domains) => ({
        domains,
        imports: [...via.entries()].filter(([k]) => domains.includes(k.split('>')[0]) && domains.includes(k.split('>')[1])).map(([, v]) => v),
      }));
      expect(cycles).toEqual([]);
    });
  });

  describe('the outbox', () => {
    it('is the only code that names its table', () => {
      const offenders: string[] = [];
      const walk = (dir: string) => {
        for (const entry of readdirSync(ROOT + dir, { withFileTypes: true })) {
          const path = `${dir}/${entry.name}`;
          if (entry.isDirectory()) {
            if (entry.name !== 'node_modules' && entry.name !== 'dist') walk(path);
          } else if (path.endsWith('.ts') && !path.startsWith('subgraphs/outbox/') && /\boutbox_events\b/.test(readFileSync(ROOT + path, 'utf8'))) {
            offenders.push(path);
          }
        }
      };
      for (const tree of ['db/src', 'subgraphs', 'gateway/src', 'rest-facade/src', 'jobs/src', 'server'].filter((t) => existsSync(ROOT + t))) walk(tree);
      expect(offenders).toEqual([]);
    });
  });
});
