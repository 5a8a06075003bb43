// npm run bench:round-trips [-- --requests 50 --show 'first page' --only 'first page']
// Where a PostgreSQL agent read's time goes (issue 45): every query each kind of read sends to
// PostgreSQL, in order, with its time from send to answer, and the request's time over HTTP.
// Runs Flowport in this process on the store `bench:reads --store postgres --keep` keeps
// (schema bench_reads_keep, its data dir), with node-postgres's Client.query timed here; the
// usage ledger's flush (every second) is listed apart, as it runs beside the requests.
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { loadConfig } from '../api/src/config.ts';
import { SecretBox } from '../api/src/lib/crypto.ts';
import { listScope } from '../api/src/reads/paging.ts';
import { sealCursor } from '../api/src/reads/shared.ts';
import { createRuntime } from '../api/src/runtime.ts';
import type { SandboxCredentials } from '../api/src/sandbox/bootstrap.ts';
import { withSearchPath } from '../api/src/store/postgres.ts';
import { testDatabaseUrl } from '../tests/helpers/store.ts';

const { values: opts } = parseArgs({
  options: {
    requests: { type: 'string', default: '50' },
    // Prints the full text and parameters of this kind's statements (e.g. --show 'first page').
    show: { type: 'string' },
    // Runs this kind only (e.g. under --cpu-prof).
    only: { type: 'string' },
  },
});
const REQUESTS = Number(opts.requests);

const dataDir = join(tmpdir(), 'flowport-bench-reads-postgres');
if (!existsSync(join(dataDir, 'sandbox-credentials.json')))
  throw new Error(`No kept store in ${dataDir}: run npm run bench:reads -- --store postgres --keep first.`);
const creds = JSON.parse(readFileSync(join(dataDir, 'sandbox-credentials.json'), 'utf8')) as SandboxCredentials;

// Every query a pooled client sends, timed from the call to its answer.
interface Sent {
  text: string;
  values?: unknown[];
  ms: number;
  at: number;
}
let log: Sent[] = [];
const clientQuery = pg.Client.prototype.query as (...args: unknown[]) => unknown;
// Statements inside a transaction are the usage ledger's flush (reads open none): listed apart.
const inTx = new WeakSet<pg.Client>();
let flushed = 0;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const q = args[0] as string | { text: string };
  const text = typeof q === 'string' ? q : q.text;
  if (/^BEGIN/.test(text)) inTx.add(this);
  if (inTx.has(this)) {
    flushed++;
    if (/^(COMMIT|ROLLBACK)/.test(text)) inTx.delete(this);
    return clientQuery.apply(this, args);
  }
  const values = typeof q === 'string' ? (args[1] as unknown[] | undefined) : (q as { values?: unknown[] }).values;
  const at = performance.now();
  // The pool passes a callback; a transaction's client awaits the promise.
  const last = args.length - 1;
  const cb = args[last];
  if (typeof cb === 'function')
    args[last] = (...r: unknown[]) => {
      log.push({ text, values, ms: performance.now() - at, at });
      return cb(...r);
    };
  const out = clientQuery.apply(this, args);
  if (out instanceof Promise)
    out.then(
      () => log.push({ text, values, ms: performance.now() - at, at }),
      () => {},
    );
  return out;
} as typeof pg.Client.prototype.query;

const server = createServer((req, res) => holder(req, res));
let holder: RequestListener = (_q, r) => {
  r.end();
};
server.listen(0, '127.0.0.1');
await new Promise<void>((r) => server.once('listening', () => r()));
const port = (server.address() as AddressInfo).port;
const config = loadConfig({
  ...process.env,
  FLOWPORT_DATA_DIR: dataDir,
  FLOWPORT_DATABASE_URL: withSearchPath(testDatabaseUrl(), 'bench_reads_keep'),
  PORT: String(port),
  FLOWPORT_PUBLIC_URL: `http://127.0.0.1:${port}`,
  FLOWPORT_LOG_LEVEL: 'silent',
  FLOWPORT_WORKER: 'off',
});
const runtime = await createRuntime(config);
holder = runtime.listener;
const db = runtime.services.db;

const events = Number(
  (await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM events WHERE shop_id = ?', [creds.shop_id]))?.n,
);
// The deep cursor: after 90% of the shop's events, as bench:reads reads it.
const deep = await db.get<{ id: string }>('SELECT id FROM events WHERE shop_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?', [
  creds.shop_id,
  Math.floor(events * 0.9),
]);
const recent = await db.get<{ id: string }>(
  "SELECT id FROM events WHERE shop_id = ? AND state = 'delivered' ORDER BY id DESC LIMIT 1 OFFSET 100",
  [creds.shop_id],
);
const cursor = sealCursor(
  SecretBox.fromDataDir(dataDir),
  listScope('events', creds.shop_id, 'desc'),
  deep?.id as string,
);
const kinds: [string, string][] = [
  ['grant', '/grant'],
  ['plan-usage', '/plan-usage'],
  ['endpoints', '/endpoints'],
  ['setup', '/setup'],
  ['events/{id}', `/events/${recent?.id}`],
  ['receipts', '/receipts?limit=50'],
  ['first page', '/events?limit=50'],
  ['state=failed', '/events?limit=50&state=failed'],
  ['state=failed&event_type', '/events?limit=50&state=failed&event_type=refund.issued'],
  ['replay_available', '/events?limit=50&replay_available=true'],
  ['deep cursor', `/events?limit=50&cursor=${encodeURIComponent(cursor)}`],
];

if (opts.only) kinds.splice(0, kinds.length, ...kinds.filter(([name]) => name === opts.only));

const get = async (path: string) => {
  const res = await fetch(`http://127.0.0.1:${port}/agent/v1${path}`, {
    headers: { authorization: `Bearer ${creds.grant_token}` },
  });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

console.log(
  `bench:round-trips — ${events.toLocaleString('en')} events, load average ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')}`,
);
for (const [, path] of kinds) for (let i = 0; i < 20; i++) await get(path);
for (const [name, path] of kinds) {
  const perRequest: { http: number; queries: Sent[] }[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    log = [];
    const t0 = performance.now();
    await get(path);
    const http = performance.now() - t0;
    perRequest.push({ http, queries: log.filter((s) => s.at >= t0) });
  }
  const counts = perRequest.map((r) => r.queries.length);
  const inDb = perRequest.map((r) => r.queries.reduce((s, q) => s + q.ms, 0));
  console.log(
    `\n${name}: ${median(counts)} round trips (min ${Math.min(...counts)}, max ${Math.max(...counts)}); HTTP median ${median(perRequest.map((r) => r.http)).toFixed(2)} ms, of which waiting on PostgreSQL ${median(inDb).toFixed(2)} ms`,
  );
  // One request's statements, with the median time of each position over the requests.
  const typical = perRequest.find((r) => r.queries.length === median(counts));
  typical?.queries.forEach((q, i) => {
    const times = perRequest.map((r) => r.queries[i]?.ms).filter((x): x is number => x !== undefined);
    console.log(`  ${median(times).toFixed(2).padStart(6)} ms  ${q.text.replace(/\s+/g, ' ').slice(0, 150)}`);
    if (opts.show === name) console.log(`${q.text}\n  -- ${JSON.stringify(q.values ?? [])}`);
  });
}
console.log(`\n(statements of the usage ledger's flushes, in transactions, left out: ${flushed})`);
server.close();
await runtime.close();
