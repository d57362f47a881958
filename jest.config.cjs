/** Jest in ESM mode (agenda and PGlite are ESM-only); ts-jest transpiles, `npm run typecheck` type-checks. */
module.exports = {
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
  testMatch: ['<rootDir>/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  testTimeout: 30000,
  // Each test file loads the whole service into the worker's module registry, and ESM module registries are not
  // freed: a worker above this after a file is replaced by a fresh one (one worker ran out of its 4 GB heap).
  workerIdleMemoryLimit: '1500MB',
};
