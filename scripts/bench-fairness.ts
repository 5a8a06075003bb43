// npm run bench:fairness [-- --store sqlite|postgres --workers 1-4 --seconds 10 --rounds 5 --shops 1000
//                          --small-rate 0.2 --hot-rate 500 --hot-plan plus | --hot-restore N --hot-size N]
// Many shops, fairly (issue 31, goal 4). 1,000 small shops each send 0.2 events/s and one hot shop
// sends 500 events/s. The Shopify stand-in (its own process) gives the hot shop its own leaky
// bucket (default Plus-sized: 20,000 points, 1,000/s; --hot-restore/--hot-size for a tighter one,
// so the hot shop's load exceeds what Shopify restores) and answers THROTTLED with the real
// throttleStatus. Prints: the small shops' p99 intake-to-Flow latency (goal < 100 ms), the hot
// shop's delivered rate against its bucket's restore rate, and the THROTTLED answers after the
// first (goal: a handful). --workers N (2–4) starts N − 1 more delivery processes (`flowport worker`)
// on the same PostgreSQL database. Rounds alternate with a baseline (the order flips each round): the
// same schedule of triggers posted by the sender straight to the stand-in (the small shops' to
// their own shops, the hot shop's to a shop whose bucket never runs dry), the floor this machine
// gives a handoff at that moment. Prints each round and the medians of the rounds.
import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
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
  waitFor,
} from './lib/bench-flowport.ts';

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    workers: { type: 'string', default: '1' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '5' },
    shops: { type: 'string', default: '1000' },
    'small-rate': { type: 'string', default: '0.2' },
    'hot-rate': { type: 'string', default: '500' },
    'hot-plan': { type: 'string', default: 'plus' },
    'hot-restore': { type: 'string' },
    'hot-size': { type: 'string' },
  },
});
const STORE = parseStore(values.store);
const WORKERS = Number(values.workers);
const SECONDS = Number(values.seconds);
const ROUNDS = Math.max(5, Number(values.rounds));
const SHOPS = Number(values.shops);
const SMALL_RATE = Number(values['small-rate']);
const HOT_RATE = Number(values['hot-rate']);
const plan = SHOPIFY_BUCKETS[values['hot-plan'] as keyof typeof SHOPIFY_BUCKETS];
if (!plan) throw new Error(`--hot-plan must be one of ${Object.keys(SHOPIFY_BUCKETS).join(', ')}`);
const HOT_BUCKET = {
  maximumAvailable: Number(values['hot-size'] ?? plan.maximumAvailable),
  restoreRate: Number(values['hot-restore'] ?? plan.restoreRate),
};
if (!Number.isInteger(WORKERS) || WORKERS < 1 || WORKERS > 4) throw new Error('--workers must be 1 to 4');
if (WORKERS > 1 && STORE !== 'postgres')
  throw new Error('--workers 2 or more needs --store postgres (one database, several processes)');

const now = () => performance.timeOrigin + performance.now();
function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}
const ms = (n: number) => `${n.toFixed(1)} ms`;

console.log(
  `bench:fairness — load average ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')} (machine shared with other work)`,
);

const sandbox = await startBenchSandbox();
const flowport = await startBenchFlowport({ store: STORE, worker: true }).catch(async (err) => {
  await sandbox.stop();
  throw err;
});
const others: ChildProcess[] = [];
let failed = false;
try {
  const { creds } = flowport;
  const db = await flowport.openDb();
  const adminBase = (domain: string) => `${sandbox.url}/sandbox/shopify/${domain}`;
  await db.run('UPDATE shops SET admin_base_url = ? WHERE id = ?', [adminBase(creds.shop_domain), creds.shop_id]);
  // The small shops: copies of the sandbox shop and its endpoint (same token, secret and config).
  const shopRow = (await db.get<Record<string, SqlParam>>('SELECT * FROM shops WHERE id = ?', [creds.shop_id])) ?? {};
  const epRow =
    (await db.get<Record<string, SqlParam>>('SELECT * FROM endpoints WHERE id = ?', [creds.endpoint_id])) ?? {};
  const versions = await db.all<Record<string, SqlParam>>('SELECT * FROM endpoint_versions WHERE endpoint_id = ?', [
    creds.endpoint_id,
  ]);
  const small: { shop: string; domain: string; endpoint: string; ingest: string }[] = [];
  const insert = (tx: Db, table: string, row: Record<string, SqlParam>) =>
    tx.run(
      `INSERT INTO ${table} (${Object.keys(row).join(', ')}) VALUES (${Object.keys(row)
        .map(() => '?')
        .join(', ')})`,
      Object.values(row),
    );
  await db.tx(async (tx) => {
    for (let i = 0; i < SHOPS; i++) {
      const shop = newId('shop');
      const endpoint = newId('endpoint');
      const domain = `bench-small-${i}-${shop.slice(-6)}.myshopify.com`;
      await insert(tx, 'shops', { ...shopRow, id: shop, domain, admin_base_url: adminBase(domain) });
      await insert(tx, 'endpoints', { ...epRow, id: endpoint, shop_id: shop });
      for (const v of versions) await insert(tx, 'endpoint_versions', { ...v, endpoint_id: endpoint });
      small.push({ shop, domain, endpoint, ingest: creds.ingest_url.replace(creds.endpoint_id, endpoint) });
    }
  });
  await db.close();
  const bucket = await fetch(`${sandbox.url}/sandbox/shopify/_buckets/${creds.shop_domain}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(HOT_BUCKET),
  });
  if (!bucket.ok) throw new Error(`stand-in bucket: ${bucket.status} ${await bucket.text()}`);

  for (let w = 1; w < WORKERS; w++) {
    const child = spawn(process.execPath, [join(import.meta.dirname, '..', 'bin', 'flowport.js'), 'worker'], {
      env: {
        ...process.env,
        FLOWPORT_DATA_DIR: flowport.dataDir,
        FLOWPORT_DATABASE_URL: flowport.databaseUrl ?? '',
        FLOWPORT_LOG_LEVEL: 'silent',
      },
      stdio: 'ignore',
    });
    others.push(child);
    // The worker process has no API; it is up once its pool is (give it a moment to LISTEN).
    await waitFor(async () => new Promise((r) => setTimeout(() => r(true), 1500)), child, `worker ${w + 1}`);
  }

  const acceptedAt = new Map<string, { at: number; hot: boolean }>();
  let refused = 0;
  async function send(ingest: string, secret: string, hot: boolean, i: number): Promise<void> {
    const body = JSON.stringify({ type: 'bench.event', id: `f_${hot ? 'h' : 's'}_${i}`, n: i });
    const sig = createHmac('sha256', secret).update(body).digest('hex');
    let res: Response;
    try {
      res = await fetch(ingest, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [DEFAULT_HMAC.header]: `${DEFAULT_HMAC.prefix}${sig}` },
        body,
      });
    } catch {
      refused++;
      return;
    }
    const t = now();
    if (res.status !== 202) {
      refused++;
      await res.text();
      return;
    }
    const { event_id } = (await res.json()) as { event_id: string };
    acceptedAt.set(event_id, { at: t, hot });
  }
  async function record(): Promise<{ triggers: StandInTrigger[]; throttled: Record<string, number> }> {
    return (await (await fetch(`${sandbox.url}/sandbox/shopify/triggers`)).json()) as {
      triggers: StandInTrigger[];
      throttled: Record<string, number>;
    };
  }

  // Warm-up: every small shop once, a few hot events (connections, caches, JIT); not measured.
  await Promise.all(small.map((s, i) => send(s.ingest, creds.signing_secret, false, -1 - i)));
  for (let i = 0; i < 50; i++) await send(creds.ingest_url, creds.signing_secret, true, -1 - i);
  for (let i = 0; i < 100; i++) {
    if ((await record()).triggers.length >= acceptedAt.size) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const like = (await record()).triggers.at(-1);
  if (!like) throw new Error('no trigger reached the stand-in during the warm-up');
  const baselineHot = 'bench-baseline-hot.myshopify.com';
  await setStandInBucket(sandbox.url, baselineHot, { maximumAvailable: 1e9, restoreRate: 1e9 });
  const direct = standInBaseline(sandbox.url, like);

  const smallTotal = Math.round(SHOPS * SMALL_RATE * SECONDS);
  const hotTotal = Math.round(HOT_RATE * SECONDS);
  console.log(
    `${ROUNDS} rounds, alternating with the baseline: ${SHOPS} small shops × ${SMALL_RATE} events/s + 1 hot shop × ${HOT_RATE} events/s for ${SECONDS} s ` +
      `(${smallTotal} + ${hotTotal} events); hot shop's bucket ${HOT_BUCKET.maximumAvailable} points, ` +
      `restores ${HOT_BUCKET.restoreRate}/s; ${flowport.storeLabel}; ${WORKERS} worker process${WORKERS > 1 ? 'es' : ''}`,
  );
  // One open-loop schedule of both streams, in time order.
  const plan: { at: number; hot: boolean; i: number }[] = [];
  for (let i = 0; i < smallTotal; i++) plan.push({ at: (i * 1000) / (SHOPS * SMALL_RATE), hot: false, i });
  for (let i = 0; i < hotTotal; i++) plan.push({ at: (i * 1000) / HOT_RATE, hot: true, i });
  plan.sort((a, b) => a.at - b.at);
  /** Runs the schedule, calling `one` at each due time with the small shop (null: the hot one); returns seconds taken. */
  async function schedule(one: (target: (typeof small)[number] | null, i: number) => Promise<void>): Promise<number> {
    const order = small.map((_, i) => i).sort(() => Math.random() - 0.5);
    const start = now();
    const pending: Promise<void>[] = [];
    for (const s of plan) {
      const wait = start + s.at - now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      pending.push(one(s.hot ? null : (small[order[s.i % SHOPS] as number] ?? null), s.i));
    }
    await Promise.all(pending);
    return (now() - start) / 1000;
  }
  /** Waits until the stand-in has every id in `ids` (or 60 s). */
  async function arrived(ids: string[]) {
    let rec = await record();
    for (let i = 0; i < 600; i++) {
      const got = new Set(rec.triggers.map((t) => String(t.payload['Flowport event id'])));
      if (ids.every((id) => got.has(id))) break;
      await new Promise((r) => setTimeout(r, 100));
      rec = await record();
    }
    return rec;
  }
  const sorted = (a: number[]) => a.sort((x, y) => x - y);

  async function flowportRound(round: number) {
    acceptedAt.clear();
    refused = 0;
    await fetch(`${sandbox.url}/sandbox/shopify/triggers`, { method: 'DELETE' });
    const base = round * (smallTotal + hotTotal);
    const sentFor = await schedule((target, i) =>
      send(target ? target.ingest : creds.ingest_url, creds.signing_secret, target === null, base + i),
    );
    // Small shops' events all delivered (or 60 s), then the hot shop's backlog for what it shows.
    const rec = await arrived([...acceptedAt].filter(([, v]) => !v.hot).map(([id]) => id));
    const arrival = new Map(rec.triggers.map((t) => [String(t.payload['Flowport event id']), t]));
    const smallLat: number[] = [];
    const hotLat: number[] = [];
    let smallMissing = 0;
    for (const [id, v] of acceptedAt) {
      const t = arrival.get(id);
      if (!t) {
        if (!v.hot) smallMissing++;
        continue;
      }
      (v.hot ? hotLat : smallLat).push(Math.max(0, t.receivedAt - v.at));
    }
    // The hot shop's delivered rate: arrivals at the stand-in over the middle half of the time its
    // deliveries span (its backlog, when the load exceeds what is delivered, is steady there).
    const hotArrivals = sorted(rec.triggers.filter((t) => t.shop === creds.shop_domain).map((t) => t.receivedAt));
    const first = hotArrivals[0] ?? 0;
    const span = (hotArrivals.at(-1) ?? 0) - first;
    const from = first + span / 4;
    const to = first + (span * 3) / 4;
    const inWindow = hotArrivals.filter((t) => t >= from && t < to).length;
    const hotRate = to > from ? inWindow / ((to - from) / 1000) : Number.NaN;
    // What intake accepted for the hot shop per second while the sender sent (an upper bound of the above).
    const hotAccepted = [...acceptedAt.values()].filter((v) => v.hot).length / sentFor;
    const throttled = rec.throttled[creds.shop_domain] ?? 0;
    const smallThrottled = Object.entries(rec.throttled)
      .filter(([shop]) => shop !== creds.shop_domain)
      .reduce((n, [, c]) => n + c, 0);
    return {
      sentFor,
      refused,
      small: sorted(smallLat),
      hot: sorted(hotLat),
      smallMissing,
      hotRate,
      hotAccepted,
      throttled,
      smallThrottled,
    };
  }
  async function baselineRound(round: number) {
    await fetch(`${sandbox.url}/sandbox/shopify/triggers`, { method: 'DELETE' });
    const sent = new Map<string, { at: number; hot: boolean }>();
    let failedCalls = 0;
    await schedule(async (target, i) => {
      const id = `baseline_${round}_${target ? 's' : 'h'}_${i}`;
      const r = await direct(target ? target.domain : baselineHot, id);
      if (r.ok) sent.set(id, { at: r.sentAt, hot: target === null });
      else failedCalls++;
    });
    const rec = await arrived([...sent.keys()]);
    const arrival = new Map(rec.triggers.map((t) => [String(t.payload['Flowport event id']), t.receivedAt]));
    const smallLat: number[] = [];
    for (const [id, v] of sent) {
      const t = arrival.get(id);
      if (t !== undefined && !v.hot) smallLat.push(t - v.at);
    }
    return { small: sorted(smallLat), failedCalls };
  }

  const rounds: { p50: number; p99: number; hotShare: number; throttledAfterFirst: number; base99: number }[] = [];
  const cap = Math.min(HOT_RATE, HOT_BUCKET.restoreRate);
  await alternating(ROUNDS, baselineRound, flowportRound, (round, b, f) => {
    const r = {
      p50: pct(f.small, 50),
      p99: pct(f.small, 99),
      hotShare: f.hotRate / cap,
      throttledAfterFirst: Math.max(0, f.throttled - 1),
      base99: pct(b.small, 99),
    };
    rounds.push(r);
    if (f.smallMissing > 0) failed = true;
    console.log(
      `round ${round + 1}: sent for ${f.sentFor.toFixed(1)} s (intake refused or unanswered ${f.refused}); ` +
        `small shops ${f.small.length} delivered, ${f.smallMissing} not within 60 s, intake 202 → Flow p50 ${ms(r.p50)}, p99 ${ms(r.p99)}, max ${ms(f.small.at(-1) ?? Number.NaN)}; ` +
        `hot shop ${f.hot.length} of ${hotTotal} delivered by the end, ${f.hotRate.toFixed(0)}/s over the middle half of its deliveries ` +
        `(intake accepted ${f.hotAccepted.toFixed(0)}/s; at most ${cap}/s) = ${(r.hotShare * 100).toFixed(0)}%, p50 ${ms(pct(f.hot, 50))}; ` +
        `THROTTLED hot ${f.throttled} (${r.throttledAfterFirst} after the first), small ${f.smallThrottled}; ` +
        `baseline (straight to the stand-in) small p50 ${ms(pct(b.small, 50))}, p99 ${ms(r.base99)}${b.failedCalls ? `, ${b.failedCalls} calls failed` : ''}`,
    );
  });
  const med = (k: keyof (typeof rounds)[number]) => pct(sorted(rounds.map((r) => r[k])), 50);
  console.log(
    `medians of ${ROUNDS} rounds: small shops p50 ${ms(med('p50'))}, p99 ${ms(med('p99'))} (baseline p99 ${ms(med('base99'))}); ` +
      `hot shop ${(med('hotShare') * 100).toFixed(0)}% of ${cap}/s; THROTTLED after the first ${med('throttledAfterFirst')} ` +
      `(max ${Math.max(...rounds.map((r) => r.throttledAfterFirst))})`,
  );
  const p99 = med('p99');
  console.log(
    `goal small shops' p99 < 100 ms (median of the rounds' p99): ${p99 < 100 ? 'met' : 'NOT met'} (p99 ${ms(p99)})`,
  );
} finally {
  await Promise.all(
    others
      .filter((c) => c.exitCode === null)
      .map(
        (c) =>
          new Promise<void>((r) => {
            c.once('exit', () => r());
            c.kill('SIGTERM');
          }),
      ),
  );
  await flowport.stop();
  await sandbox.stop();
}
process.exit(failed ? 1 : 0);
