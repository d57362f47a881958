// Packs the webhook verifier (verifier/) as receivers install it: `npm pack` of a fresh build, written to
// dist/portal/verifier/webhook-verifier-<version>.tgz, which the service serves at
// /docs/webhooks/webhook-verifier-<version>.tgz (rest-facade/src/portal/docs.ts). Part of `npm run build`; tests run it
// too (they run from the sources).
//
// The build happens in a temporary copy of the package, so it never touches verifier/dist while another build or test
// uses it, and the tarball replaces the old one in one rename (a request never gets half a file).
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const OUT = join(ROOT, 'dist', 'portal', 'verifier');
const require = createRequire(import.meta.url);

/** The file name the service serves the tarball under (no scope in it: a URL path segment). */
export const tarballName = (version) => `webhook-verifier-${version}.tgz`;

function main() {
  const { version } = JSON.parse(readFileSync(join(ROOT, 'verifier', 'package.json'), 'utf8'));
  const work = mkdtempSync(join(tmpdir(), 'verifier-pack-'));
  try {
    for (const entry of ['package.json', 'README.md', 'src', 'scripts', 'tsconfig.json', 'tsconfig.esm.json', 'tsconfig.cjs.json']) {
      cpSync(join(ROOT, 'verifier', entry), join(work, entry), { recursive: true });
    }
    const env = { ...process.env, NODE_OPTIONS: '' };
    const tsc = require.resolve('typescript/bin/tsc');
    const typeRoots = join(ROOT, 'node_modules', '@types'); // the copy has no node_modules of its own
    for (const config of ['tsconfig.esm.json', 'tsconfig.cjs.json']) {
      execFileSync(process.execPath, [tsc, '-p', config, '--typeRoots', typeRoots], { cwd: work, env, stdio: 'pipe' });
    }
    execFileSync(process.execPath, ['scripts/mark-dist.cjs'], { cwd: work, env, stdio: 'pipe' });
    const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: work, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
    mkdirSync(OUT, { recursive: true });
    const target = join(OUT, tarballName(version));
    renameSync(join(work, packed[0].filename), `${target}.${process.pid}`);
    renameSync(`${target}.${process.pid}`, target);
    console.log(`verifier: ${target.slice(ROOT.length)} (${packed[0].size} bytes, ${packed[0].entryCount} files)`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
