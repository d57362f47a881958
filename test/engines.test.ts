// Issue 31: `npm ci` on the Node the project declares prints no EBADENGINE warning. npm warns for each installed
// package whose `engines.node` the running Node does not satisfy; the lockfile records every package's `engines`, so
// this checks them all against the oldest Node of the project's own `engines` (and the Node running the tests).
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import semver from 'semver';

const root = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(new URL('../package-lock.json', import.meta.url), 'utf8')) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
};

describe('engines', () => {
  const oldest = semver.minVersion(root.engines.node)!.version;

  it.each([
    ['the oldest Node the project declares', oldest],
    ['the Node running the tests', process.version],
  ])('every package of the lockfile runs on %s (%s): npm ci warns of none', (_what, node) => {
    const refused = Object.entries(lock.packages)
      .filter(([path, p]) => path !== '' && p.engines && !Array.isArray(p.engines) && p.engines.node)
      .filter(([, p]) => !semver.satisfies(node, (p.engines as { node: string }).node, { includePrerelease: true }))
      .map(([path, p]) => `${path.replace(/^.*node_modules\//, '')}@${p.version} wants node ${(p.engines as { node: string }).node}`);
    expect(refused).toEqual([]);
  });

  it('the check sees a package that wants a newer Node (the rule is not vacuous)', () => {
    expect(semver.satisfies(oldest, '>=22')).toBe(false);
    expect(Object.values(lock.packages).filter((p) => p.engines && !Array.isArray(p.engines) && p.engines.node).length).toBeGreaterThan(100);
  });
});
