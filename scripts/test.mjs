// `npm test`: picks the database, type-checks, runs Jest, and ends with a plain `N passed, N failed` line.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const startedAt = Date.now();

const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/test';

async function answers(url) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

let url = process.env.TEST_DATABASE_URL;
if (url && !(await answers(url))) {
  console.error(`TEST_DATABASE_URL does not answer: ${url}`);
  process.exit(1);
}
if (!url && (await answers(DEFAULT_URL))) url = DEFAULT_URL;
console.log(url ? `Testing against PostgreSQL at ${url.replace(/\/\/[^@]*@/, '//')}` : 'No PostgreSQL answered: testing against embedded PGlite');

const env = { ...process.env, SVC_TEST_DATABASE_URL: url ?? '', NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --experimental-vm-modules`.trim() };
// Webhook receivers in tests serve HTTPS with a certificate of this test CA; Node reads the variable at start-up.
env.NODE_EXTRA_CA_CERTS = fileURLToPath(new URL('../test/fixtures/tls/ca.pem', import.meta.url));

// TEST_SKIP_TYPECHECK=1 skips the type-check (running one file while other work in the tree does not compile yet).
const skipTypecheck = process.env.TEST_SKIP_TYPECHECK === '1';
const typecheck = skipTypecheck ? { status: 0 } : spawnSync('npx', ['tsc', '-p', 'tsconfig.json', '--noEmit'], { stdio: 'inherit', env });
const typecheckVerifier = skipTypecheck ? { status: 0 } : spawnSync('npm', ['run', 'typecheck', '-w', 'verifier'], { stdio: 'inherit', env });
if (typecheck.status !== 0 || typecheckVerifier.status !== 0) {
  console.log('0 passed, 1 failed');
  console.error('Type-check failed.');
  process.exit(1);
}

// The reference pages' assets (dist/portal/docs/): any test that opens /docs or a browser's GET /graphql needs them.
const docs = spawnSync('node', ['scripts/build-docs.mjs'], { stdio: 'inherit', env: { ...env, NODE_OPTIONS: '' } });
if (docs.status !== 0) {
  console.log('0 passed, 1 failed');
  console.error('Building the docs assets failed.');
  process.exit(1);
}

// Jest workers: on PostgreSQL each has a database of its own, so files run side by side; most of a file's time is
// spent waiting (on the database, on child processes, on sockets), so more workers than cores pays on CI's two.
// Embedded PGlite runs in band: each file opens PGlite in memory, which is CPU- and memory-heavy.
const jestArgs = process.argv.slice(2);
const asked = workersAsked(jestArgs);
const workers = !url ? 1 : asked ?? Number(process.env.TEST_WORKERS || 4);
if (url) {
  const prepare = spawnSync('node', ['--import', 'tsx', 'scripts/prepare-test-db.ts', url, String(workers)], { stdio: 'inherit', env });
  if (prepare.status !== 0) {
    console.log('0 passed, 1 failed');
    console.error('Preparing the test databases failed.');
    process.exit(1);
  }
}

const results = '.jest-results.json';
rmSync(results, { force: true });
// --forceExit: a handle some test leaves open (a socket, a child process) must not keep the run from ending.
const args = ['jest', '--json', `--outputFile=${results}`, '--forceExit', ...jestArgs];
if (!url) args.push('--runInBand');
else if (asked === undefined) args.push(`--maxWorkers=${workers}`);
// A hard ceiling well inside CI's 30 minutes: a hung run is stopped (Jest and its workers, as one process group)
// and still ends with its summary line.
const JEST_LIMIT_MS = Number(process.env.TEST_TIME_LIMIT_MS || 27 * 60_000);
const jest = spawn('npx', args, { stdio: 'inherit', env, detached: true });
const timer = setTimeout(() => {
  console.error(`Jest did not finish within ${JEST_LIMIT_MS / 60_000} minutes: stopping it.`);
  process.kill(-jest.pid, 'SIGKILL');
}, JEST_LIMIT_MS);
// Its own process group no longer hears a terminal's Ctrl-C: pass it on.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.kill(-jest.pid, signal));
const run = await new Promise((resolve) => jest.once('exit', (status, signal) => resolve({ status, signal })));
clearTimeout(timer);

let passed = 0;
let failed = 0;
try {
  const summary = JSON.parse(readFileSync(results, 'utf8'));
  passed = summary.numPassedTests;
  failed = summary.numFailedTests + summary.numRuntimeErrorTestSuites;
  if (run.signal) failed += 1;
} catch {
  failed = 1;
}
const ok = run.status === 0 && failed === 0 && passed > 0;
console.log(`npm test wall time: ${((Date.now() - startedAt) / 1000).toFixed(0)} s (type-check, databases and Jest with ${workers} worker(s))`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(ok ? 0 : 1);

/** The worker count named on the command line (`-i`, `--runInBand`, `-w N`, `--maxWorkers=N`), if any. */
function workersAsked(argv) {
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === '-i' || argv[i] === '--runInBand') return 1;
    const inline = /^--maxWorkers=(\d+)$/.exec(argv[i]);
    if (inline) return Number(inline[1]);
    if ((argv[i] === '-w' || argv[i] === '--maxWorkers') && /^\d+$/.test(argv[i + 1] ?? '')) return Number(argv[i + 1]);
  }
  return undefined;
}
