/** Jest runs TypeScript as native ESM (Probot 14 is ESM-only). */
const base = {
  preset: 'ts-jest/presets/default-esm',
  testEnvironment: 'node',
  // No network in any test, and no nock interceptor left unused (test/setup/network.ts).
  setupFilesAfterEnv: ['<rootDir>/test/setup/network.ts'],
  // The e2b SDK through its ES module entry (test/setup/resolver.cjs says why).
  resolver: '<rootDir>/test/setup/resolver.cjs',
  // The Test Lab corpus holds other projects' code (package.json files, tests): never modules of ours.
  modulePathIgnorePatterns: ['<rootDir>/fixtures/'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
  },
};

const pgProject = {
  ...base,
  displayName: 'pg',
  // Store and queue tests again, on PostgreSQL (needs TEST_DATABASE_URL or DATABASE_URL).
  testMatch: ['<rootDir>/test/**/*.pg.test.ts'],
};

const defaultProject = {
  ...base,
  displayName: 'default',
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '\\.pg\\.test\\.ts$'],
};

export default {
  projects: process.env.VERDICT_TEST_PG ? [pgProject] : [defaultProject],
  testTimeout: 30000,
};
