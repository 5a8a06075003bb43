// Shared by the benchmarks: start Flowport (and the Shopify stand-in) as child
// processes the way an operator runs them, wait until they answer, and stop them.
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FLOW_TRIGGER_MUTATION } from '../../api/src/handoff/flow-client.ts';
import type { SandboxCredentials } from '../../api/src/sandbox/bootstrap.ts';
import type { Db } from '../../api/src/store/db.ts';
import { openStore } from '../../api/src/store/open.ts';
import { START_ENV } from '../start-env.js';
import { freePort } from '../../tests/helpers/ports.ts';
import { createPgSchema, testDatabaseUrl } from '../../tests/helpers/store.ts';

export { freePort };

const root = join(import.meta.dirname, '..', '..');
const NODE = process.execPath;

/**
 * The Node options `npm start` passes (package.json's start script, e.g. V8 heap sizes): the
 * benchmarks run the server with the same ones. BENCH_NODE_FLAGS replaces them (space-separated;
 * empty for none) to measure another setting.
 */
export function startNodeFlags(tree = root): string[] {
  if (process.env.BENCH_NODE_FLAGS !== undefined) return process.env.BENCH_NODE_FLAGS.split(' ').filter(Boolean);
  const pkg = JSON.parse(readFileSync(join(tree, 'package.json'), 'utf8')) as { scripts?: { start?: string } };
  return (pkg.scripts?.start ?? '').split(/\s+/).filter((a) => a.startsWith('--'));
}

export type BenchStore = 'sqlite' | 'postgres';

export function parseStore(value: string | undefined): BenchStore {
  if (value === 'sqlite' || value === 'postgres') return value;
  throw new Error(`--store must be sqlite or postgres, got ${value}`);
}

export async function waitFor(check: () => Promise<boolean>, child: ChildProcess, what: string): Promise<void> {
  for (let i = 0; i < 6000; i++) {
    if (child.exitCode !== null) throw new Error(`${what} exited early`);
    try {
      if (await check()) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not start`);
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export interface BenchFlowport {
  url: string;
  creds: SandboxCredentials;
  storeLabel: string;
  /** The Flowport process (for CPU accounting). */
  pid: number;
  /** Its data directory (the SQLite store, secret.key, sandbox credentials). */
  dataDir: string;
  /** Its PostgreSQL URL (with the schema's search_path), null on SQLite. */
  databaseUrl: string | null;
  /** Opens the process's store from the outside (for setup and checks). */
  openDb(): Promise<Db>;
  stop(): Promise<void>;
}

/**
 * Flowport in sandbox mode on a fresh data dir (and, for postgres, a fresh schema in
 * FLOWPORT_TEST_DATABASE_URL), its sandbox shop lifted to the largest plan so the
 * monthly cap does not end a run. `worker: false` measures intake alone.
 */
export async function startBenchFlowport(options: {
  store: BenchStore;
  worker: boolean;
  /** A command that runs Node for it, e.g. valgrind with its options (bench:instructions). */
  wrap?: readonly string[];
  /** The source tree to run (default this one), e.g. a worktree of another commit (bench:ab). */
  root?: string;
  /**
   * Keep the store between runs (bench:reads): this data dir and, for postgres, this database URL
   * are used as they are and left in place by stop().
   */
  keep?: { dataDir: string; databaseUrl: string | null };
  /** Extra environment for the Flowport process (e.g. FLOWPORT_WORKER_CONCURRENCY_PER_SHOP). */
  env?: Record<string, string>;
  /**
   * FLOWPORT_LOG_LEVEL (default silent); `info` is what `npm start` runs with. Lines go to /dev/null,
   * or with BENCH_SERVER_LOG=<file> to that file (level info unless set here), e.g. to read each
   * request's `duration_ms` as the server saw it.
   */
  logLevel?: 'silent' | 'info';
}): Promise<BenchFlowport> {
  const tree = options.root ?? root;
  const keep = options.keep;
  const dataDir = keep?.dataDir ?? mkdtempSync(join(tmpdir(), 'flowport-bench-'));
  const pg = keep
    ? keep.databaseUrl
      ? { url: keep.databaseUrl, drop: async () => {} }
      : null
    : options.store === 'postgres'
      ? await createPgSchema('bench')
      : null;
  const storeConfig = { dataDir, databaseUrl: pg?.url ?? null };
  const port = await freePort();
  const serverOut = process.env.BENCH_SERVER_LOG ? openSync(process.env.BENCH_SERVER_LOG, 'w') : null;
  // BENCH_CPU_PROF=<dir>: write a V8 CPU profile of the Flowport process there (on exit).
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const [command, ...args] = [
    ...(options.wrap ?? []),
    NODE,
    ...startNodeFlags(tree),
    ...profile,
    join(tree, 'api/src/main.ts'),
  ];
  const child = spawn(command as string, args, {
    cwd: tree,
    env: {
      ...process.env,
      FLOWPORT_DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      FLOWPORT_PUBLIC_URL: `http://127.0.0.1:${port}`,
      FLOWPORT_WORKER: options.worker ? 'on' : 'off',
      FLOWPORT_LOG_LEVEL: options.logLevel ?? (serverOut === null ? 'silent' : 'info'),
      FLOWPORT_SITE_DIR: join(dataDir, 'no-site'),
      // Node's compile cache, as `npm start`'s entry turns it on (scripts/start-entry.js, in the
      // same default directory): warm, it keeps Node's TypeScript stripper out of the process.
      NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? join(tmpdir(), 'node-compile-cache'),
      // And its environment (MALLOC_ARENA_MAX), unless the bench's own sets it.
      ...Object.fromEntries(Object.entries(START_ENV).filter(([name]) => process.env[name] === undefined)),
      ...(pg ? { FLOWPORT_DATABASE_URL: pg.url } : {}),
      ...options.env,
    },
    stdio: serverOut === null ? 'ignore' : ['ignore', serverOut, 'inherit'],
  });
  if (serverOut !== null) closeSync(serverOut); // the child holds its own copy
  const stop = async () => {
    await stopChild(child);
    if (keep) return;
    await pg?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const credsFile = join(dataDir, 'sandbox-credentials.json');
    await waitFor(
      async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok && existsSync(credsFile),
      child,
      'Flowport',
    );
    const creds = JSON.parse(readFileSync(credsFile, 'utf8')) as SandboxCredentials;
    const openDb = () => openStore(storeConfig, { migrate: false });
    const db = await openDb();
    await db.run("UPDATE shops SET plan = 'scale' WHERE id = ?", [creds.shop_id]);
    await db.close();
    return {
      url: `http://127.0.0.1:${port}`,
      creds,
      storeLabel: pg
        ? `PostgreSQL (${new URL(testDatabaseUrl()).host}, ${keep ? 'kept' : 'fresh'} schema, pool of 10)`
        : 'SQLite (WAL; every write fsynced before it is answered)',
      pid: child.pid as number,
      dataDir,
      databaseUrl: pg?.url ?? null,
      openDb,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The Shopify stand-in alone (`flowport sandbox --port N`), as a child process. */
export async function startBenchSandbox(): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(NODE, [join(root, 'api/src/sandbox/server.ts'), '--port', String(port)], {
    cwd: root,
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(async () => (await fetch(`${url}/healthz`)).ok, child, 'sandbox');
  } catch (err) {
    await stopChild(child);
    throw err;
  }
  return { url, stop: () => stopChild(child) };
}

/** One trigger the stand-in recorded (GET /sandbox/shopify/triggers). */
export interface StandInTrigger {
  shop: string;
  handle: string;
  apiVersion: string;
  payload: Record<string, unknown>;
  receivedAt: number;
}

/**
 * The handoff benchmarks' baseline: the same trigger posted by the sender straight to the Shopify
 * stand-in (no Flowport), timed from the request to the stand-in's arrival stamp. It is the floor
 * this machine, this sender and this stand-in give a handoff at that moment; Flowport's rounds
 * alternate with it. `like` is a trigger Flowport delivered (its handle, API version and payload);
 * each call sends it with `Flowport event id` set to `id`, so the stand-in's record tells them apart.
 */
export function standInBaseline(
  sandboxUrl: string,
  like: StandInTrigger,
): (domain: string, id: string) => Promise<{ sentAt: number; ok: boolean }> {
  return async (domain, id) => {
    const sentAt = performance.timeOrigin + performance.now();
    const res = await fetch(`${sandboxUrl}/sandbox/shopify/${domain}/admin/api/${like.apiVersion}/graphql.json`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-shopify-access-token': 'bench-baseline' },
      body: JSON.stringify({
        query: FLOW_TRIGGER_MUTATION,
        variables: { handle: like.handle, payload: { ...like.payload, 'Flowport event id': id } },
      }),
    }).catch(() => null);
    const body = res ? ((await res.json().catch(() => null)) as { data?: unknown } | null) : null;
    return { sentAt, ok: res?.status === 200 && body?.data != null };
  };
}

/** Gives a stand-in shop a bucket (the baseline's shops: one large enough never to throttle). */
export async function setStandInBucket(
  sandboxUrl: string,
  domain: string,
  bucket: { maximumAvailable: number; restoreRate: number },
): Promise<void> {
  const res = await fetch(`${sandboxUrl}/sandbox/shopify/_buckets/${domain}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(bucket),
  });
  if (!res.ok) throw new Error(`stand-in bucket: ${res.status} ${await res.text()}`);
}

/**
 * Runs `rounds` pairs of a baseline round and a Flowport round, the order flipping each round so
 * drift in the shared machine's speed hits both; `each` gets every pair as it completes.
 */
export async function alternating<B, F>(
  rounds: number,
  baseline: (round: number) => Promise<B>,
  flowport: (round: number) => Promise<F>,
  each: (round: number, base: B, fp: F) => void,
): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    let base: B;
    let fp: F;
    if (round % 2) {
      fp = await flowport(round);
      base = await baseline(round);
    } else {
      base = await baseline(round);
      fp = await flowport(round);
    }
    each(round, base, fp);
  }
}
