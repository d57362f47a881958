// Local runs of this package's tests, before or besides the root config:
//   NODE_OPTIONS=--experimental-vm-modules npx jest -c verifier/jest.config.cjs
// Same mode as the root: ESM through ts-jest, ".js" stripped from relative imports.
module.exports = {
  rootDir: __dirname,
  preset: 'ts-jest/presets/default-esm',
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: '<rootDir>/tsconfig.json' }] },
};
