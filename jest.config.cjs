/**
 * Jest runs the TypeScript sources through ts-jest (TypeScript 6.0, see the
 * README for why), compiled to CommonJS in memory; type checking is its own
 * step (`npm run typecheck`), so the transform only transpiles.
 */
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  moduleNameMapper: {
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
