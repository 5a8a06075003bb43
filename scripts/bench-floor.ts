// `npm run bench:floor [-- --store postgres] [-- --perf]`: how much of intake's CPU per event the
// durable store accounts for (ADR 0309). Three servers are loaded in alternating rounds with the
// same signed ~1 KiB events:
//   - a bare node:http server (bench:intake's baseline);
//   - Flowport with a free store: a temporary `git worktree` of HEAD whose group committer runs
//     each batch's work against a store that does nothing (no transaction, row or sync; every
//     read finds nothing). The patch is applied to that worktree's committer.ts here and is never
//     product code;
//   - Flowport as it is (this working tree), SQLite or PostgreSQL, worker off, log level info.
//   - the store alone (issue 45): the rows intake writes per accepted event, in batches of 16 and
//     64, written by better-sqlite3 or pg alone in this process (scripts/lib/store-floor.ts), one
//     floor round after each round of the servers. On SQLite twice: without an fsync at COMMIT, and
//     durable as Flowport's 202 promises (synchronous = FULL), SQLite's own way.
// It prints each side's CPU per 2xx (all threads, /proc) and its ratio to the bare server's CPU per
// request, and the store floor's CPU per event beside them. The difference between the last two is what the store costs per event, and the free
// store's ratio is the most the CPU goal could reach without changing anything but the store.
//   --connections 64 (default)   --rounds 6 (default; at least 5)   --seconds 3 (default)
//   --perf: then `perf record` (cpu-clock, call graphs) of Flowport for one more round, and where
//     its CPU went by component: inclusive µs per event (Linux with perf; JIT frames named
//     through Node's --perf-basic-prof).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  type BenchFlowport,
  freePort,
  parseStore,
  startBenchFlowport,
  startNodeFlags,
  waitFor,
} from './lib/bench-flowport.ts';
import { BARE_SERVER, type Figures, INTAKE_CPU_GOAL, load, median, signedRequests } from './lib/intake-load.ts';
import { loadLine } from './lib/proc-cpu.ts';
import { type FloorKind, type FloorRound, openFloor } from './lib/store-floor.ts';

/** Batch sizes of the store floor (intake's group commits at 16 and 64 connections' worth). */
const FLOOR_BATCHES = [16, 64] as const;
const FLOOR_EVENTS = 4_096;

const root = join(import.meta.dirname, '..');
const { values: args } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    connections: { type: 'string', default: '64' },
    rounds: { type: 'string', default: '6' },
    seconds: { type: 'string', default: '3' },
    perf: { type: 'boolean', default: false },
  },
});
const STORE = parseStore(args.store);
const CONNECTIONS = Number(args.connections);
const ROUNDS = Math.max(5, Number(args.rounds));
const SECONDS = Math.max(1, Number(args.seconds));
const git = (...a: string[]) => execFileSync('git', a, { cwd: root, encoding: 'utf8' }).trim();

/** The anchor in committer.ts the free store replaces; the bench refuses to run if it moved. */
const ANCHOR = 'const results = await this.db.tx(';
const FREE_STORE = `
/** bench:floor's free store: no transaction, no row, no sync; every read finds nothing. */
const discard: Db = {
  dialect: 'sqlite',
  all: async () => [],
  get: async () => undefined,
  run: async () => ({ changes: 1 }),
  exec: async () => {},
  tx: async (fn) => fn(discard),
  close: async () => {},
};
async function discardTx<T>(fn: (tx: Db) => Promise<T>, options?: { onCommit?: () => void }): Promise<T> {
  const out = await fn(discard);
  options?.onCommit?.();
  return out;
}
`;

function patchFreeStore(tree: string): void {
  const file = join(tree, 'api/src/store/committer.ts');
  const source = readFileSync(file, 'utf8');
  if (source.split(ANCHOR).length !== 2)
    throw new Error(`bench:floor: "${ANCHOR}" is not found exactly once in committer.ts; update the bench's patch.`);
  writeFileSync(file, source.replace(ANCHOR, 'const results = await discardTx(') + FREE_STORE);
}

/**
 * Inclusive share of perf samples whose call chain matches each component. A sample's first line
 * names its thread: Node's is `MainThread`, a worker thread's (the SQLite checkpointer) `WorkerThread`.
 */
const COMPONENTS: [string, RegExp][] = [
  ['HTTP parser callbacks (Flowport request handling inside)', /http_parser::Parser::OnStreamRead/],
  [
    'SQLite statements (INSERT, dedupe, usage)',
    /^\s*MainThread[\s\S]*(Statement::JS_run|Statement::JS_all|Statement::JS_get)/,
  ],
  ['SQLite BEGIN/COMMIT (WAL frames written)', /Database::JS_exec/],
  ['SQLite checkpoint thread', /^\s*WorkerThread/],
  ['pg driver', /node_modules\/pg(-protocol|-pool)?\//],
  ['pino (request log lines)', /node_modules\/pino|sonic-boom/],
  ['socket writes (answers, database socket)', /StreamBase::Write|DoTryWrite|WriteString/],
  ['HMAC and body hash', /crypto::Hash|Hmac|sha256_block/],
  ['GC', /Scaveng|CollectGarbage|ConcurrentMarking|Sweeper|MarkCompact/],
  ['JSON parse', /JsonParser/],
  ['fdatasync (kernel)', /fdatasync/],
  ['kernel, all system calls', /do_syscall_64/],
];

async function perfSummary(fp: BenchFlowport, requests: ReturnType<typeof signedRequests>): Promise<void> {
  const data = join(mkdtempSync(join(tmpdir(), 'flowport-perf-')), 'perf.data');
  const rec = spawn('perf', ['record', '-q', '-e', 'cpu-clock', '-g', '-p', String(fp.pid), '-o', data], {
    stdio: 'ignore',
  });
  await new Promise((r) => setTimeout(r, 300));
  const f = await load(fp.creds.ingest_url, requests, CONNECTIONS, SECONDS, fp.pid);
  rec.kill('SIGINT');
  await new Promise((r) => rec.once('exit', r));
  const script = spawnSync('perf', ['script', '-i', data, '-F', 'comm,tid,ip,sym'], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  rmSync(join(data, '..'), { recursive: true, force: true });
  const samples = script.stdout.split('\n\n').filter((s) => s.trim());
  const perEvent = f.cpu ? f.cpu.all : Number.NaN;
  console.log(
    `\nWhere Flowport's CPU went (perf, ${samples.length} samples over one ${SECONDS} s round, ${perEvent.toFixed(0)} µs per event; inclusive, so components overlap):`,
  );
  for (const [name, re] of COMPONENTS) {
    const share = samples.filter((s) => re.test(s)).length / Math.max(1, samples.length);
    if (share > 0)
      console.log(
        `  ${(perEvent * share).toFixed(1).padStart(5)} µs  ${(100 * share).toFixed(1).padStart(5)}%  ${name}`,
      );
  }
}

/** The store floor beside bare node:http and Flowport, and issue 45's goal (Flowport ≤ bare + floor + 10 µs). */
function printFloor(store: string, rounds: Map<FloorKind, FloorRound[]>, bare: number, flowport: number): void {
  console.log(
    `\n  The store alone (${store === 'sqlite' ? 'better-sqlite3' : 'pg'}, no HTTP, no Flowport code), intake's rows per accepted event, ${FLOOR_EVENTS} events per round:`,
  );
  for (const [kind, rs] of rounds) {
    const client = median(rs.map((r) => r.client));
    const server = rs[0]?.server == null ? null : median(rs.map((r) => r.server as number));
    // Flowport's figure is its own process (the backends' CPU is not in it): on PostgreSQL it is set
    // beside the floor's client side, and the backend's cost is printed apart.
    const own = flowport - bare - client;
    console.log(
      `    ${kind.label}: ${client.toFixed(1)} µs per event${server === null ? '' : ` in the client (the driver), ${server.toFixed(1)} µs in its backend`}; Flowport ${flowport.toFixed(1)} = bare ${bare.toFixed(1)} + floor ${client.toFixed(1)} + ${own.toFixed(1)} µs its own (goal ≤ 10: ${own <= 10 ? 'met' : 'not met'})`,
    );
  }
}

async function main(): Promise<void> {
  console.log(`bench:floor — ${loadLine(availableParallelism())} at start.`);
  const worktree = join(mkdtempSync(join(tmpdir(), 'flowport-floor-')), 'tree');
  git('worktree', 'add', '--detach', worktree, 'HEAD');
  const started: BenchFlowport[] = [];
  const bare = { stop: () => {} };
  const floors = { close: async () => {} };
  try {
    symlinkSync(join(root, 'node_modules'), join(worktree, 'node_modules'), 'dir');
    patchFreeStore(worktree);
    const free = await startBenchFlowport({ store: STORE, worker: false, root: worktree, logLevel: 'info' });
    started.push(free);
    if (args.perf) process.env.BENCH_NODE_FLAGS = [...startNodeFlags(), '--perf-basic-prof'].join(' ');
    const real = await startBenchFlowport({ store: STORE, worker: false, logLevel: 'info' });
    started.push(real);
    const port = await freePort();
    const child = spawn(process.execPath, ['-e', BARE_SERVER], {
      env: { ...process.env, PORT: String(port) },
      stdio: 'ignore',
    });
    bare.stop = () => child.kill();
    const bareUrl = `http://127.0.0.1:${port}/`;
    await waitFor(
      async () => (await fetch(bareUrl, { method: 'POST', body: '{}' })).status === 202,
      child,
      'bare server',
    );
    const freeRequests = signedRequests(free.creds);
    const realRequests = signedRequests(real.creds);
    console.log(
      `${real.storeLabel}; ${CONNECTIONS} connections; 2 s of warm-up each, then ${ROUNDS} rounds of ${SECONDS} s per server, order rotated each round.`,
    );
    const sides = {
      bare: { url: bareUrl, requests: realRequests, pid: child.pid as number, rounds: [] as Figures[] },
      free: { url: free.creds.ingest_url, requests: freeRequests, pid: free.pid, rounds: [] as Figures[] },
      real: { url: real.creds.ingest_url, requests: realRequests, pid: real.pid, rounds: [] as Figures[] },
    };
    const order = [sides.real, sides.free, sides.bare];
    const floor = await openFloor(STORE, FLOOR_BATCHES);
    floors.close = floor.close;
    const floorRounds = new Map<FloorKind, FloorRound[]>(floor.kinds.map((k) => [k, []]));
    for (const s of order) await load(s.url, s.requests, CONNECTIONS, 2, s.pid);
    for (const k of floor.kinds) await floor.round(k, FLOOR_EVENTS / 4);
    for (let i = 0; i < ROUNDS; i++) {
      for (let k = 0; k < order.length; k++) {
        const s = order[(i + k) % order.length] as (typeof order)[number];
        s.rounds.push(await load(s.url, s.requests, CONNECTIONS, SECONDS, s.pid));
      }
      for (const k of i % 2 ? [...floor.kinds].reverse() : floor.kinds)
        floorRounds.get(k)?.push(await floor.round(k, FLOOR_EVENTS));
    }
    const cpu = (f: Figures) => f.cpu?.all ?? Number.NaN;
    const m = (fs: Figures[]) => median(fs.map(cpu));
    const ratio = (fs: Figures[]) => median(fs.map((f, i) => cpu(sides.bare.rounds[i] as Figures) / cpu(f)));
    console.log(`\n  bare node:http 202:           ${m(sides.bare.rounds).toFixed(1)} µs CPU per request`);
    console.log(
      `  Flowport with a free store:   ${m(sides.free.rounds).toFixed(1)} µs CPU per event, ratio ${ratio(sides.free.rounds).toFixed(2)}`,
    );
    console.log(
      `  Flowport (${STORE}):${' '.repeat(Math.max(1, 19 - STORE.length))}${m(sides.real.rounds).toFixed(1)} µs CPU per event, ratio ${ratio(sides.real.rounds).toFixed(2)}`,
    );
    const goal = INTAKE_CPU_GOAL[STORE].goal;
    const store = median(sides.real.rounds.map((f, i) => cpu(f) - cpu(sides.free.rounds[i] as Figures)));
    console.log(
      `  The durable store: ${store.toFixed(1)} µs per event (median of the rounds' differences). At the free store's cost, the goal's ratio (${goal}) leaves the store ${Math.max(0, m(sides.bare.rounds) / goal - m(sides.free.rounds)).toFixed(1)} µs.`,
    );
    printFloor(STORE, floorRounds, m(sides.bare.rounds), m(sides.real.rounds));
    if (args.perf) {
      if (spawnSync('perf', ['--version']).status === 0) await perfSummary(real, realRequests);
      else console.log('\n--perf: perf is not installed here; no profile.');
    }
  } finally {
    await floors.close();
    bare.stop();
    for (const fp of started) await fp.stop();
    git('worktree', 'remove', '--force', worktree);
    rmSync(join(worktree, '..'), { recursive: true, force: true });
    if (args.perf) for (const fp of started) rmSync(`/tmp/perf-${fp.pid}.map`, { force: true });
  }
}

await main();
