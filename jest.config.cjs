/**
 * Jest in ESM mode (agenda and PGlite are ESM-only); esbuild strips the types (test/esbuild-transform.cjs),
 * `npm run typecheck` type-checks.
 *
 * Three tiers, each a Jest project (`npm test -- --selectProjects unit`):
 * - unit: pure logic beside its code (subgraphs/, verifier/test/), no database;
 * - service: the service in the test process against a real database (test/*.test.ts);
 * - processes: tests that start processes of their own (the split deployment, faults, browsers, npm pack).
 */
const shared = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // The verifier by its package name (verifier/examples import it as a receiver does), from its sources: its
    // exports map points at dist/, which only `npm run build` makes.
    '^@svc/webhook-verifier$': '<rootDir>/verifier/src/index.ts',
    '^@svc/webhook-verifier/(web|fetch|express)$': '<rootDir>/verifier/src/$1.ts',
  },
  transform: {
    '^.+\\.ts$': '<rootDir>/test/esbuild-transform.cjs',
  },
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  // Each test file loads the whole service into the worker's module registry, and ESM module registries are not
  // freed: a worker above this after a file is replaced by a fresh one (one worker ran out of its 4 GB heap). Kept
  // low: on a larger heap every garbage collection takes longer (a quarter of the CPU of 48 files run in one process).
  workerIdleMemoryLimit: '500MB',
};

const { GROUP_COUNT, PROCESS_FILES, namesTestFile, serviceFiles } = require('./test/groups.cjs');

const PROCESSES = [
  '<rootDir>/test/faults/**/*.test.ts',
  '<rootDir>/test/browser/**/*.test.ts',
  ...PROCESS_FILES.map((name) => `<rootDir>/test/${name}`),
  '<rootDir>/verifier/test/package.smoke.test.ts',
];

// The service tier's files in groups that share a module registry (test/groups.cjs), but each file alone when Jest's
// command line names one (`npm test -- test/comments.test.ts`).
const SERVICE = namesTestFile(process.argv.slice(2))
  ? ['<rootDir>/test/*.test.ts']
  : [
      ...Array.from({ length: GROUP_COUNT }, (_, i) => `<rootDir>/test/groups/${String(i + 1).padStart(2, '0')}.test.ts`),
      ...serviceFiles().alone.map((name) => `<rootDir>/test/${name}`),
    ];

module.exports = {
  // A test or hook that starts a service and runs a small flow takes seconds; on a loaded 2-core CI machine it has
  // taken more than 30 (beforeAll hooks timed out): 60 s, so load alone does not fail a run.
  testTimeout: 60000,
  // The processes tier spread over the run, PGlite files early (test/sequencer.cjs).
  testSequencer: '<rootDir>/test/sequencer.cjs',
  // Each tier's time and the ten slowest files, after Jest's own summary.
  reporters: ['default', '<rootDir>/test/timings-reporter.cjs'],
  projects: [
    {
      ...shared,
      displayName: 'unit',
      testMatch: ['<rootDir>/subgraphs/**/*.test.ts', '<rootDir>/verifier/test/**/*.test.ts'],
      testPathIgnorePatterns: [...shared.testPathIgnorePatterns, '/verifier/test/package\\.smoke\\.test\\.ts$'],
    },
    {
      ...shared,
      displayName: 'service',
      testMatch: SERVICE,
      testPathIgnorePatterns: [...shared.testPathIgnorePatterns, ...PROCESS_FILES.map((name) => `/test/${name.replace(/[.]/g, '\\.')}$`)],
    },
    { ...shared, displayName: 'processes', testMatch: PROCESSES },
  ],
};
