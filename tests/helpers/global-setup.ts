// Runs once before the test files: drops the PostgreSQL schemas an earlier, killed test run
// left behind (their creating process is gone). Skipped when PostgreSQL is not reachable;
// the PostgreSQL tests themselves then report that.
import { sweepStaleSchemas } from './store.ts';

export default async function setup(): Promise<void> {
  try {
    const dropped = await sweepStaleSchemas();
    if (dropped.length > 0) console.log(`[test setup] dropped ${dropped.length} schema(s) left by killed test runs`);
  } catch {
    // PostgreSQL is down or unreachable: nothing to sweep.
  }
}
