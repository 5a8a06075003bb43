// `npm run bench:intake [-- --store postgres]`: sender intake throughput with full
// durability versus a bare node:http server that answers 202 without work, measured
// in one run on this machine. Both servers run as child processes; this process is
// the load generator (autocannon), sending signed ~1 KiB JSON events at fixed concurrency.
//   --store sqlite (default): WAL, synchronous=FULL, in the data dir.
//   --store postgres: a fresh schema in FLOWPORT_TEST_DATABASE_URL (default: the local
//     `test` database), dropped afterwards.
//   Options (env): BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 32).
import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { freePort, parseStore, startBenchFlowport, waitFor } from './lib/bench-flowport.ts';

// autocannon ships no types; the few fields used here are typed locally.
interface AcRequest {
  method?: string;
  setupRequest?: (req: { headers?: Record<string, string> } & Record<string, unknown>) => Record<string, unknown>;
}
interface AcResult {
  requests: { average: number };
  latency: { p50: number; p99: number };
  '2xx': number;
  non2xx: number;
  errors: number;
}
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: Record<string, unknown>) => Promise<AcResult>;

const NODE = process.execPath;
const { values: args } = parseArgs({ options: { store: { type: 'string', default: 'sqlite' } } });
const STORE = parseStore(args.store);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

const BARE_SERVER = `
const http = require('node:http');
http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => { res.writeHead(202, { 'content-type': 'application/json' }); res.end('{"status":"queued"}'); });
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  non2xx: number;
  errors: number;
}

async function load(
  url: string,
  requests: AcRequest[] | undefined,
  headers: Record<string, string>,
  body?: string,
): Promise<Figures> {
  const result = await autocannon({
    url,
    method: 'POST',
    connections: CONNECTIONS,
    duration: SECONDS,
    headers,
    body,
    requests,
    timeout: 30,
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

function makeBodies(secret: string, header: string, n: number): { body: string; sig: string }[] {
  const out: { body: string; sig: string }[] = [];
  for (let i = 0; i < n; i++) {
    const base = { type: 'order.paid', id: `bench_${i}`, order_id: 1000 + i, total: '42.00', note: '' };
    base.note = 'x'.repeat(Math.max(0, 1024 - JSON.stringify(base).length));
    const body = JSON.stringify(base);
    out.push({ body, sig: `sha256=${createHmac('sha256', secret).update(body).digest('hex')}` });
  }
  void header;
  return out;
}

async function main(): Promise<void> {
  const children: ChildProcess[] = [];
  // ---- Flowport (worker off so only intake is measured)
  const fp = await startBenchFlowport({ store: STORE, worker: false });
  const { creds, storeLabel } = fp;
  try {
    const bodies = makeBodies(creds.signing_secret, creds.signature_header, 2000);
    let i = 0;
    const requests: AcRequest[] = [
      {
        method: 'POST',
        setupRequest: (req) => {
          const b = bodies[i++ % bodies.length] as { body: string; sig: string };
          return {
            ...req,
            body: b.body,
            headers: { ...req.headers, 'content-type': 'application/json', [creds.signature_header]: b.sig },
          };
        },
      },
    ];
    console.log(
      `bench:intake — store: ${storeLabel}. ${SECONDS} s at ${CONNECTIONS} connections each; ~1 KiB signed events.`,
    );
    const flowport = await load(creds.ingest_url, requests, { 'content-type': 'application/json' });
    const check = await fp.openDb();
    const stored = Number(
      (await check.get<{ n: number }>("SELECT COUNT(*) AS n FROM events WHERE state = 'queued'"))?.n ?? 0,
    );
    await check.close();
    await fp.stop();

    // ---- bare node:http baseline
    const bport = await freePort();
    const bare = spawn(NODE, ['-e', BARE_SERVER], { env: { ...process.env, PORT: String(bport) }, stdio: 'ignore' });
    children.push(bare);
    await waitFor(
      async () => (await fetch(`http://127.0.0.1:${bport}/`, { method: 'POST', body: '{}' })).status === 202,
      bare,
      'bare server',
    );
    // The same request generator (signed bodies, per-request setup) loads both servers, so the
    // load generator's own cost is the same on both sides of the ratio.
    const baseline = await load(`http://127.0.0.1:${bport}/`, requests, { 'content-type': 'application/json' });

    const ratio = flowport.rps / baseline.rps;
    const row = (name: string, f: Figures) =>
      `${name.padEnd(28)} ${f.rps.toFixed(0).padStart(8)} ev/s   p50 ${String(f.p50).padStart(4)} ms   p99 ${String(f.p99).padStart(4)} ms   2xx ${f.ok}   non-2xx ${f.non2xx}   errors ${f.errors}`;
    console.log('');
    console.log(row(`Flowport intake (${STORE}, durable)`, flowport));
    console.log(row('bare node:http 202', baseline));
    console.log('');
    console.log(
      `Events stored (queued): ${stored}; 2xx answered: ${flowport.ok}${stored >= flowport.ok ? ' (every 2xx is in the store)' : ' (MISMATCH)'}`,
    );
    console.log(`Ratio Flowport (${STORE}) / bare: ${ratio.toFixed(2)} (goal >= 0.50)`);
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await fp.stop();
  }
}

await main();
