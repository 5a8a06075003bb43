// `npm run bench:ab -- --base <git ref>`: sender intake of this working tree (B) against another
// commit (A), measured in one run. bench:intake's ratio to the bare server swings by a quarter
// between runs on this shared machine, so a change worth a few percent cannot be seen by running
// it before and after. Here both versions run at once as child processes (SQLite, durable, worker
// off, as in bench:intake), and are loaded in alternating rounds whose order flips each round,
// so drift in the machine's speed hits both; what is printed per concurrency is the median of
// the rounds' B/A ratios, each round's ratio, and each side's events/s, p99 and main-thread busy
// share (medians). A ratio above 1 means this working tree accepts more events per second.
//   --base <ref>         the commit to compare against (default HEAD: uncommitted changes vs the last commit)
//   --connections 32,128 (default 32,128,256)
//   --rounds 16          rounds per concurrency (default 16)
//   --seconds 2          seconds per round and side (default 2)
//   --store postgres     (default sqlite)
//   --log-level info     Flowport's log level (default silent; info is what `npm start` runs)
// The base runs from a temporary `git worktree` of <ref> sharing this tree's node_modules, removed
// at the end. Not part of `npm run bench`: it compares versions, not Flowport with a baseline.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type BenchFlowport, parseStore, startBenchFlowport } from './lib/bench-flowport.ts';
import { type Figures, load, median, signedRequests } from './lib/intake-load.ts';
import { loadLine } from './lib/proc-cpu.ts';

const root = join(import.meta.dirname, '..');
const { values: args } = parseArgs({
  options: {
    base: { type: 'string', default: 'HEAD' },
    connections: { type: 'string', default: '32,128,256' },
    rounds: { type: 'string', default: '16' },
    seconds: { type: 'string', default: '2' },
    store: { type: 'string', default: 'sqlite' },
    'log-level': { type: 'string', default: 'silent' },
  },
});
const STORE = parseStore(args.store);
const LOG_LEVEL = args['log-level'] === 'info' ? 'info' : 'silent';
const CONNECTIONS = (args.connections as string).split(',').map(Number);
const ROUNDS = Math.max(5, Number(args.rounds));
const SECONDS = Math.max(1, Number(args.seconds));
const git = (...a: string[]) => execFileSync('git', a, { cwd: root, encoding: 'utf8' }).trim();

/** One round of load on one side (bench:intake's round); `busy` is the share of it the main thread was on a CPU. */
async function round(fp: BenchFlowport, connections: number, seconds: number): Promise<Figures & { busy: number }> {
  const f = await load(fp.creds.ingest_url, signedRequests(fp.creds), connections, seconds, fp.pid);
  return { ...f, busy: f.cpu ? (f.cpu.main * f.ok) / 1e6 / seconds : Number.NaN };
}

async function main(): Promise<void> {
  const commit = git('rev-parse', '--verify', `${args.base}^{commit}`);
  const worktree = join(mkdtempSync(join(tmpdir(), 'flowport-ab-')), 'tree');
  git('worktree', 'add', '--detach', worktree, commit);
  const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
  const started: BenchFlowport[] = [];
  try {
    symlinkSync(join(root, 'node_modules'), join(worktree, 'node_modules'), 'dir');
    const a = await startBenchFlowport({ store: STORE, worker: false, root: worktree, logLevel: LOG_LEVEL });
    started.push(a);
    const b = await startBenchFlowport({ store: STORE, worker: false, logLevel: LOG_LEVEL });
    started.push(b);
    console.log(
      `bench:ab — ${loadLine(availableParallelism())} at start. A: ${args.base} (${commit.slice(0, 10)}); B: this working tree (${git('rev-parse', '--short=10', 'HEAD')}${dirty ? ' with uncommitted changes' : ''}).`,
    );
    console.log(
      `${b.storeLabel}; log level ${LOG_LEVEL}; ~1 KiB signed events; ${ROUNDS} rounds of ${SECONDS} s per side, order flipped each round.`,
    );
    for (const connections of CONNECTIONS) {
      // Warm-up, unmeasured: the JIT compiles the hot paths, the files reach their working size.
      await round(a, connections, 2);
      await round(b, connections, 2);
      const sides: Record<'A' | 'B', (Figures & { busy: number })[]> = { A: [], B: [] };
      for (let i = 0; i < ROUNDS; i++) {
        const order: ['A' | 'B', BenchFlowport][] = [
          ['A', a],
          ['B', b],
        ];
        if (i % 2) order.reverse();
        for (const [side, fp] of order) sides[side].push(await round(fp, connections, SECONDS));
      }
      const ratios = sides.B.map((r, i) => r.rps / (sides.A[i] as Figures).rps);
      const cpu = (r: Figures) => r.cpu?.all ?? Number.NaN;
      const cpuRatios = sides.B.map((r, i) => cpu(r) / cpu(sides.A[i] as Figures));
      const line = (side: 'A' | 'B') => {
        const rs = sides[side];
        return `${side} ${median(rs.map((r) => r.rps)).toFixed(0)} ev/s, p99 ${median(rs.map((r) => r.p99))} ms, main thread busy ${(100 * median(rs.map((r) => r.busy))).toFixed(0)}%, CPU ${median(rs.map(cpu)).toFixed(0)} µs per event (all threads)`;
      };
      console.log(`\n${connections} connections:\n  ${line('A')}\n  ${line('B')}`);
      console.log(
        `  B/A: ${median(ratios).toFixed(3)} (median; rounds: ${ratios.map((r) => r.toFixed(2)).join(', ')})`,
      );
      console.log(
        `  CPU per event B/A: ${median(cpuRatios).toFixed(3)} (median; rounds: ${cpuRatios.map((r) => r.toFixed(2)).join(', ')})`,
      );
    }
  } finally {
    for (const fp of started) await fp.stop();
    git('worktree', 'remove', '--force', worktree);
    rmSync(join(worktree, '..'), { recursive: true, force: true });
  }
}

await main();
