// `npm run bench:intake [-- --store postgres]`: what sender intake costs, judged by the server's
// CPU time per accepted, durable event (issue 31), against a bare node:http server's CPU time
// per answered request, measured in one run with the same load generator. Both servers run as
// child processes; this process is the load generator (autocannon), sending signed ~1 KiB JSON
// events at fixed concurrency. The load generator shares the two cores with the server, so the
// throughput ratio depends on how they share them; CPU per event does not. Throughput and
// latency are printed beside it.
//   --store sqlite (default): WAL, every write fsynced before it is answered, in the data dir.
//   --store postgres: a fresh schema in FLOWPORT_TEST_DATABASE_URL (default: the local
//     `test` database), dropped afterwards. When the cluster runs on this machine its CPU is read
//     from /proc and reported separately: the backends serving Flowport's connections (found by
//     client port in pg_stat_activity; other clients of a shared cluster are left out), and the
//     WAL writer, checkpointer and background writer (shared).
//   Options (env): BENCH_ROUNDS (default 6, at least 5) rounds per server and concurrency,
//   BENCH_ROUND_SECONDS (default 2), BENCH_CONNECTIONS (default "32,64,128" on SQLite, "64" on
//   PostgreSQL), BENCH_WARMUP_SECONDS (default 2: each server is loaded this long, unmeasured,
//   before the rounds at each concurrency, so JIT compilation and first-touch file growth are
//   not measured), BENCH_LOG_LEVEL (default info, what `npm start` runs; `silent` to compare),
//   BENCH_CPU_PROF=<dir> (a V8 CPU profile of Flowport, written when it stops; summarise it with
//   `node scripts/lib/profile-summary.ts <file> <events> [top]`), BENCH_NODE_FLAGS (Node options
//   for Flowport instead of npm start's).
// CPU per event: utime + stime of the whole server process (every thread: /proc/<pid>/stat)
// before and after each round, over the round's 2xx answers. Rounds alternate (Flowport, bare,
// Flowport, …) so drift in the shared machine's speed hits both sides; each ratio printed is the
// median of the rounds' ratios. Afterwards every 2xx is looked up in the store (a row count).
import { type ChildProcess, spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { freePort, parseStore, startBenchFlowport, waitFor } from './lib/bench-flowport.ts';
import { BARE_SERVER, type Figures, INTAKE_CPU_GOAL, load, median, signedRequests } from './lib/intake-load.ts';
import pg from 'pg';
import { familyDelta, loadLine, localPostmasterPid, pgServerCpu } from './lib/proc-cpu.ts';
import { testDatabaseUrl } from '../tests/helpers/store.ts';

const NODE = process.execPath;
const { values: args } = parseArgs({ options: { store: { type: 'string', default: 'sqlite' } } });
const STORE = parseStore(args.store);
const ROUNDS = Math.max(5, Number(process.env.BENCH_ROUNDS ?? 6));
const ROUND_SECONDS = Math.max(1, Number(process.env.BENCH_ROUND_SECONDS ?? 2));
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? (STORE === 'sqlite' ? '32,64,128' : '64')).split(',').map(Number);
/** Flowport's log level: `info` (default, what `npm start` runs: one line per request, to /dev/null here) or `silent`. */
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL === 'silent' ? 'silent' : 'info';
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
/** Issue 31: bare µs per request ÷ Flowport µs per event. */
const CPU_GOAL = INTAKE_CPU_GOAL[STORE].goal;
const CPU_STRETCH = INTAKE_CPU_GOAL[STORE].stretch;
/** Issue 31, PostgreSQL: Flowport's events/s over bare requests/s at 64 connections. */
const RATE_GOAL = STORE === 'postgres' ? { connections: 64, ratio: 0.3 } : null;

interface Round extends Figures {
  /** PostgreSQL CPU µs per 2xx: the backends serving Flowport's connections, and the shared WAL writer, checkpointer and background writer. */
  dbCpu?: { backends: number; background: number };
}

function us(x: number): string {
  return `${x.toFixed(0)} µs`;
}

async function main(): Promise<void> {
  const children: ChildProcess[] = [];
  console.log(`bench:intake — ${loadLine(availableParallelism())} at start.`);
  // ---- Flowport (worker off so only intake is measured) and the bare node:http baseline
  const fp = await startBenchFlowport({ store: STORE, worker: false, logLevel: LOG_LEVEL });
  const { creds, storeLabel } = fp;
  try {
    const postmaster = STORE === 'postgres' ? await localPostmasterPid(testDatabaseUrl()) : null;
    const bport = await freePort();
    const bare = spawn(NODE, ['-e', BARE_SERVER], { env: { ...process.env, PORT: String(bport) }, stdio: 'ignore' });
    children.push(bare);
    await waitFor(
      async () => (await fetch(`http://127.0.0.1:${bport}/`, { method: 'POST', body: '{}' })).status === 202,
      bare,
      'bare server',
    );
    const bareUrl = `http://127.0.0.1:${bport}/`;
    const requests = signedRequests(creds);
    console.log(
      `Store: ${storeLabel}; HMAC-signed ~1 KiB events, worker off, log level ${LOG_LEVEL}. At each concurrency ${WARMUP_SECONDS} s of warm-up per server, then ${ROUNDS} alternating rounds of ${ROUND_SECONDS} s per server.`,
    );
    if (STORE === 'postgres')
      console.log(
        postmaster
          ? `PostgreSQL runs here (postmaster pid ${postmaster}): its CPU is read from /proc and reported separately.`
          : 'PostgreSQL does not run in this pid namespace: its CPU is not measured.',
      );
    const admin = postmaster ? new pg.Client({ connectionString: testDatabaseUrl() }) : null;
    await admin?.connect();
    const flowportRound = async (connections: number): Promise<Round> => {
      const before = admin ? await pgServerCpu(admin, fp.pid) : null;
      const f = await load(creds.ingest_url, requests, connections, ROUND_SECONDS, fp.pid);
      if (!before || !admin) return f;
      const after = await pgServerCpu(admin, fp.pid);
      const per = (x: number) => (x * 1e6) / Math.max(1, f.ok);
      return {
        ...f,
        dbCpu: {
          backends: per(familyDelta(before.backends, after.backends)),
          background: per(familyDelta(before.background, after.background)),
        },
      };
    };
    let answered = 0;
    const verdicts: string[] = [];
    for (const connections of CONNECTIONS) {
      const mine: Round[] = [];
      const base: Figures[] = [];
      if (WARMUP_SECONDS > 0) {
        answered += (await load(creds.ingest_url, requests, connections, WARMUP_SECONDS, fp.pid)).ok;
        await load(bareUrl, requests, connections, WARMUP_SECONDS, bare.pid as number);
      }
      for (let r = 0; r < ROUNDS; r++) {
        mine.push(await flowportRound(connections));
        base.push(await load(bareUrl, requests, connections, ROUND_SECONDS, bare.pid as number));
      }
      answered += mine.reduce((a, f) => a + f.ok, 0);
      const cpuOf = (f: Figures) => f.cpu?.all ?? Number.NaN;
      const cpuRatios = mine.map((f, r) => cpuOf(base[r] as Figures) / cpuOf(f));
      const rateRatios = mine.map((f, r) => f.rps / (base[r] as Figures).rps);
      const m = (xs: number[]) => median(xs);
      console.log('');
      console.log(`${connections} connections (medians of ${ROUNDS} rounds):`);
      const fmt = (xs: number[], d = 0) => xs.map((x) => x.toFixed(d)).join(', ');
      console.log(
        `  Flowport (${STORE}): ${us(m(mine.map(cpuOf)))} CPU per event (rounds ${fmt(mine.map(cpuOf))}); main thread ${us(m(mine.map((f) => f.cpu?.main ?? Number.NaN)))}; ${m(mine.map((f) => f.rps)).toFixed(0)} events/s; p50 ${m(mine.map((f) => f.p50))} ms, p99 ${m(mine.map((f) => f.p99))} ms; non-2xx ${mine.reduce((a, f) => a + f.non2xx, 0)}, errors ${mine.reduce((a, f) => a + f.errors, 0)}`,
      );
      console.log(
        `  bare node:http 202:  ${us(m(base.map(cpuOf)))} CPU per request (rounds ${fmt(base.map(cpuOf))}); ${m(base.map((f) => f.rps)).toFixed(0)} requests/s; p50 ${m(base.map((f) => f.p50))} ms, p99 ${m(base.map((f) => f.p99))} ms`,
      );
      console.log(`  load generator: ${us(m(mine.map((f) => f.cpu?.loader ?? Number.NaN)))} CPU per Flowport event`);
      const db = mine.flatMap((f) => (f.dbCpu === undefined ? [] : [f.dbCpu]));
      if (db.length === mine.length && db.length > 0) {
        const withDb = mine.map((f, r) => cpuOf(base[r] as Figures) / (cpuOf(f) + (f.dbCpu?.backends ?? 0)));
        const be = db.map((d) => d.backends);
        const bg = db.map((d) => d.background);
        console.log(
          `  PostgreSQL server: ${us(m(be))} CPU per event in the backends of Flowport's connections (rounds ${fmt(be)}), ${us(m(bg))} in the cluster's WAL writer, checkpointer and background writer (shared with its other clients); ratio counting the backends too: ${m(withDb).toFixed(2)}`,
        );
      }
      const cpuRatio = m(cpuRatios);
      console.log(
        `  CPU-efficiency ratio (bare µs per request ÷ Flowport µs per event): ${cpuRatio.toFixed(2)} (rounds ${fmt(cpuRatios, 2)}; goal >= ${CPU_GOAL}${CPU_STRETCH ? `, stretch ${CPU_STRETCH}` : ''})`,
      );
      console.log(
        `  Throughput ratio (Flowport events/s ÷ bare requests/s): ${m(rateRatios).toFixed(2)} (rounds ${fmt(rateRatios, 2)})${RATE_GOAL?.connections === connections ? `; goal >= ${RATE_GOAL.ratio}` : ''}`,
      );
      verdicts.push(
        `${connections}: CPU ${cpuRatio.toFixed(2)} ${cpuRatio >= CPU_GOAL ? 'met' : 'not met'}${CPU_STRETCH && cpuRatio >= CPU_STRETCH ? ' (stretch met)' : ''}${RATE_GOAL?.connections === connections ? `, throughput ${m(rateRatios).toFixed(2)} ${m(rateRatios) >= RATE_GOAL.ratio ? 'met' : 'not met'}` : ''}`,
      );
    }
    console.log('');
    console.log(`Goals by connections (${STORE}): ${verdicts.join('; ')}`);
    const check = await fp.openDb();
    // Every request carried its own event id, so each 2xx is one queued event row. There may be
    // more rows: requests still in flight when a round ends are stored, but autocannon counts no answer.
    const stored = Number(
      (await check.get<{ n: number }>("SELECT COUNT(*) AS n FROM events WHERE state = 'queued'"))?.n ?? 0,
    );
    await check.close();
    console.log(
      `Events stored (queued): ${stored}; 2xx answered (warm-up included): ${answered}${stored >= answered ? ' (every 2xx is in the store)' : ' (MISMATCH)'}`,
    );
    if (stored < answered) process.exitCode = 1;
    await admin?.end();
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await fp.stop();
  }
}

await main();
