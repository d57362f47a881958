// `npm start` and `npm run split`: build only when a source changed since the last build, then run the built entry
// IN THIS PROCESS (no child): SIGTERM and SIGINT sent to this pid reach the server's own drain, and nothing is left
// behind. package.json runs it as `exec node scripts/start.mjs`, so the shell npm starts is replaced by this process
// and the signal npm forwards reaches it too.
//
//   node scripts/start.mjs            the whole service (dist/server/main.js)
//   node scripts/start.mjs split      the split deployment (dist/scripts/split.js)
//   node scripts/start.mjs dev        the whole service in development mode (`npm run dev`: NODE_ENV=development, so
//                                     the GraphQL explorer and introspection are on; restart it to rebuild after a change)
//   node scripts/start.mjs --stamp-begin / --stamp   the first and last steps of `npm run build`: dist/ matches the sources
//
// The build stamp (dist/.build-stamp) is a hash of the path, size and mtime of every source the build reads
// (TypeScript, schemas, migrations, docs, console, verifier, package files). Equal hash: the build is skipped.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STAMP = join(ROOT, 'dist', '.build-stamp');
const SOURCE_DIRS = ['db', 'subgraphs', 'gateway', 'rest-facade', 'jobs', 'server', 'scripts', 'verifier', 'docs', 'portal'];
const SOURCE_FILES = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'CHANGELOG.md'];
const SKIP = new Set(['node_modules', 'dist', 'test', '.git']);
const ENTRIES = { main: 'dist/server/main.js', split: 'dist/scripts/split.js', dev: 'dist/server/main.js' };

/** The hash of every build input's path, size and mtime. */
export function sourceFingerprint() {
  const hash = createHash('sha256');
  const add = (rel) => {
    const s = statSync(join(ROOT, rel));
    hash.update(`${rel}\0${s.size}\0${s.mtimeMs}\n`);
  };
  const walk = (rel) => {
    for (const entry of readdirSync(join(ROOT, rel), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (SKIP.has(entry.name)) continue;
      const path = `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) add(path);
    }
  };
  for (const dir of SOURCE_DIRS) if (existsSync(join(ROOT, dir))) walk(dir);
  for (const file of SOURCE_FILES) if (existsSync(join(ROOT, file))) add(file);
  return hash.digest('hex');
}

/** True when dist/ was built from the sources as they are now. */
export function buildIsCurrent(entry) {
  if (!existsSync(join(ROOT, entry)) || !existsSync(STAMP)) return false;
  return readFileSync(STAMP, 'utf8').trim() === sourceFingerprint();
}

async function main() {
  const arg = process.argv[2] ?? 'main';
  // `npm run build` begins with --stamp-begin (the sources as the build reads them) and ends with --stamp: a source
  // edited during the build leaves a stamp that does not match it, so the next start builds again.
  if (arg === '--stamp-begin') {
    mkdirSync(join(ROOT, 'dist'), { recursive: true });
    rmSync(STAMP, { force: true });
    writeFileSync(`${STAMP}.next`, `${sourceFingerprint()}\n`);
    return;
  }
  if (arg === '--stamp') {
    if (existsSync(`${STAMP}.next`)) renameSync(`${STAMP}.next`, STAMP);
    else writeFileSync(STAMP, `${sourceFingerprint()}\n`);
    return;
  }
  const entry = ENTRIES[arg];
  if (!entry) {
    console.error(`unknown entry "${arg}": one of ${Object.keys(ENTRIES).join(', ')}`);
    process.exit(2);
  }
  if (buildIsCurrent(entry)) {
    console.log('start: the build is current (dist/.build-stamp matches the sources): skipping npm run build');
  } else {
    console.log('start: sources changed since the last build: running npm run build');
    const started = Date.now();
    const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) {
      console.error(`start: npm run build failed (${build.status ?? build.signal})`);
      process.exit(1);
    }
    console.log(`start: built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  process.env.NODE_ENV = arg === 'dev' ? 'development' : 'production';
  // The entry checks `process.argv[1]` to know it is the program being run (split.js does).
  const path = join(ROOT, entry);
  process.argv[1] = path;
  await import(pathToFileURL(path).href);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
