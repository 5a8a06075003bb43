// `npm test`: every check, in the order CI runs them. Stops at the first failure.
//   typecheck → lint → format → generated files fresh → build the docs site → PostgreSQL reachable
//   → all tests on SQLite (vitest) → the non-browser tests again on PostgreSQL.
// The second run sets FLOWPORT_TEST_STORE=postgres: every test server (and every test
// that opens its store through tests/helpers/store.ts) gets a fresh schema in
// FLOWPORT_TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), dropped
// when it closes. Not repeated there: the browser tests (tests/site/*.browser.test.ts,
// they exercise the docs site, not the store) and the files that pin PostgreSQL already
// (tests/scale/**, *postgres.test.ts).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { redactUrl } from '../api/src/store/postgres.ts';
import { TEST_STORE_ENV, testDatabaseUrl } from '../tests/helpers/store.ts';

const root = join(import.meta.dirname, '..');
const env = { ...process.env, FORCE_COLOR: process.env.CI ? '0' : '1' };

type Step = [name: string, run: () => Promise<boolean> | boolean];

function npm(args: string[], extraEnv: Record<string, string> = {}): boolean {
  const r = spawnSync('npm', args, { cwd: root, stdio: 'inherit', env: { ...env, ...extraEnv } });
  return r.status === 0;
}

async function postgresReachable(): Promise<boolean> {
  const url = testDatabaseUrl();
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
    const r = await client.query<{ v: string }>('SHOW server_version');
    console.log(`PostgreSQL ${r.rows[0]?.v} at ${redactUrl(url)}`);
    return true;
  } catch (err) {
    console.error(
      `PostgreSQL is not reachable at ${redactUrl(url)} (${err instanceof Error ? err.message : err}).\n` +
        'The tests run on SQLite and on PostgreSQL. Start PostgreSQL (.ci/run starts it when it is down), ' +
        'or set FLOWPORT_TEST_DATABASE_URL to a database where the tests may create and drop schemas.',
    );
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

const steps: Step[] = [
  ['typecheck', () => npm(['run', '--silent', 'typecheck'])],
  ['lint', () => npm(['run', '--silent', 'lint'])],
  ['format', () => npm(['run', '--silent', 'format:check'])],
  ['generated OpenAPI is fresh', () => npm(['run', '--silent', 'check:openapi'])],
  ['build the docs site', () => npm(['run', '--silent', 'build:site'])],
  ['PostgreSQL reachable', postgresReachable],
  ['tests on SQLite', () => npm(['run', '--silent', 'test:unit'], { [TEST_STORE_ENV]: 'sqlite' })],
  [
    'tests on PostgreSQL (non-browser)',
    () =>
      npm(
        [
          'run',
          '--silent',
          'test:unit',
          '--',
          '--exclude',
          'tests/site/**/*.browser.test.ts',
          '--exclude',
          'tests/scale/**',
          '--exclude',
          'tests/**/*postgres.test.ts',
        ],
        { [TEST_STORE_ENV]: 'postgres' },
      ),
  ],
];

for (const [name, run] of steps) {
  const started = Date.now();
  console.log(`\n=== ${name}`);
  const ok = await run();
  console.log(`=== ${name}: ${ok ? 'ok' : 'FAILED'} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  if (!ok) process.exit(1);
}
