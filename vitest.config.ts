import { defineConfig } from 'vitest/config';

// One runner for every test. Tests isolate their data (temp dirs, port 0);
// none depends on another's order or ids.
export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    globalSetup: ['tests/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    // `npm test` asks for a JSON report too (FLOWPORT_TEST_REPORT) to print each phase's slowest files.
    reporters: process.env.FLOWPORT_TEST_REPORT
      ? ['default', ['json', { outputFile: process.env.FLOWPORT_TEST_REPORT }]]
      : ['default'],
    // Every test must assert something: a test that returns early or only runs code fails.
    expect: { requireAssertions: true },
  },
});
