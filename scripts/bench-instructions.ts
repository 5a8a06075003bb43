// `npm run bench:instructions`: how many CPU instructions Flowport's main thread executes per
// accepted intake request, against a bare node:http server that answers 202 without work, both
// counted by valgrind's callgrind in the same run. bench:intake's events/s ratio swings by a
// quarter between rounds on this shared 2-core machine; an instruction count does not depend on
// what else the machine is doing, so it shows what a change to the intake path saves.
//
// Both servers run under callgrind, are loaded with the same signed ~1 KiB events at 128
// connections (BENCH_INSTR_WARMUP requests first, default 6,000, not counted: the JIT compiles
// the hot paths), then the counters are zeroed and BENCH_INSTR_REQUESTS requests (default 6,000)
// are counted. What is printed is the event loop's thread only (node::SpinEventLoopInternal,
// inclusive): the thread intake's throughput depends on (ADR 0304); the checkpoint, sync and
// compiler threads are left out. SHA-256 block hashing is shown apart and left out of the totals:
// valgrind's CPU has no SHA extensions, so it counts the hashes at several times their cost on
// this machine. User-space only: the kernel's share (TCP on loopback, WAL writes) is not counted.
// Needs valgrind (`apt-get install valgrind`); takes 3-5 minutes.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxCredentials } from '../api/src/sandbox/bootstrap.ts';
import { freePort, startBenchFlowport, waitFor } from './lib/bench-flowport.ts';
import { autocannon, BARE_SERVER, signedRequests } from './lib/intake-load.ts';
import { loadLine } from './lib/proc-cpu.ts';

const WARMUP = Number(process.env.BENCH_INSTR_WARMUP ?? 6000);
const REQUESTS = Number(process.env.BENCH_INSTR_REQUESTS ?? 6000);
const CONNECTIONS = 128;

for (const tool of ['valgrind', 'callgrind_control', 'callgrind_annotate']) {
  if (spawnSync(tool, ['--version']).error) {
    console.error(`bench:instructions needs ${tool} (Debian: apt-get install valgrind).`);
    process.exit(1);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'flowport-instr-'));
// valgrind names its control pipe after LOGNAME/USER and HOST; callgrind_control must see the same.
const vgEnv = { LOGNAME: process.env.LOGNAME ?? 'bench', USER: process.env.USER ?? 'bench', HOST: '127.0.0.1' };
Object.assign(process.env, vgEnv);
const callgrind = (name: string) => [
  'valgrind',
  '--tool=callgrind',
  `--callgrind-out-file=${join(dir, `${name}.out`)}`,
  // V8 writes machine code into anonymous memory and patches it.
  '--smc-check=all-non-file',
];

function control(pid: number, command: '-z' | '-d'): void {
  const r = spawnSync('callgrind_control', [command, String(pid)], { env: process.env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`callgrind_control ${command} ${pid} failed: ${r.stderr || r.stdout}`);
}

/** Inclusive instruction counts of the functions whose names contain each key, from a callgrind dump. */
function inclusive(file: string, keys: Record<string, string>): Record<string, number> {
  const r = spawnSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', file], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`callgrind_annotate failed: ${r.stderr}`);
  const out: Record<string, number> = {};
  for (const [name, needle] of Object.entries(keys)) {
    const line = r.stdout.split('\n').find((l) => l.includes(needle));
    out[name] = line ? Number((line.trim().split(/\s+/)[0] ?? '0').replace(/,/g, '')) : 0;
  }
  return out;
}

const KEYS = {
  loop: 'node::SpinEventLoopInternal(',
  sha: '???:sha256_block_data_order [',
  sqlite: 'Statement::JS_run>',
  json: 'v8::internal::Builtin_JsonParse(',
  gc: 'v8::internal::Heap::CollectGarbage(',
};

/** Warms the server up, then counts REQUESTS requests; returns their figures per request. */
async function measure(url: string, pid: number, creds: SandboxCredentials, name: string) {
  const requests = signedRequests(creds);
  const run = (amount: number) =>
    autocannon({ url, method: 'POST', connections: CONNECTIONS, amount, requests, timeout: 300 });
  await run(WARMUP);
  control(pid, '-z');
  const counted = await run(REQUESTS);
  control(pid, '-d');
  if (counted['2xx'] !== REQUESTS) throw new Error(`${name}: ${counted['2xx']} of ${REQUESTS} requests got a 2xx`);
  const f = inclusive(join(dir, `${name}.out.1`), KEYS);
  const per = (n: number | undefined) => (n ?? 0) / REQUESTS;
  return {
    // Garbage collection is shown apart: a full collection lands in one window or the next.
    loop: per(f.loop) - per(f.sha) - per(f.gc),
    sha: per(f.sha),
    sqlite: per(f.sqlite),
    json: per(f.json),
    gc: per(f.gc),
  };
}

async function bare(): Promise<Awaited<ReturnType<typeof measure>>> {
  const port = await freePort();
  const [command, ...args] = callgrind('bare');
  const child: ChildProcess = spawn(command as string, [...args, process.execPath, '-e', BARE_SERVER], {
    env: { ...process.env, PORT: String(port) },
    stdio: 'ignore',
  });
  try {
    const url = `http://127.0.0.1:${port}/`;
    await waitFor(async () => (await fetch(url, { method: 'POST', body: '{}' })).status === 202, child, 'bare server');
    // The bare server ignores the signature; the same requests keep the load generator's work equal.
    const creds = { signing_secret: 'unused', signature_header: 'x-flowport-signature' } as SandboxCredentials;
    return await measure(url, child.pid as number, creds, 'bare');
  } finally {
    child.kill('SIGKILL');
  }
}

async function flowport(): Promise<Awaited<ReturnType<typeof measure>>> {
  const fp = await startBenchFlowport({ store: 'sqlite', worker: false, wrap: callgrind('flowport') });
  try {
    return await measure(fp.creds.ingest_url, fp.pid, fp.creds, 'flowport');
  } finally {
    await fp.stop();
  }
}

try {
  console.log(
    `bench:instructions — ${loadLine(availableParallelism())} at start (counts do not depend on it). Callgrind, ${CONNECTIONS} connections, ~1 KiB signed events: ${WARMUP} requests of warm-up, then ${REQUESTS} counted per server (both servers at once; counts do not depend on timing).`,
  );
  const [fp, base] = await Promise.all([flowport(), bare()]);
  const k = (n: number) => `${(n / 1000).toFixed(1).padStart(6)} k`;
  console.log('');
  console.log(
    'Instructions per request on the event loop thread (user space; SHA-256 blocks and garbage collection left out):',
  );
  console.log(`  Flowport intake (SQLite, durable) ${k(fp.loop)}`);
  console.log(`    of which: SQLite statements ${k(fp.sqlite)}, JSON.parse ${k(fp.json)}`);
  console.log(
    `    left out above: SHA-256 blocks ${k(fp.sha)} (counted without the CPU's SHA extensions), garbage collection ${k(fp.gc)} (a full collection lands in one window or another)`,
  );
  console.log(`  bare node:http 202                ${k(base.loop)} (garbage collection ${k(base.gc)})`);
  console.log(`  Ratio bare / Flowport: ${(base.loop / fp.loop).toFixed(2)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
