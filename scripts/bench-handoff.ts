// npm run bench:handoff [-- --rate 200 --seconds 10 --store sqlite|postgres --root <tree>]
// (--root runs Flowport from another source tree, e.g. a worktree of an earlier commit, for
// alternating A/B rounds in one session.)
// End-to-end handoff latency: from intake's 202 (as the sender sees it) to the
// Shopify stand-in receiving the Flow trigger, at a fixed open-loop event rate.
// Three processes, as in production: Flowport (intake + delivery worker), the
// Shopify stand-in (`flowport sandbox`), and this one, the sender. Both clocks are
// the machine's; the stand-in stamps each trigger on arrival.
// Prints p50/p90/p99/max; the goal is p99 < 50 ms at 200 events/s.
import { createHmac } from 'node:crypto';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { DEFAULT_HMAC } from '../api/src/services/endpoints.ts';
import { parseStore, startBenchFlowport, startBenchSandbox } from './lib/bench-flowport.ts';

const { values } = parseArgs({
  options: {
    rate: { type: 'string' },
    seconds: { type: 'string' },
    store: { type: 'string', default: 'sqlite' },
    root: { type: 'string' },
  },
});
const STORE = parseStore(values.store);
const RATE = Number(values.rate ?? 200);
const SECONDS = Number(values.seconds ?? 10);
const TOTAL = Math.round(RATE * SECONDS);

const now = () => performance.timeOrigin + performance.now();

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}
const fmt = (n: number) => `${n.toFixed(1)} ms`;

interface Trigger {
  receivedAt: number;
  payload: Record<string, unknown>;
}

const sandbox = await startBenchSandbox();
const flowport = await startBenchFlowport({
  store: STORE,
  worker: true,
  ...(values.root ? { root: values.root } : {}),
}).catch(async (err) => {
  await sandbox.stop();
  throw err;
});
let missing = 0;
try {
  const { creds } = flowport;
  // The sandbox shop hands off to the stand-in process instead of the in-process one.
  const db = await flowport.openDb();
  await db.run('UPDATE shops SET admin_base_url = ? WHERE id = ?', [
    `${sandbox.url}/sandbox/shopify/${creds.shop_domain}`,
    creds.shop_id,
  ]);
  await db.close();

  const acceptedAt = new Map<string, number>();
  const sentAt = new Map<string, number>();
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
  async function received(): Promise<Map<string, number>> {
    const r = (await (await fetch(`${sandbox.url}/sandbox/shopify/triggers`)).json()) as { triggers: Trigger[] };
    return new Map(r.triggers.map((t) => [String(t.payload['Flowport event id']), t.receivedAt]));
  }
  async function waitDelivered(ids: string[], ms: number): Promise<Map<string, number>> {
    const deadline = Date.now() + ms;
    for (;;) {
      const got = await received();
      if (ids.every((id) => got.has(id)) || Date.now() > deadline) return got;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  // Warm-up (connections, prepared statements, JIT; the shop's admin URL reaches the worker's cache), not measured.
  await new Promise((r) => setTimeout(r, 1_500));
  for (let i = 0; i < 50; i++) await send(-1 - i);
  await waitDelivered([...acceptedAt.keys()], 10_000);
  acceptedAt.clear();
  sentAt.clear();
  await fetch(`${sandbox.url}/sandbox/shopify/triggers`, { method: 'DELETE' });

  console.log(
    `bench:handoff — load average ${loadavg()
      .map((n) => n.toFixed(2))
      .join(
        ' ',
      )} (machine shared with other work) — ${TOTAL} events at ${RATE}/s for ${SECONDS} s (${flowport.storeLabel}; Flowport${values.root ? ` from ${values.root}` : ''}, stand-in and sender in separate processes)`,
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
  const receivedAt = await waitDelivered([...acceptedAt.keys()], 60_000);
  const elapsed = (now() - start) / 1000;

  const handoff: number[] = [];
  const endToEnd: number[] = [];
  const intake: number[] = [];
  let beforeAccept = 0;
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
    `${name.padEnd(36)} p50 ${fmt(pct(a, 50)).padStart(9)}   p90 ${fmt(pct(a, 90)).padStart(9)}   p99 ${fmt(pct(a, 99)).padStart(9)}   max ${fmt(a.at(-1) ?? Number.NaN).padStart(9)}`;
  console.log(
    `sent ${TOTAL} in ${elapsed.toFixed(1)} s; delivered ${handoff.length}; not delivered within 60 s: ${missing}`,
  );
  console.log(row('intake 202 → Flow trigger received', handoff));
  console.log(row('request sent → Flow trigger received', endToEnd));
  console.log(row('request sent → 202 (intake)', intake));
  if (beforeAccept)
    console.log(`(${beforeAccept} triggers arrived before the sender had read its 202; counted as 0 ms)`);
  const p99 = pct(handoff, 99);
  console.log(`goal p99 < 50 ms at 200 events/s: ${p99 < 50 && RATE >= 200 ? 'met' : 'NOT met'} (p99 ${fmt(p99)})`);
} finally {
  await flowport.stop();
  await sandbox.stop();
}
process.exit(missing > 0 ? 1 : 0);
