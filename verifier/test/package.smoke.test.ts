// Smoke tests of the BUILT package, loaded the way receivers load it: by name, through the exports map.
//
// The package is built in a temporary copy, never in verifier/dist: `npm start`'s build (test/start-stop.test.ts,
// another Jest worker) builds verifier/dist too, and two builds there at once break each other (one removes the
// folder while the other writes it).
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const sourceDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const rootModules = resolve(sourceDir, '..', 'node_modules');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

/**
 * A copy of the package's sources and test projects, whose node_modules holds only what its build needs (`tsc`, Node's
 * types) and the package itself under its name, so that the test projects load this copy's build.
 */
function packageCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'verifier-smoke-'));
  for (const entry of ['package.json', 'README.md', 'src', 'scripts', 'test-projects', 'tsconfig.json', 'tsconfig.esm.json', 'tsconfig.cjs.json']) {
    cpSync(join(sourceDir, entry), join(dir, entry), { recursive: true });
  }
  mkdirSync(join(dir, 'node_modules', '@svc'), { recursive: true });
  for (const name of ['.bin', 'typescript', '@types']) symlinkSync(join(rootModules, name), join(dir, 'node_modules', name));
  symlinkSync(dir, join(dir, 'node_modules', '@svc', 'webhook-verifier'));
  return dir;
}

const pkgDir = packageCopy();
// Children run without jest's --experimental-vm-modules.
const env = { ...process.env, NODE_OPTIONS: '' };

function node(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const { status, stdout, stderr } = spawnSync(process.execPath, args, { cwd: pkgDir, env, encoding: 'utf8' });
  return { status, stdout, stderr };
}

/** Relative and bare specifiers imported or required by a built module. */
function specifiers(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  const found = [...source.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)["']([^"']+)["']/g)];
  return found.map((m) => m[1]!);
}

/** Every module reachable from an entry of a build, with the specifiers each one imports. */
function moduleGraph(entry: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (graph.has(file)) continue;
    const deps = specifiers(file);
    graph.set(file, deps);
    for (const dep of deps) if (dep.startsWith('.')) pending.push(join(dirname(file), dep));
  }
  return graph;
}

describe('built package', () => {
  beforeAll(() => {
    execFileSync('npm', ['run', 'build'], { cwd: pkgDir, env, stdio: 'pipe' });
  }, 120_000);
  afterAll(() => rmSync(pkgDir, { recursive: true, force: true }));

  it('has no runtime dependencies and marks each build with its module type', () => {
    const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
    expect(pkg.dependencies ?? {}).toEqual({});
    expect(pkg.peerDependencies).toBeUndefined();
    expect(JSON.parse(readFileSync(join(pkgDir, 'dist/cjs/package.json'), 'utf8'))).toEqual({ type: 'commonjs' });
    expect(JSON.parse(readFileSync(join(pkgDir, 'dist/esm/package.json'), 'utf8'))).toEqual({ type: 'module' });
  });

  it('loads with require() (CommonJS)', () => {
    const run = node('test-projects/cjs/index.cjs');
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('cjs ok');
  });

  it('loads with import (ESM)', () => {
    const run = node('test-projects/esm/index.mjs');
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('esm ok');
  });

  it('runs ./web and ./fetch with every Node built-in blocked (Web Crypto only)', () => {
    const run = node('--import', './test-projects/web/block-node-builtins.mjs', 'test-projects/web/index.mjs');
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('web ok');
  });

  it('has a blocker that really blocks: the main entry fails under it on a Node built-in (node:crypto or node:buffer)', () => {
    const run = node('--import', './test-projects/web/block-node-builtins.mjs', 'test-projects/web/control.mjs');
    expect(run.status).not.toBe(0);
    // The loader resolves a module's imports concurrently, so whichever built-in it reaches first is the one refused.
    expect(run.stderr).toMatch(/blocked Node built-in "node:(crypto|buffer)"/);
  });

  it.each(['esm', 'cjs'])('imports nothing but its own files from the %s web and fetch entries', (build) => {
    for (const entry of ['web.js', 'fetch.js']) {
      const graph = moduleGraph(join(pkgDir, 'dist', build, entry));
      const external = [...graph.values()].flat().filter((s) => !s.startsWith('.'));
      expect(external).toEqual([]);
      expect(graph.size).toBeGreaterThan(3); // the scan follows the graph
    }
  });

  it('gives types through the exports map to ESM, CJS and Node10-resolution consumers', () => {
    for (const config of ['tsconfig.json', 'tsconfig.node10.json']) {
      const run = node(tsc, '-p', join('test-projects/ts', config));
      expect(run.stdout + run.stderr).toBe('');
      expect(run.status).toBe(0);
    }
  }, 60_000);

  it('packs only the builds, package.json and README', () => {
    const out = execFileSync('npm', ['pack', '--dry-run', '--json'], { cwd: pkgDir, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const files: string[] = JSON.parse(out)[0].files.map((f: { path: string }) => f.path);
    expect(files.every((f) => /^(dist\/(esm|cjs)\/|package\.json$|README\.md$)/.test(f))).toBe(true);
    for (const f of ['dist/esm/index.js', 'dist/esm/web.d.ts', 'dist/cjs/index.js', 'dist/cjs/index.d.ts', 'dist/cjs/package.json', 'README.md']) {
      expect(files).toContain(f);
    }
  }, 60_000);
});
