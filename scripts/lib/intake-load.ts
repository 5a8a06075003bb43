// The intake load the intake benchmarks send (bench:intake, bench:instructions, bench:ab): signed
// ~1 KiB JSON events through autocannon, the bare node:http server that is their baseline, and
// the CPU and median figures they print.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { SandboxCredentials } from '../../api/src/sandbox/bootstrap.ts';

// autocannon ships no types; the few fields used here are typed locally.
export interface AcRequest {
  method?: string;
  setupRequest?: (req: { headers?: Record<string, string> } & Record<string, unknown>) => Record<string, unknown>;
}
export interface AcResult {
  requests: { average: number };
  latency: { p50: number; p99: number };
  '2xx': number;
  non2xx: number;
  errors: number;
}
export const autocannon = createRequire(import.meta.url)('autocannon') as (
  opts: Record<string, unknown>,
) => Promise<AcResult>;

/** A node:http server that reads the body and answers 202 without work (`node -e`, PORT from env). */
export const BARE_SERVER = `
const http = require('node:http');
http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => { res.writeHead(202, { 'content-type': 'application/json' }); res.end('{"status":"queued"}'); });
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

/**
 * autocannon requests carrying ~1 KiB bodies, each with its own sender event id (the sandbox
 * endpoint dedupes on `id`, so a repeated id would be a suppressed duplicate, not a new event),
 * signed for the sandbox endpoint when sent. The same generator loads the bare server too, so the
 * load generator's own cost is the same on both sides of a ratio.
 */
export function signedRequests(creds: SandboxCredentials): AcRequest[] {
  // Unique across runs and processes sharing a store: the load generator's pid and start time.
  const prefix = `bench_${process.pid}_${Date.now().toString(36)}_`;
  const base = { type: 'order.paid', id: `${prefix}00000000`, order_id: 1000, total: '42.00', note: '' };
  const note = 'x'.repeat(Math.max(0, 1024 - JSON.stringify(base).length));
  let i = 0;
  return [
    {
      method: 'POST',
      setupRequest: (req) => {
        const n = i++;
        const body = `{"type":"order.paid","id":"${prefix}${String(n).padStart(8, '0')}","order_id":${1000 + (n % 100_000)},"total":"42.00","note":"${note}"}`;
        const sig = `sha256=${createHmac('sha256', creds.signing_secret).update(body).digest('hex')}`;
        return {
          ...req,
          body,
          headers: { ...req.headers, 'content-type': 'application/json', [creds.signature_header]: sig },
        };
      },
    },
  ];
}

/** CPU seconds a process (all threads) and its main thread have used so far (Linux /proc; null elsewhere). */
export function cpuOf(pid: number): { all: number; main: number } | null {
  const ticks = (path: string) => {
    // Fields after the parenthesised command name: utime and stime are the 12th and 13th.
    const f = readFileSync(path, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(f[11]) + Number(f[12])) / 100;
  };
  try {
    return { all: ticks(`/proc/${pid}/stat`), main: ticks(`/proc/${pid}/task/${pid}/stat`) };
  } catch {
    return null;
  }
}

/** Issue 31's intake CPU goal per store: bare µs per request ÷ Flowport µs per durable event (bench:intake, bench:floor). */
export const INTAKE_CPU_GOAL: Readonly<Record<'sqlite' | 'postgres', { goal: number; stretch: number | null }>> = {
  sqlite: { goal: 0.5, stretch: 0.6 },
  postgres: { goal: 0.35, stretch: null },
};

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/**
 * The machine's CPU ticks so far, and those stolen by the hypervisor for other guests (Linux
 * /proc/stat, all CPUs; null elsewhere). A round with much steal ran on a slower machine.
 */
function machineTicks(): { total: number; steal: number } | null {
  try {
    const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already inside user).
    return { total: f.slice(0, 8).reduce((a, b) => a + b, 0), steal: f[7] ?? 0 };
  } catch {
    return null;
  }
}

export interface Figures {
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  non2xx: number;
  errors: number;
  /** CPU µs per answered request: the server's main thread, all its threads, the load generator. */
  cpu?: { main: number; all: number; loader: number };
  /** Share of the machine's CPU time stolen by the hypervisor during the round, %. */
  steal?: number;
}

/** One round of autocannon load on `url`, with the server's and the load generator's CPU per answered request. */
export async function load(
  url: string,
  requests: AcRequest[],
  connections: number,
  seconds: number,
  serverPid: number,
): Promise<Figures> {
  const before = cpuOf(serverPid);
  const machineBefore = machineTicks();
  const loaderBefore = process.cpuUsage();
  const result = await autocannon({
    url,
    method: 'POST',
    connections,
    duration: seconds,
    headers: { 'content-type': 'application/json' },
    requests,
    timeout: 30,
  });
  const after = cpuOf(serverPid);
  const machineAfter = machineTicks();
  const loader = process.cpuUsage(loaderBefore);
  const n = Math.max(1, result['2xx']);
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    ...(before && after
      ? {
          cpu: {
            main: ((after.main - before.main) * 1e6) / n,
            all: ((after.all - before.all) * 1e6) / n,
            loader: (loader.user + loader.system) / n,
          },
        }
      : {}),
    ...(machineBefore && machineAfter && machineAfter.total > machineBefore.total
      ? { steal: (100 * (machineAfter.steal - machineBefore.steal)) / (machineAfter.total - machineBefore.total) }
      : {}),
  };
}
