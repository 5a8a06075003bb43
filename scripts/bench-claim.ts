// npm run bench:claim [-- --store sqlite|postgres|both --backlog 130000 --shops 10000 --looks 200]
// The claim's look for due events (ADR 0203, issue 31 goal 6): what one look costs when one shop
// the worker leaves out (paced, or at its concurrency) has a long backlog, and when many shops
// have events queued for a later retry. Each case has its own store beside a baseline store that
// holds only 20 small shops with one due event each. The rounds alternate between the baseline
// and the case, and the script prints the medians of the rounds' p50 and p99 and their ratio to the
// baseline. It times the look as the worker runs it (api/src/handoff/due-look.ts: the shops with due
// events, then their rows), not the claim's transaction after it, which the look's rows bound.
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig } from '../api/src/config.ts';
import type { Services } from '../api/src/core/types.ts';
import { lookForDue } from '../api/src/handoff/due-look.ts';
import { SecretBox } from '../api/src/lib/crypto.ts';
import type { Db } from '../api/src/store/db.ts';
import { migrate } from '../api/src/store/migrate.ts';
import { PostgresDb } from '../api/src/store/postgres.ts';
import { SqliteDb } from '../api/src/store/sqlite.ts';
import { insertQueuedEvents, makeShop } from '../tests/handoff/helpers.ts';
import { createPgSchema } from '../tests/helpers/store.ts';

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'both' },
    backlog: { type: 'string', default: '130000' },
    shops: { type: 'string', default: '10000' },
    looks: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '5' },
  },
});
const STORES = values.store === 'both' ? (['sqlite', 'postgres'] as const) : ([values.store] as const);
const BACKLOG = Number(values.backlog);
const SHOPS = Number(values.shops);
const LOOKS = Number(values.looks);
const ROUNDS = Math.max(5, Number(values.rounds));
const SMALL_SHOPS = 20;
/** What the worker's look asks for with all 256 slots free: `min(limit × 4, limit + 64)`. */
const LOOK = 320;
const ROOM = 64;

console.log(
  `bench:claim — load average ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')} (machine shared with other work; read ratios, not absolute figures)`,
);

interface Store {
  services: Services;
  close(): Promise<void>;
}

async function openStore(kind: string): Promise<Store> {
  const dataDir = mkdtempSync(join(tmpdir(), 'flowport-bench-claim-'));
  const config = loadConfig({ FLOWPORT_DATA_DIR: dataDir, FLOWPORT_LOG_LEVEL: 'silent' });
  let db: Db;
  let drop = async () => {};
  if (kind === 'postgres') {
    const schema = await createPgSchema('bench_claim');
    db = await PostgresDb.connect(schema.url, { poolSize: 1 });
    drop = () => schema.drop();
  } else db = new SqliteDb(join(dataDir, 'flowport.db'));
  await migrate(db);
  const services: Services = {
    config,
    db,
    secrets: new SecretBox(Buffer.alloc(32, 7)),
    now: Date.now,
    registry: () => [],
    hooks: {},
  };
  return {
    services,
    async close() {
      await db.close();
      await drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The 20 small shops every store has, one due event each (what the look must find). */
async function smallShops(services: Services): Promise<void> {
  const now = Date.now();
  for (let i = 0; i < SMALL_SHOPS; i++) {
    const { shop, endpointId } = await makeShop(services);
    await insertQueuedEvents(services.db, shop.id, endpointId, 1, now - 1_000 + i, `small${i}`);
  }
}

async function analyze(db: Db): Promise<void> {
  // VACUUM too on PostgreSQL: autovacuum would otherwise work through the fill during the rounds.
  await db.run(db.dialect === 'postgres' ? 'VACUUM ANALYZE events' : 'ANALYZE');
}

/** One look as the worker runs it (every shop has room for 64), leaving out `skip`; the rows it found. */
async function look(db: Db, skip: Set<string>): Promise<number> {
  const now = Date.now();
  return (await lookForDue(db, { now, leaseNow: now }, { look: LOOK, concurrency: ROOM, skip, room: () => ROOM }))
    .length;
}

async function timeLooks(db: Db, skip: Set<string>): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < LOOKS; i++) {
    const t = performance.now();
    const found = await look(db, skip);
    ms.push(performance.now() - t);
    if (found !== SMALL_SHOPS)
      throw new Error(`a look found ${found} rows, not the ${SMALL_SHOPS} small shops' events`);
  }
  return ms.sort((a, b) => a - b);
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** A shop the worker leaves out (paced, or at its concurrency) with `BACKLOG` due events, older than the small shops'. */
async function pacedBacklog(services: Services): Promise<string> {
  const paced = await makeShop(services);
  await insertQueuedEvents(services.db, paced.shop.id, paced.endpointId, BACKLOG, Date.now() - 3_600_000, 'paced');
  return paced.shop.id;
}

/** `SHOPS` shops with one event each queued for a retry due in an hour. */
async function waitingShops(services: Services): Promise<void> {
  const one = await makeShop(services);
  await services.db.run(
    `WITH RECURSIVE g (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?)
     INSERT INTO shops (id, domain, created_at, updated_at)
     SELECT 'shop_many_' || CAST(n AS TEXT), 'many-' || CAST(n AS TEXT) || '.myshopify.com', 1, 1 FROM g`,
    [SHOPS],
  );
  const now = Date.now();
  await services.db.run(
    `WITH RECURSIVE g (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?)
     INSERT INTO events (id, shop_id, endpoint_id, receipt_id, state, event_type, sender, body, body_size, body_sha256,
       config_version, received_at, updated_at, next_attempt_at, attempt_count)
     SELECT 'evt_many_' || CAST(n AS TEXT), 'shop_many_' || CAST(n AS TEXT), ?, 'rcp_many_' || CAST(n AS TEXT), 'queued',
       'bench.event', 'bench', '{}', 2, 'x', 1, CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT) + 3600000, 1 FROM g`,
    [SHOPS, one.endpointId, now, now, now],
  );
}

for (const kind of STORES) {
  const baseline = await openStore(kind);
  const stores: Store[] = [baseline];
  try {
    await smallShops(baseline.services);
    await analyze(baseline.services.db);
    const cases: [string, Store, Set<string>][] = [];
    const t0 = performance.now();
    {
      const store = await openStore(kind);
      stores.push(store);
      await smallShops(store.services);
      const paced = await pacedBacklog(store.services);
      await analyze(store.services.db);
      cases.push([`one left-out shop with ${BACKLOG.toLocaleString('en')} due`, store, new Set([paced])]);
    }
    {
      const store = await openStore(kind);
      stores.push(store);
      await smallShops(store.services);
      await waitingShops(store.services);
      await analyze(store.services.db);
      cases.push([`${SHOPS.toLocaleString('en')} shops waiting for a retry`, store, new Set()]);
    }
    {
      const store = await openStore(kind);
      stores.push(store);
      await smallShops(store.services);
      const paced = await pacedBacklog(store.services);
      await waitingShops(store.services);
      await analyze(store.services.db);
      cases.push(['both', store, new Set([paced])]);
    }
    console.log(`\n${kind}: stores filled in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    for (const [name, store, skip] of cases) {
      const base = { p50: [] as number[], p99: [] as number[] };
      const fp = { p50: [] as number[], p99: [] as number[] };
      // Warm both (caches, prepared statements) before the rounds.
      await timeLooks(baseline.services.db, new Set());
      await timeLooks(store.services.db, skip);
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 ? ['case', 'base'] : ['base', 'case'];
        for (const which of order) {
          const ms =
            which === 'base'
              ? await timeLooks(baseline.services.db, new Set())
              : await timeLooks(store.services.db, skip);
          const into = which === 'base' ? base : fp;
          into.p50.push(pct(ms, 50));
          into.p99.push(pct(ms, 99));
        }
      }
      const b50 = median(base.p50);
      const b99 = median(base.p99);
      const c50 = median(fp.p50);
      const c99 = median(fp.p99);
      console.log(
        `${kind.padEnd(8)} ${name.padEnd(42)} look p50 ${c50.toFixed(3)} ms (baseline ${b50.toFixed(3)}, ${(c50 / b50).toFixed(2)}×)` +
          `  p99 ${c99.toFixed(3)} ms (baseline ${b99.toFixed(3)}, ${(c99 / b99).toFixed(2)}×)  [${ROUNDS} rounds × ${LOOKS} looks]`,
      );
    }
  } finally {
    for (const store of stores) await store.close();
  }
}
