import { spawnSync } from 'node:child_process';

/**
 * Jest runs TypeScript as native ESM (Probot 14 is ESM-only), which needs Node's
 * `--experimental-vm-modules`. `npm test` sets it; so that a bare `npx jest …` works the same, a Jest
 * started without it runs itself again with it (the same arguments, output and exit code).
 */
const VM_MODULES = '--experimental-vm-modules';
const nodeOptions = process.env.NODE_OPTIONS ?? '';
if (!process.execArgv.includes(VM_MODULES) && !nodeOptions.split(/\s+/).includes(VM_MODULES)) {
  const again = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, NODE_OPTIONS: `${nodeOptions} ${VM_MODULES}`.trim() },
  });
  process.exit(again.status ?? 1);
}

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
  // Transpile only (isolatedModules): types are checked once by `npm run typecheck`; a type-checking
  // transform took ~20 s per test file on 2 cores and made CI outrun its 90 minutes.
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json', isolatedModules: true }],
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
  // The native runtime's tests run in their own project (`npm run test:native`, counted apart by .ci/run).
  testPathIgnorePatterns: ['/node_modules/', '\\.pg\\.test\\.ts$', '<rootDir>/test/native/'],
};

const nativeProject = {
  ...base,
  displayName: 'native',
  testMatch: ['<rootDir>/test/native/**/*.test.ts'],
};

export default {
  projects: process.env.VERDICT_TEST_PG
    ? [pgProject]
    : process.env.VERDICT_TEST_NATIVE
      ? [nativeProject]
      : [defaultProject],
  testTimeout: 30000,
  // Jest's ESM module registries leak across test files: on 2 cores (one worker, which Jest would run in
  // its own process) the whole suite grew past Node's heap limit. With a limit, tests run in a worker that
  // is restarted when it holds more than this after a file.
  workerIdleMemoryLimit: '1GB',
};
