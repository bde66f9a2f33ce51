/**
 * Jest runs the TypeScript sources through ts-jest (TypeScript 6.0, see the
 * README for why), compiled to CommonJS in memory; type checking is its own
 * step (`npm run typecheck`), so the transform only transpiles.
 *
 * Three projects: the library's tests (test/) and those of the two workspace
 * packages, each with its own configuration (checker/jest.config.cjs,
 * authorization-server/jest.config.cjs), so that `npm test` at the root runs
 * them all.
 */
/** @type {import('jest').Config} */
module.exports = {
  testTimeout: 30000,
  projects: [
    {
      displayName: 'library',
      testEnvironment: 'node',
      // The library keeps process-wide registries on globalThis (error entries, document parts, key sets), as a
      // process does; Jest's soft clean-up of globals between files wraps them again in every file until the stack overflows.
      testEnvironmentOptions: { globalsCleanup: 'off' },
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.test.ts'],
      // Every security event published in a test file is scanned for secrets (CONTRIBUTING.md).
      setupFilesAfterEnv: ['<rootDir>/test/support/event-scan.setup.ts'],
      moduleNameMapper: {
        // Tests that need tokens issued use the authorization server's sources, which import the library by name.
        '^express-api-conventions-authorization-server$': '<rootDir>/authorization-server/src/index.ts',
        '^express-api-conventions$': '<rootDir>/src/index.ts',
        '^express-api-conventions/(.*)$': '<rootDir>/src/$1/index.ts',
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
    },
    '<rootDir>/checker',
    '<rootDir>/authorization-server',
  ],
};
