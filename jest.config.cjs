/**
 * Jest in ESM mode (agenda and PGlite are ESM-only); ts-jest transpiles, `npm run typecheck` type-checks.
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
    '^.+\\.ts$': ['ts-jest', { useESM: true, diagnostics: false }],
  },
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  // Each test file loads the whole service into the worker's module registry, and ESM module registries are not
  // freed: a worker above this after a file is replaced by a fresh one (one worker ran out of its 4 GB heap).
  workerIdleMemoryLimit: '1500MB',
};

const PROCESSES = [
  '<rootDir>/test/faults/**/*.test.ts',
  '<rootDir>/test/browser/**/*.test.ts',
  '<rootDir>/test/split.test.ts',
  '<rootDir>/test/realtime-processes.test.ts',
  '<rootDir>/verifier/test/package.smoke.test.ts',
];

module.exports = {
  testTimeout: 30000,
  // The costliest files first (test/sequencer.cjs): a long file started last lengthens the whole run.
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
      testMatch: ['<rootDir>/test/*.test.ts'],
      testPathIgnorePatterns: [...shared.testPathIgnorePatterns, '/test/split\\.test\\.ts$', '/test/realtime-processes\\.test\\.ts$'],
    },
    { ...shared, displayName: 'processes', testMatch: PROCESSES },
  ],
};
