// Refreshes vendor/scalar/standalone.js, Scalar's standalone browser bundle of the API reference (issue 31): `node
// scripts/vendor-scalar.mjs 1.72.1`. The bundle is all the service uses of @scalar/api-reference (served at /docs);
// installed as a dependency, its two dozen packages declare Node >= 22 and `npm ci` warned (EBADENGINE) on the Node 20
// the project runs on. `npm pack` fetches the release's tarball from the registry and checks it against the
// registry's integrity; this copies the bundle out and prints its SHA-256 for vendor/scalar/README.md.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const version = process.argv[2];
if (!/^\d+\.\d+\.\d+$/.test(version ?? '')) {
  console.error('usage: node scripts/vendor-scalar.mjs <version of @scalar/api-reference, e.g. 1.72.1>');
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), 'scalar-'));
try {
  const [packed] = JSON.parse(execFileSync('npm', ['pack', `@scalar/api-reference@${version}`, '--json', '--pack-destination', dir], { encoding: 'utf8' }));
  execFileSync('tar', ['-xzf', join(dir, packed.filename), '-C', dir, 'package/dist/browser/standalone.js']);
  const bundle = readFileSync(join(dir, 'package/dist/browser/standalone.js'));
  writeFileSync(fileURLToPath(new URL('../vendor/scalar/standalone.js', import.meta.url)), bundle);
  console.log(`vendor/scalar/standalone.js: @scalar/api-reference ${version} (${packed.integrity}), sha256 ${createHash('sha256').update(bundle).digest('hex')}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
