// `npm run bench:cli`: how fast the command line answers. Runs `flowport --version`,
// `flowport --help` and an agent read (`flowport list-events` against a running Flowport on
// SQLite, sandbox mode) as an operator would (bin/flowport.js, a new Node process each
// time), interleaved with `node -e 0` measured in the same run, and prints each median beside
// Node's own start and the ratio. Goals on an idle machine (ADR 0900): --version and --help
// ≤ 150 ms, the agent read ≤ 300 ms. The machine's load average is printed with the figures:
// on a busy machine every figure, `node -e 0` included, grows.
//   --runs N   runs per command (default 15)
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { CLI_ENV } from '../api/src/config.ts';
import { startBenchFlowport } from './lib/bench-flowport.ts';

const root = join(import.meta.dirname, '..');
const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 15;
const bin = join(root, 'bin', 'flowport.js');
const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(', ');

const loadBefore = load();
const flowport = await startBenchFlowport({ store: 'sqlite', worker: false });
try {
  const env = { ...process.env, [CLI_ENV.baseUrl]: flowport.url, [CLI_ENV.token]: flowport.creds.grant_token };
  const cases: { name: string; args: string[]; goal: number | null }[] = [
    { name: 'node -e 0', args: ['-e', '0'], goal: null },
    { name: 'flowport --version', args: [bin, '--version'], goal: 150 },
    { name: 'flowport --help', args: [bin, '--help'], goal: 150 },
    { name: 'flowport list-events --json', args: [bin, 'list-events', '--json'], goal: 300 },
  ];
  // One warm-up run each (fills Node's compile cache, as any earlier use of the CLI would).
  for (const c of cases) spawnSync(process.execPath, c.args, { env, cwd: root });
  const times = new Map<string, number[]>(cases.map((c) => [c.name, []]));
  for (let i = 0; i < RUNS; i++)
    for (const c of cases) {
      const started = performance.now();
      const r = spawnSync(process.execPath, c.args, { env, cwd: root, encoding: 'utf8' });
      const ms = performance.now() - started;
      if (r.status !== 0) throw new Error(`${c.name} exited ${r.status}: ${r.stderr.slice(0, 500)}`);
      times.get(c.name)?.push(ms);
    }
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const m = Math.floor(s.length / 2);
    return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
  };
  const base = median(times.get('node -e 0') as number[]);
  console.log(`bench:cli: ${RUNS} runs each, interleaved; Node ${process.version}; store ${flowport.storeLabel}`);
  console.log(`load average (1, 5, 15 min): ${loadBefore} before, ${load()} after\n`);
  console.log(`${'command'.padEnd(30)} ${'median'.padStart(9)} ${'× node -e 0'.padStart(12)}  goal (idle machine)`);
  for (const c of cases) {
    const m = median(times.get(c.name) as number[]);
    const goal = c.goal === null ? '' : `≤ ${c.goal} ms: ${m <= c.goal ? 'met' : 'not met'}`;
    console.log(
      `${c.name.padEnd(30)} ${`${m.toFixed(0)} ms`.padStart(9)} ${(m / base).toFixed(1).padStart(12)}  ${goal}`,
    );
  }
} finally {
  await flowport.stop();
}
