// Runs once before the test files: drops the PostgreSQL schemas an earlier, killed test run
// left behind (their creating process is gone). Skipped when PostgreSQL is not reachable;
// the PostgreSQL tests themselves then report that.
// Also points every process the tests start at one Node compile cache (TEST_COMPILE_CACHE).
import { sweepStaleSchemas } from './store.ts';
import { TEST_COMPILE_CACHE } from './test-environment.ts';

export default async function setup(): Promise<void> {
  process.env.NODE_COMPILE_CACHE ||= TEST_COMPILE_CACHE;
  try {
    const dropped = await sweepStaleSchemas();
    if (dropped.length > 0) console.log(`[test setup] dropped ${dropped.length} schema(s) left by killed test runs`);
  } catch {
    // PostgreSQL is down or unreachable: nothing to sweep.
  }
}
