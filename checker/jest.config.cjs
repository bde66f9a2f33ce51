/**
 * The checker's tests, as the library's (../jest.config.cjs): ts-jest
 * transpiles only, type checking is `npm run typecheck`. The root's
 * `npm test` runs this project beside the library's; `npm test` here runs it
 * alone. The library is read from its sources (the checker's imports of
 * `express-api-conventions` and its subpaths map to ../src, as in
 * ../authorization-server/jest.config.cjs), so the tests need no build; the
 * tests use the library and the reference server of this repository as
 * fixtures (apps to check).
 */
/** @type {import('jest').Config} */
module.exports = {
  displayName: 'checker',
  testEnvironment: 'node',
  // The library keeps process-wide registries on globalThis (error entries, document parts, key sets), as a
  // process does; Jest's soft clean-up of globals between files wraps them again in every file until the stack overflows.
  testEnvironmentOptions: { globalsCleanup: 'off' },
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Every security event published in a test file is scanned for secrets (../CONTRIBUTING.md).
  setupFilesAfterEnv: ['<rootDir>/../test/support/event-scan.setup.ts'],
  moduleNameMapper: {
    '^express-api-conventions$': '<rootDir>/../src/index.ts',
    '^express-api-conventions/(.*)$': '<rootDir>/../src/$1/index.ts',
    // Sources import './x.js' (ESM style); in tests that is './x.ts'.
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: {
    '^.+\\.ts$': [
      'ts-jest',
      {
        tsconfig: {
          module: 'commonjs',
          moduleResolution: 'node10',
          ignoreDeprecations: '6.0',
          isolatedModules: true,
          esModuleInterop: true,
          target: 'ES2022',
          types: ['node', 'jest'],
        },
      },
    ],
  },
  testTimeout: 30000,
};
