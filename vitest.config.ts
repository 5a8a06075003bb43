import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// Node's compile cache keeps each module's type-stripped, compiled code on disk, so the second and
// later test files a worker (and every server or CLI a test spawns) imports do not compile the
// application again: the suite spent a quarter of its time importing.
process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), 'flowport-node-compile-cache');

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
    // Node runs the TypeScript itself (type stripping, as `npm start` and the CLI do) instead of
    // Vite's module runner: half the import time per test file, and the code under test loads the
    // way it does in production. Nothing here uses vi.mock or import.meta.vitest, which need the runner.
    experimental: { viteModuleRunner: false, nodeLoader: false },
    // `npm test` asks for a JSON report too (FLOWPORT_TEST_REPORT) to print each phase's slowest files.
    reporters: process.env.FLOWPORT_TEST_REPORT
      ? ['default', ['json', { outputFile: process.env.FLOWPORT_TEST_REPORT }]]
      : ['default'],
    // Every test must assert something: a test that returns early or only runs code fails.
    expect: { requireAssertions: true },
  },
});
