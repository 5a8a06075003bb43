// npm run bench:handoff [-- --rate 200 --seconds 10 --store postgres]
// End-to-end handoff latency: from intake's 202 (as the sender sees it) to the
// sandbox receiving the Flow trigger, at a fixed open-loop event rate, against a
// real runtime (SQLite file, or with --store postgres a fresh schema in
// FLOWPORT_TEST_DATABASE_URL; real HTTP, in-process sandbox and worker).
// Prints p50/p90/p99/max; the goal is p99 < 50 ms at 200 events/s.
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { serve } from '@hono/node-server';
import { loadConfig } from '../api/src/config.ts';
import { createRuntime } from '../api/src/runtime.ts';
import { ensureSandbox } from '../api/src/sandbox/bootstrap.ts';
import { DEFAULT_HMAC } from '../api/src/services/endpoints.ts';
import { createPgSchema } from '../tests/helpers/store.ts';

const { values } = parseArgs({
  options: { rate: { type: 'string' }, seconds: { type: 'string' }, store: { type: 'string', default: 'sqlite' } },
});
if (values.store !== 'sqlite' && values.store !== 'postgres')
  throw new Error(`--store must be sqlite or postgres, got ${values.store}`);
const pg = values.store === 'postgres' ? await createPgSchema('benchhandoff') : null;
const RATE = Number(values.rate ?? 200);
const SECONDS = Number(values.seconds ?? 10);
const TOTAL = Math.round(RATE * SECONDS);

const now = () => performance.timeOrigin + performance.now();

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}
const fmt = (n: number) => `${n.toFixed(1)} ms`;

const dataDir = mkdtempSync(join(tmpdir(), 'flowport-bench-'));
const holder: { fetch: (req: Request) => Response | Promise<Response> } = {
  fetch: () => new Response('starting', { status: 503 }),
};
const server = serve({ fetch: (req) => holder.fetch(req), port: 0, hostname: '127.0.0.1' });
await new Promise<void>((r) => server.once('listening', () => r()));
const port = (server.address() as AddressInfo).port;
const config = loadConfig({
  FLOWPORT_DATA_DIR: dataDir,
  PORT: String(port),
  FLOWPORT_PUBLIC_URL: `http://127.0.0.1:${port}`,
  FLOWPORT_LOG_LEVEL: 'silent',
  ...(pg ? { FLOWPORT_DATABASE_URL: pg.url } : {}),
});
const runtime = await createRuntime(config);
holder.fetch = runtime.app.fetch;
const { creds } = await ensureSandbox(runtime.services);
// The sandbox shop starts on the free plan (1,000 events a month); lift it so the cap does not end the run.
await runtime.services.db.run("UPDATE shops SET plan = 'scale' WHERE id = ?", [creds.shop_id]);
const sandbox = runtime.sandbox;
if (!sandbox) throw new Error('bench needs sandbox mode');
// The bench measures Flowport, not Shopify's rate limit: give the stand-in a bucket that never runs dry.
sandbox.bucket = { maximumAvailable: 1_000_000, restoreRate: 1_000_000 };
runtime.worker?.start();

const acceptedAt = new Map<string, number>();
const sentAt = new Map<string, number>();
const receivedAt = new Map<string, number>();
sandbox.listeners.add((t) => receivedAt.set(String(t.payload['Flowport event id']), t.receivedAt));

async function send(i: number): Promise<void> {
  const body = JSON.stringify({ type: 'bench.event', id: `bench_${i}`, n: i });
  const sig = createHmac('sha256', creds.signing_secret).update(body).digest('hex');
  const t0 = now();
  const res = await fetch(creds.ingest_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [DEFAULT_HMAC.header]: `${DEFAULT_HMAC.prefix}${sig}` },
    body,
  });
  const t1 = now();
  if (res.status !== 202) throw new Error(`intake answered ${res.status}: ${await res.text()}`);
  const { event_id } = (await res.json()) as { event_id: string };
  sentAt.set(event_id, t0);
  acceptedAt.set(event_id, t1);
}

// Warm-up (connections, prepared statements, JIT), not measured.
for (let i = 0; i < 50; i++) await send(-1 - i);
const warm = new Set(acceptedAt.keys());
const deadlineWarm = Date.now() + 10_000;
while ([...warm].some((id) => !receivedAt.has(id)) && Date.now() < deadlineWarm)
  await new Promise((r) => setTimeout(r, 10));
acceptedAt.clear();
sentAt.clear();

console.log(
  `bench:handoff — ${TOTAL} events at ${RATE}/s for ${SECONDS} s (${pg ? 'PostgreSQL' : 'SQLite'}, in-process sandbox, worker on)`,
);
const start = now();
const pending: Promise<void>[] = [];
for (let i = 0; i < TOTAL; i++) {
  const due = start + (i * 1000) / RATE;
  const wait = due - now();
  if (wait > 1) await new Promise((r) => setTimeout(r, wait));
  pending.push(send(i));
}
await Promise.all(pending);
const deadline = Date.now() + 60_000;
while ([...acceptedAt.keys()].some((id) => !receivedAt.has(id)) && Date.now() < deadline)
  await new Promise((r) => setTimeout(r, 10));
const elapsed = (now() - start) / 1000;

const handoff: number[] = [];
const endToEnd: number[] = [];
const intake: number[] = [];
let beforeAccept = 0;
let missing = 0;
for (const [id, t202] of acceptedAt) {
  const tr = receivedAt.get(id);
  if (tr === undefined) {
    missing++;
    continue;
  }
  const d = tr - t202;
  if (d < 0) beforeAccept++;
  handoff.push(Math.max(0, d));
  endToEnd.push(tr - (sentAt.get(id) as number));
  intake.push(t202 - (sentAt.get(id) as number));
}
for (const a of [handoff, endToEnd, intake]) a.sort((x, y) => x - y);
const row = (name: string, a: number[]) =>
  `${name.padEnd(34)} p50 ${fmt(pct(a, 50)).padStart(9)}   p90 ${fmt(pct(a, 90)).padStart(9)}   p99 ${fmt(pct(a, 99)).padStart(9)}   max ${fmt(a.at(-1) ?? Number.NaN).padStart(9)}`;
console.log(
  `sent ${TOTAL} in ${elapsed.toFixed(1)} s; delivered ${handoff.length}; not delivered within 60 s: ${missing}`,
);
console.log(row('intake 202 → Flow trigger received', handoff));
console.log(row('request sent → Flow trigger received', endToEnd));
console.log(row('request sent → 202 (intake)', intake));
if (beforeAccept) console.log(`(${beforeAccept} triggers arrived before the sender had read its 202; counted as 0 ms)`);
const p99 = pct(handoff, 99);
console.log(`goal p99 < 50 ms at 200 events/s: ${p99 < 50 && RATE >= 200 ? 'met' : 'NOT met'} (p99 ${fmt(p99)})`);

await runtime.close();
server.close();
(server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
rmSync(dataDir, { recursive: true, force: true });
await pg?.drop();
process.exit(missing > 0 ? 1 : 0);
