// `npm run bench`: every benchmark, one after the other: intake throughput (with its
// bare node:http baseline measured in the same run), what of intake's CPU the store accounts for
// (against the same request path with a free store), and handoff latency, each on both
// stores, many shops with one hot shop against its Shopify bucket (both stores, and two worker
// processes on PostgreSQL), events-list reads at a million events (both stores), the claim's look
// beside a long backlog (both stores), then what verifying each auth mode's signature costs, then intake's instructions per
// request against the bare baseline, counted by callgrind (needs valgrind), then the CLI's start
// and an agent read beside `node -e 0`, the server's start-up (`npm start` until the API and docs
// answer), and a memory soak (10 minutes unless BENCH_SOAK_SECONDS says less). Each prints its own
// figures; this exits non-zero if one fails.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const runs: [string, string[]][] = [
  ['intake, SQLite', ['scripts/bench-intake.ts', '--store', 'sqlite']],
  ['intake, PostgreSQL', ['scripts/bench-intake.ts', '--store', 'postgres']],
  ["intake's floor: what the durable store costs per event, SQLite", ['scripts/bench-floor.ts', '--store', 'sqlite']],
  [
    "intake's floor: what the durable store costs per event, PostgreSQL",
    ['scripts/bench-floor.ts', '--store', 'postgres'],
  ],
  ['handoff, SQLite', ['scripts/bench-handoff.ts', '--store', 'sqlite']],
  ['handoff, PostgreSQL', ['scripts/bench-handoff.ts', '--store', 'postgres']],
  ['many shops fairly, SQLite', ['scripts/bench-fairness.ts', '--store', 'sqlite']],
  ['many shops fairly, PostgreSQL', ['scripts/bench-fairness.ts', '--store', 'postgres']],
  [
    'many shops fairly, PostgreSQL, two worker processes',
    ['scripts/bench-fairness.ts', '--store', 'postgres', '--workers', '2'],
  ],
  [
    'many shops fairly, PostgreSQL, two worker processes, hot bucket 1,000 points restoring 100/s (below its load)',
    [
      'scripts/bench-fairness.ts',
      '--store',
      'postgres',
      '--workers',
      '2',
      '--hot-restore',
      '100',
      '--hot-size',
      '1000',
    ],
  ],
  [
    'many shops fairly, SQLite, hot bucket 1,000 points restoring 100/s (below its load)',
    ['scripts/bench-fairness.ts', '--store', 'sqlite', '--hot-restore', '100', '--hot-size', '1000'],
  ],
  [
    'reads at a million events, SQLite (store kept between runs)',
    ['scripts/bench-reads.ts', '--store', 'sqlite', '--keep'],
  ],
  [
    'reads at a million events, PostgreSQL (store kept between runs)',
    ['scripts/bench-reads.ts', '--store', 'postgres', '--keep'],
  ],
  [
    "the claim's look beside a left-out shop's backlog and many shops waiting for a retry, both stores",
    ['scripts/bench-claim.ts'],
  ],
  ['sender verification, per auth mode', ['scripts/bench-verify.ts']],
  ['intake instructions per request (callgrind)', ['scripts/bench-instructions.ts']],
  ['CLI start and an agent read', ['scripts/bench-cli.ts']],
  ['server start-up (npm start) and the first site build', ['scripts/bench-start.ts']],
  ['memory soak at half the intake capacity (BENCH_SOAK_SECONDS, default 600)', ['scripts/bench-soak.ts']],
];
let failed = 0;
for (const [name, args] of runs) {
  console.log(`\n=== bench: ${name}`);
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    failed++;
    console.log(`=== bench: ${name} FAILED (exit ${r.status})`);
  }
}
process.exit(failed ? 1 : 0);
