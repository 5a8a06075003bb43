// `npm run bench:soak`: Flowport's memory under steady load (issue 31, goal 6: RSS under 200 MB
// during a 10-minute soak at half the measured intake capacity, and flat over the last 5 minutes).
// Flowport runs as `npm start` would, on SQLite, at the default log level (lines to /dev/null),
// with the delivery worker on, handing every accepted event to the sandbox Shopify stand-in in
// its own process (Shopify is not in Flowport's process in production, and the stand-in's CPU
// in the same event loop held the sender to 217 of the 562 events/s asked). First it measures capacity: BENCH_SOAK_CAPACITY_SECONDS (default 8) of
// load at 64 connections, after 3 s of warm-up. Then it sends signed ~1 KiB events at half that
// rate (BENCH_SOAK_RATE to set it), each with its own event id, for BENCH_SOAK_SECONDS (default
// 600), and reads the process's RSS (/proc/<pid>/status) every BENCH_SOAK_SAMPLE_SECONDS (default
// 5), over 64 connections. It prints max RSS and the slope of a least-squares line over the last 5 minutes (the last
// half of a shorter run), in MB per minute. "Flat" here means that line rises less than 5 MB over
// the window. The machine's load average is printed at the start.
// The sandbox shop's Shopify bucket is Plus-sized by default (BENCH_SOAK_PLAN=standard|advanced|plus),
// so Shopify's restore rate (a Standard shop's 100 points a second) is not what limits delivery.
// Past the bucket's restore rate the shop's backlog grows; the claim's cost does not grow with it
// (ADR 0203). The rate printed as sent is the one the soak held. The server gets `npm start`'s
// environment (scripts/start-env.js) as well as its Node options.
import { availableParallelism } from 'node:os';
import { SHOPIFY_BUCKETS } from '../api/src/sandbox/app.ts';
import { setStandInBucket, startBenchFlowport, startBenchSandbox } from './lib/bench-flowport.ts';
import { autocannon, load, signedRequests } from './lib/intake-load.ts';
import { loadLine, rssBytes } from './lib/proc-cpu.ts';

const SOAK_SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 600);
const SAMPLE_SECONDS = Number(process.env.BENCH_SOAK_SAMPLE_SECONDS ?? 5);
const CAPACITY_SECONDS = Number(process.env.BENCH_SOAK_CAPACITY_SECONDS ?? 8);
const RSS_GOAL_MB = 200;
const FLAT_MB = 5;
const MB = 1024 * 1024;

/** Least-squares slope of y over x. */
function slope(points: { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - mx) * (p.y - my);
    den += (p.x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

async function main(): Promise<void> {
  console.log(`bench:soak — ${loadLine(availableParallelism())} at start.`);
  const sandbox = await startBenchSandbox();
  const fp = await startBenchFlowport({ store: 'sqlite', worker: true, logLevel: 'info' }).catch(async (err) => {
    await sandbox.stop();
    throw err;
  });
  try {
    // The sandbox shop hands off to the stand-in process instead of the in-process one.
    const setup = await fp.openDb();
    await setup.run('UPDATE shops SET admin_base_url = ? WHERE id = ?', [
      `${sandbox.url}/sandbox/shopify/${fp.creds.shop_domain}`,
      fp.creds.shop_id,
    ]);
    await setup.close();
    const plan = (process.env.BENCH_SOAK_PLAN ?? 'plus') as keyof typeof SHOPIFY_BUCKETS;
    if (!SHOPIFY_BUCKETS[plan])
      throw new Error(`BENCH_SOAK_PLAN must be one of ${Object.keys(SHOPIFY_BUCKETS).join(', ')}`);
    await setStandInBucket(sandbox.url, fp.creds.shop_domain, SHOPIFY_BUCKETS[plan]);
    console.log(
      `The shop's Shopify bucket at the stand-in: ${plan} (${SHOPIFY_BUCKETS[plan].maximumAvailable} points, restoring ${SHOPIFY_BUCKETS[plan].restoreRate}/s).`,
    );
    const requests = signedRequests(fp.creds);
    const rss = () => (rssBytes(fp.pid) ?? 0) / MB;
    console.log(
      `Flowport: SQLite (every write fsynced before it is answered), log level info, delivery worker on, handing off to the sandbox Shopify stand-in in its own process. RSS after start: ${rss().toFixed(0)} MB.`,
    );
    let rate = Number(process.env.BENCH_SOAK_RATE ?? 0);
    if (!(rate > 0)) {
      await load(fp.creds.ingest_url, requests, 64, 3, fp.pid);
      const cap = await load(fp.creds.ingest_url, requests, 64, CAPACITY_SECONDS, fp.pid);
      rate = Math.max(1, Math.round(cap.rps / 2));
      console.log(
        `Capacity (64 connections, ${CAPACITY_SECONDS} s, worker on): ${cap.rps.toFixed(0)} events/s; soaking at half: ${rate} events/s.`,
      );
    } else console.log(`Soaking at ${rate} events/s (BENCH_SOAK_RATE).`);
    const samples: { x: number; y: number }[] = [];
    const started = Date.now();
    const timer = setInterval(() => {
      samples.push({ x: (Date.now() - started) / 60_000, y: rss() });
    }, SAMPLE_SECONDS * 1000);
    samples.push({ x: 0, y: rss() });
    const result = await autocannon({
      url: fp.creds.ingest_url,
      method: 'POST',
      // Twice the capacity run's connections: the rate is spread over them, and a connection
      // waiting on a slow answer (p99 about 300 ms with the worker on) loses its share. At 16 the
      // sender reached a quarter of the rate asked for, at 64 about 70%.
      connections: 128,
      overallRate: rate,
      duration: SOAK_SECONDS,
      requests,
      timeout: 30,
    });
    clearInterval(timer);
    samples.push({ x: (Date.now() - started) / 60_000, y: rss() });
    const minutes = SOAK_SECONDS / 60;
    const windowFrom = Math.max(minutes / 2, minutes - 5);
    const tail = samples.filter((p) => p.x >= windowFrom);
    const s = slope(tail);
    const max = Math.max(...samples.map((p) => p.y));
    const rise = s * (minutes - windowFrom);
    const every = Math.max(1, Math.round(samples.length / 12));
    console.log(
      `RSS (MB) every ${(SAMPLE_SECONDS * every).toFixed(0)} s: ${samples
        .filter((_, i) => i % every === 0)
        .map((p) => p.y.toFixed(0))
        .join(' ')}`,
    );
    console.log(
      `Sent for ${SOAK_SECONDS} s: ${result['2xx']} 2xx (${(result['2xx'] / SOAK_SECONDS).toFixed(0)}/s), non-2xx ${result.non2xx}, errors ${result.errors}; latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms.`,
    );
    // RSS beside what the V8 heap holds after 10 s without load (prom-client's process metrics):
    // live objects that stay up point to a leak, a heap much larger than them to headroom.
    await new Promise((r) => setTimeout(r, 10_000));
    const metrics = await (await fetch(`${fp.url}/metrics`)).text();
    const metric = (name: string) => {
      const line = metrics.split('\n').find((l) => l.startsWith(`${name} `));
      return line ? Number(line.slice(name.length + 1)) / MB : Number.NaN;
    };
    console.log(
      `10 s after the load: RSS ${rss().toFixed(0)} MB; V8 heap ${metric('flowport_nodejs_heap_size_total_bytes').toFixed(0)} MB, of it in use ${metric('flowport_nodejs_heap_size_used_bytes').toFixed(0)} MB; external ${metric('flowport_nodejs_external_memory_bytes').toFixed(0)} MB.`,
    );
    const db = await fp.openDb();
    const states = await db.all<{ state: string; n: number }>('SELECT state, COUNT(*) AS n FROM events GROUP BY state');
    await db.close();
    console.log(`Events by state afterwards: ${states.map((r) => `${r.state} ${r.n}`).join(', ')}`);
    console.log(
      `Max RSS ${max.toFixed(0)} MB (goal < ${RSS_GOAL_MB}: ${max < RSS_GOAL_MB ? 'met' : 'not met'}); slope over minutes ${windowFrom.toFixed(1)}–${minutes.toFixed(1)}: ${s.toFixed(2)} MB/min, ${rise.toFixed(1)} MB over the window (flat, < ${FLAT_MB} MB: ${rise < FLAT_MB ? 'yes' : 'no'}).`,
    );
  } finally {
    await fp.stop();
    await sandbox.stop();
  }
}

await main();
