// npm run bench:handoff [-- --rate 200 --seconds 5 --rounds 5 --store sqlite|postgres --root <tree> --under-load --bucket plus]
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
// --under-load (issue 45): the baseline is the same handoff on a quiet Flowport instead, and the
// other round runs intake load beside it at half intake's capacity, measured at the start of the
// run (closed loop, 64 connections, 3 s) on a second shop of the same Flowport, whose events the
// worker also hands off (to the stand-in, under a bucket that never throttles). The load runs in
// its own process (scripts/lib/intake-load-run.ts). Between rounds the load shop's backlog is let
// drain (bounded), so a quiet round is quiet. Goal: loaded p99 < 250 ms on PostgreSQL, < 100 ms on
// SQLite, printed beside the quiet p99 of the same run; the load average is printed per round.
// --bucket standard|advanced|plus (default plus): the measured shop's Admin API bucket at the
// stand-in (see below why Plus). --intake-rate N sends N events/s instead of half the capacity measured (capacity is still
// measured and printed), so a before and an after run can load intake alike.
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { newId } from '../api/src/ids.ts';
import { DEFAULT_HMAC } from '../api/src/services/endpoints.ts';
import { SHOPIFY_BUCKETS } from '../api/src/sandbox/app.ts';
import type { Db, SqlParam } from '../api/src/store/db.ts';
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
    'under-load': { type: 'boolean', default: false },
    'intake-rate': { type: 'string' },
    bucket: { type: 'string', default: 'plus' },
  },
});
const BUCKET = values.bucket as keyof typeof SHOPIFY_BUCKETS;
if (!(BUCKET in SHOPIFY_BUCKETS)) throw new Error(`--bucket: one of ${Object.keys(SHOPIFY_BUCKETS).join(', ')}`);
const UNDER_LOAD = values['under-load'] === true;
/** Issue 45: handoff p99 at 200 events/s beside intake at half its capacity. */
const LOADED_GOAL_MS = { sqlite: 100, postgres: 250 } as const;
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
  // The measured shop's Admin API bucket: Shopify Plus's (1,000 points/s), the only plan whose
  // restore covers 200 calls/s. On the Standard bucket (2,000 points, 100/s) the stand-in's default,
  // a run at 200 events/s empties the bucket after about five rounds and Flowport, rightly, paces
  // the shop at 100 calls/s: the later rounds then measured Shopify's rate limit (p50 1.4 s, p99
  // 2.9 s, in quiet and loaded rounds alike), not the handoff. `--bucket standard` shows that.
  await setStandInBucket(sandbox.url, creds.shop_domain, SHOPIFY_BUCKETS[BUCKET]);
  console.log(
    `the measured shop's Admin API bucket: ${BUCKET} (${SHOPIFY_BUCKETS[BUCKET].maximumAvailable} points, restoring ${SHOPIFY_BUCKETS[BUCKET].restoreRate}/s)`,
  );
  // The baseline's shop: its own bucket, large enough never to throttle.
  const baselineShop = 'bench-baseline.myshopify.com';
  await setStandInBucket(sandbox.url, baselineShop, { maximumAvailable: 1e9, restoreRate: 1e9 });
  const direct = standInBaseline(sandbox.url, like);
  const loadShop = UNDER_LOAD ? await addLoadShop() : null;
  const loadAvg = () =>
    loadavg()
      .map((n) => n.toFixed(2))
      .join(' ');

  if (!UNDER_LOAD)
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

  if (loadShop) await underLoad(loadShop);
  else await againstStandIn();

  /** A second shop (a copy of the sandbox shop and its endpoint) handing off to the stand-in without throttling. */
  async function addLoadShop(): Promise<{ shopId: string; ingest: string }> {
    const db = await flowport.openDb();
    const shopId = newId('shop');
    const endpoint = newId('endpoint');
    const domain = `bench-load-${shopId.slice(-6)}.myshopify.com`;
    const insert = (tx: Db, table: string, row: Record<string, SqlParam>) =>
      tx.run(
        `INSERT INTO ${table} (${Object.keys(row).join(', ')}) VALUES (${Object.keys(row)
          .map(() => '?')
          .join(', ')})`,
        Object.values(row),
      );
    const shopRow = (await db.get<Record<string, SqlParam>>('SELECT * FROM shops WHERE id = ?', [creds.shop_id])) ?? {};
    const epRow =
      (await db.get<Record<string, SqlParam>>('SELECT * FROM endpoints WHERE id = ?', [creds.endpoint_id])) ?? {};
    const versions = await db.all<Record<string, SqlParam>>('SELECT * FROM endpoint_versions WHERE endpoint_id = ?', [
      creds.endpoint_id,
    ]);
    await db.tx(async (tx) => {
      await insert(tx, 'shops', {
        ...shopRow,
        id: shopId,
        domain,
        admin_base_url: `${sandbox.url}/sandbox/shopify/${domain}`,
      });
      await insert(tx, 'endpoints', { ...epRow, id: endpoint, shop_id: shopId });
      for (const v of versions) await insert(tx, 'endpoint_versions', { ...v, endpoint_id: endpoint });
    });
    await db.close();
    await setStandInBucket(sandbox.url, domain, { maximumAvailable: 1e9, restoreRate: 1e9 });
    return { shopId, ingest: creds.ingest_url.replace(creds.endpoint_id, endpoint) };
  }

  /** The quiet handoff beside the same handoff with intake load at half capacity, alternating. */
  async function underLoad(shop: { shopId: string; ingest: string }): Promise<void> {
    const run = promisify(execFile);
    const intakeLoad = async (seconds: number, rate?: number) => {
      const { stdout } = await run(
        process.execPath,
        [
          join(import.meta.dirname, 'lib', 'intake-load-run.ts'),
          JSON.stringify({
            url: shop.ingest,
            secret: creds.signing_secret,
            header: creds.signature_header,
            connections: 64,
            seconds,
            ...(rate ? { rate } : {}),
          }),
        ],
        { maxBuffer: 1 << 20 },
      );
      return JSON.parse(stdout) as { rps: number; ok: number; non2xx: number; errors: number; p99: number };
    };
    const db = await flowport.openDb();
    /** Waits (at most 120 s) until the load shop has nothing waiting for handoff; returns how many still wait. */
    const drain = async () => {
      const deadline = Date.now() + 120_000;
      for (;;) {
        const n = Number(
          (
            await db.get<{ n: number }>(
              "SELECT COUNT(*) AS n FROM events WHERE shop_id = ? AND state IN ('queued', 'delivering')",
              [shop.shopId],
            )
          )?.n ?? 0,
        );
        if (n === 0 || Date.now() > deadline) return n;
        await new Promise((r) => setTimeout(r, 250));
      }
    };
    await intakeLoad(2); // warm-up of the load path, not measured
    await drain();
    const capacity = await intakeLoad(3);
    const rate = values['intake-rate'] ? Number(values['intake-rate']) : capacity.rps / 2;
    const drainStarted = Date.now();
    const left = await drain();
    console.log(
      `bench:handoff --under-load — load average ${loadAvg()} — intake capacity (closed loop, 64 connections, 3 s, worker on): ${capacity.rps.toFixed(0)} events/s; load rounds send ${rate.toFixed(0)} events/s to a second shop beside ${RATE} handoff events/s (${ROUNDS} rounds of ${SECONDS} s, alternating with a quiet round; ${flowport.storeLabel}). Its backlog drained in ${((Date.now() - drainStarted) / 1000).toFixed(1)} s${left ? ` (${left} still waiting)` : ''}.`,
    );
    if (values['intake-rate'])
      console.log(`--intake-rate: the load rounds send ${rate} events/s, not half the capacity measured.`);
    const rows: { quiet99: number; loaded99: number; quiet50: number; loaded50: number; load: number }[] = [];
    await alternating(
      ROUNDS,
      async (round) => {
        const la = loadAvg();
        return { fp: await flowportRound(2 * round), la };
      },
      async (round) => {
        const la = loadAvg();
        const started = intakeLoad(SECONDS + 1, rate);
        const fp = await flowportRound(2 * round + 1);
        const l = await started;
        const drainFrom = Date.now();
        const left = await drain();
        return { fp, la, l, drained: (Date.now() - drainFrom) / 1000, left };
      },
      (round, quiet, loaded) => {
        const r = {
          quiet50: pct(quiet.fp.handoff, 50),
          quiet99: pct(quiet.fp.handoff, 99),
          loaded50: pct(loaded.fp.handoff, 50),
          loaded99: pct(loaded.fp.handoff, 99),
          load: loaded.l.rps,
        };
        rows.push(r);
        console.log(
          `round ${round + 1}: quiet (load average ${quiet.la}) p50 ${fmt(r.quiet50)}, p99 ${fmt(r.quiet99)}, delivered ${quiet.fp.handoff.length}/${TOTAL}; ` +
            `under load (load average ${loaded.la}) p50 ${fmt(r.loaded50)}, p99 ${fmt(r.loaded99)}, max ${fmt(loaded.fp.handoff.at(-1) ?? Number.NaN)}, delivered ${loaded.fp.handoff.length}/${TOTAL}, 202 p99 ${fmt(pct(loaded.fp.intake, 99))}; ` +
            `intake load ${r.load.toFixed(0)} events/s (2xx ${loaded.l.ok}, non-2xx ${loaded.l.non2xx}, errors ${loaded.l.errors}, p99 ${loaded.l.p99} ms), its backlog drained in ${loaded.drained.toFixed(1)} s${loaded.left ? ` (${loaded.left} still waiting)` : ''}`,
        );
      },
    );
    await db.close();
    const med = (k: keyof (typeof rows)[number]) => pct(sorted(rows.map((r) => r[k])), 50);
    const goal = LOADED_GOAL_MS[STORE];
    console.log(
      `medians of ${ROUNDS} rounds: handoff (intake 202 → Flow trigger) quiet p50 ${fmt(med('quiet50'))}, p99 ${fmt(med('quiet99'))}; ` +
        `beside intake at ${med('load').toFixed(0)} events/s (capacity measured ${capacity.rps.toFixed(0)}) p50 ${fmt(med('loaded50'))}, p99 ${fmt(med('loaded99'))}; not delivered within 60 s: ${missing}; load average at the end ${loadAvg()}`,
    );
    console.log(
      `goal (issue 45) p99 < ${goal} ms at ${RATE} events/s beside intake at half its capacity: ${med('loaded99') < goal && RATE >= 200 ? 'met' : 'NOT met'} (p99 ${fmt(med('loaded99'))}; quiet ${fmt(med('quiet99'))})`,
    );
  }

  /** Flowport's handoff against the stand-in alone (the sender posting straight to it), alternating. */
  async function againstStandIn(): Promise<void> {
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
  }
} finally {
  await flowport.stop();
  await sandbox.stop();
}
process.exit(missing > 0 ? 1 : 0);
