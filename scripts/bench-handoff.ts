// npm run bench:handoff [-- --rate 200 --seconds 5 --rounds 5 --store sqlite|postgres --root <tree>]
// (--root runs Flowport from another source tree, e.g. a worktree of an earlier commit, for
// alternating A/B rounds in one session.)
// End-to-end handoff latency: from intake's 202 (as the sender sees it) to the
// Shopify stand-in receiving the Flow trigger, at a fixed open-loop event rate.
// Three processes, as in production: Flowport (intake + delivery worker), the
// Shopify stand-in (`flowport sandbox`), and this one, the sender. Both clocks are
// the machine's; the stand-in stamps each trigger on arrival.
// Rounds alternate with a baseline (the order flips each round): the sender posting the same
// trigger at the same rate straight to the stand-in (standInBaseline), the floor this machine
// gives a handoff at that moment. Prints each round and the medians of the rounds' p50/p99; the
// goal is p99 < 50 ms at 200 events/s.
import { createHmac } from 'node:crypto';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { DEFAULT_HMAC } from '../api/src/services/endpoints.ts';
import {
  alternating,
  parseStore,
  type StandInTrigger,
  setStandInBucket,
  standInBaseline,
  startBenchFlowport,
  startBenchSandbox,
} from './lib/bench-flowport.ts';

const { values } = parseArgs({
  options: {
    rate: { type: 'string' },
    seconds: { type: 'string' },
    store: { type: 'string', default: 'sqlite' },
    root: { type: 'string' },
    rounds: { type: 'string', default: '5' },
  },
});
const STORE = parseStore(values.store);
const RATE = Number(values.rate ?? 200);
const SECONDS = Number(values.seconds ?? 5);
const ROUNDS = Math.max(5, Number(values.rounds));
const TOTAL = Math.round(RATE * SECONDS);

const now = () => performance.timeOrigin + performance.now();

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}
const fmt = (n: number) => `${n.toFixed(1)} ms`;

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
  async function triggers(): Promise<StandInTrigger[]> {
    return ((await (await fetch(`${sandbox.url}/sandbox/shopify/triggers`)).json()) as { triggers: StandInTrigger[] })
      .triggers;
  }
  async function waitDelivered(ids: string[], ms: number): Promise<Map<string, number>> {
    const deadline = Date.now() + ms;
    for (;;) {
      const got = new Map((await triggers()).map((t) => [String(t.payload['Flowport event id']), t.receivedAt]));
      if (ids.every((id) => got.has(id)) || Date.now() > deadline) return got;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  // Warm-up (connections, prepared statements, JIT; the shop's admin URL reaches the worker's cache), not measured.
  await new Promise((r) => setTimeout(r, 1_500));
  for (let i = 0; i < 50; i++) await send(-1 - i);
  await waitDelivered([...acceptedAt.keys()], 10_000);
  const like = (await triggers()).at(-1);
  if (!like) throw new Error('no trigger reached the stand-in during the warm-up');
  // The baseline's shop: its own bucket, large enough never to throttle.
  const baselineShop = 'bench-baseline.myshopify.com';
  await setStandInBucket(sandbox.url, baselineShop, { maximumAvailable: 1e9, restoreRate: 1e9 });
  const direct = standInBaseline(sandbox.url, like);

  console.log(
    `bench:handoff — load average ${loadavg()
      .map((n) => n.toFixed(2))
      .join(
        ' ',
      )} (machine shared with other work) — ${ROUNDS} rounds of ${TOTAL} events at ${RATE}/s for ${SECONDS} s, alternating with the baseline (${flowport.storeLabel}; Flowport${values.root ? ` from ${values.root}` : ''}, stand-in and sender in separate processes)`,
  );
  /** Sends TOTAL at RATE, open loop, calling `one(i)` at each due time. */
  async function schedule(one: (i: number) => Promise<void>): Promise<number> {
    const start = now();
    const pending: Promise<void>[] = [];
    for (let i = 0; i < TOTAL; i++) {
      const due = start + (i * 1000) / RATE;
      const wait = due - now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      pending.push(one(i));
    }
    await Promise.all(pending);
    return (now() - start) / 1000;
  }
  const sorted = (a: number[]) => a.sort((x, y) => x - y);
  async function flowportRound(round: number) {
    acceptedAt.clear();
    sentAt.clear();
    await fetch(`${sandbox.url}/sandbox/shopify/triggers`, { method: 'DELETE' });
    const elapsed = await schedule((i) => send(round * TOTAL + i));
    const receivedAt = await waitDelivered([...acceptedAt.keys()], 60_000);
    const handoff: number[] = [];
    const endToEnd: number[] = [];
    const intake: number[] = [];
    let early = 0;
    for (const [id, t202] of acceptedAt) {
      const tr = receivedAt.get(id);
      if (tr === undefined) {
        missing++;
        continue;
      }
      const d = tr - t202;
      if (d < 0) early++;
      handoff.push(Math.max(0, d));
      endToEnd.push(tr - (sentAt.get(id) as number));
      intake.push(t202 - (sentAt.get(id) as number));
    }
    return { elapsed, handoff: sorted(handoff), endToEnd: sorted(endToEnd), intake: sorted(intake), early };
  }
  async function baselineRound(round: number) {
    await fetch(`${sandbox.url}/sandbox/shopify/triggers`, { method: 'DELETE' });
    const sent = new Map<string, number>();
    let refused = 0;
    await schedule(async (i) => {
      const id = `baseline_${round}_${i}`;
      const r = await direct(baselineShop, id);
      if (r.ok) sent.set(id, r.sentAt);
      else refused++;
    });
    const got = await waitDelivered([...sent.keys()], 10_000);
    const lat: number[] = [];
    for (const [id, t] of sent) {
      const tr = got.get(id);
      if (tr !== undefined) lat.push(tr - t);
    }
    return { lat: sorted(lat), refused };
  }

  const rounds: { p50: number; p99: number; e2e99: number; base50: number; base99: number }[] = [];
  await alternating(ROUNDS, baselineRound, flowportRound, (round, base, fp) => {
    const r = {
      p50: pct(fp.handoff, 50),
      p99: pct(fp.handoff, 99),
      e2e99: pct(fp.endToEnd, 99),
      base50: pct(base.lat, 50),
      base99: pct(base.lat, 99),
    };
    rounds.push(r);
    console.log(
      `round ${round + 1}: Flowport, intake 202 → Flow trigger received p50 ${fmt(r.p50)}, p99 ${fmt(r.p99)}, max ${fmt(fp.handoff.at(-1) ?? Number.NaN)} ` +
        `(request sent → trigger p99 ${fmt(r.e2e99)}; → 202 p99 ${fmt(pct(fp.intake, 99))}; sent in ${fp.elapsed.toFixed(1)} s, delivered ${fp.handoff.length}/${TOTAL}` +
        `${fp.early ? `, ${fp.early} triggers before the sender read its 202, counted as 0 ms` : ''}); ` +
        `baseline, request sent → trigger received p50 ${fmt(r.base50)}, p99 ${fmt(r.base99)}${base.refused ? ` (${base.refused} refused)` : ''}`,
    );
  });
  const med = (k: keyof (typeof rounds)[number]) => pct(sorted(rounds.map((r) => r[k])), 50);
  console.log(
    `medians of ${ROUNDS} rounds: Flowport intake 202 → Flow p50 ${fmt(med('p50'))}, p99 ${fmt(med('p99'))} (request sent → trigger p99 ${fmt(med('e2e99'))}); ` +
      `baseline p50 ${fmt(med('base50'))}, p99 ${fmt(med('base99'))}; not delivered within 60 s: ${missing}`,
  );
  const p99 = med('p99');
  console.log(
    `goal p99 < 50 ms at 200 events/s (median of the rounds' p99): ${p99 < 50 && RATE >= 200 ? 'met' : 'NOT met'} (p99 ${fmt(p99)})`,
  );
} finally {
  await flowport.stop();
  await sandbox.stop();
}
process.exit(missing > 0 ? 1 : 0);
