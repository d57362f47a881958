// Builds the creator console's browser assets (issue 16) into dist/portal/console/, part of `npm run build`:
// portal/console/client/index.ts is bundled and minified with esbuild (one IIFE file for ES2020 browsers, no eval)
// to console.js, and portal/console/console.css is copied beside it. The service serves them at
// /console/assets/console.{js,css} (rest-facade/src/portal/console.ts). The browser tests call buildConsole() in
// beforeAll, since they run from the sources without `npm run build`.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const CONSOLE_ASSETS_DIR = `${ROOT}dist/portal/console`;

/** Bundles the console's script and copies its stylesheet; answers the files written. */
export async function buildConsole(outDir = CONSOLE_ASSETS_DIR): Promise<string[]> {
  mkdirSync(outDir, { recursive: true });
  await build({
    entryPoints: [`${ROOT}portal/console/client/index.ts`],
    outfile: `${outDir}/console.js`,
    bundle: true,
    minify: true,
    format: 'iife',
    target: 'es2020',
    platform: 'browser',
    legalComments: 'none',
    logLevel: 'warning',
  });
  copyFileSync(`${ROOT}portal/console/console.css`, `${outDir}/console.css`);
  return [`${outDir}/console.js`, `${outDir}/console.css`];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const files = await buildConsole();
  console.log(`console assets: ${files.map((f) => f.slice(ROOT.length)).join(', ')}`);
}
