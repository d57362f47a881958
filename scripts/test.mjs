// `npm test`: picks the database, type-checks, runs Jest, and ends with a plain `N passed, N failed` line.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

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

const typecheck = spawnSync('npx', ['tsc', '-p', 'tsconfig.json', '--noEmit'], { stdio: 'inherit', env });
const typecheckVerifier = spawnSync('npm', ['run', 'typecheck', '-w', 'verifier'], { stdio: 'inherit', env });
if (typecheck.status !== 0 || typecheckVerifier.status !== 0) {
  console.log('0 passed, 1 failed');
  console.error('Type-check failed.');
  process.exit(1);
}

const prepare = spawnSync('node', ['--import', 'tsx', 'scripts/prepare-test-db.ts'], { stdio: 'inherit', env });
if (prepare.status !== 0) {
  console.log('0 passed, 1 failed');
  console.error('Preparing the test database failed.');
  process.exit(1);
}

const results = '.jest-results.json';
rmSync(results, { force: true });
const args = ['jest', '--json', `--outputFile=${results}`, ...process.argv.slice(2)];
if (!url) args.push('--runInBand');
const run = spawnSync('npx', args, { stdio: 'inherit', env });

let passed = 0;
let failed = 0;
try {
  const summary = JSON.parse(readFileSync(results, 'utf8'));
  passed = summary.numPassedTests;
  failed = summary.numFailedTests + summary.numRuntimeErrorTestSuites;
} catch {
  failed = 1;
}
const ok = run.status === 0 && failed === 0 && passed > 0;
console.log(`${passed} passed, ${failed} failed`);
process.exit(ok ? 0 : 1);
