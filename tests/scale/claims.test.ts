// Lease claims under real concurrency on PostgreSQL: several delivery workers, each
// with its own connection pool (as separate processes would have), claim from one
// queue at the same moment. No event is ever claimed by two of them, the per-shop
// concurrency holds across all of them, and an expired lease is re-claimed (counted).
import { expect, it } from 'vitest';
import type { DeliveryWorker } from '../../api/src/handoff/worker.ts';
import { insertEvent, makeShop } from '../handoff/helpers.ts';
import { pgWorkers } from '../helpers/pg-workers.ts';

const WORKERS = 6;
const pg = pgWorkers('claims');

/** N workers, each on its own pool of connections. */
async function workers(env: Record<string, string>): Promise<DeliveryWorker[]> {
  const out: DeliveryWorker[] = [];
  for (let i = 0; i < WORKERS; i++) out.push(await pg.worker(env, { poolSize: 3 }));
  return out;
}

const setup = () => pg.services(pg.db);

it('six workers claiming at once: every event is claimed exactly once', async () => {
  const shops = await Promise.all([makeShop(setup()), makeShop(setup()), makeShop(setup())]);
  const ids: string[] = [];
  for (let i = 0; i < 600; i++) {
    const s = shops[i % shops.length] as (typeof shops)[number];
    ids.push(await insertEvent(setup(), s.shop.id, s.endpointId));
  }
  const ws = await workers({ FLOWPORT_WORKER_CONCURRENCY_PER_SHOP: '100000', FLOWPORT_WORKER_LEASE_MS: '600000' });
  const claimed = ws.map(() => [] as string[]);
  let rounds = 0;
  // Every worker claims again and again, all at the same time, until nothing is left.
  for (;;) {
    rounds++;
    const batches = await Promise.all(ws.map((w) => w.claim(16)));
    batches.forEach((b, i) => {
      claimed[i]?.push(...b.map((e) => e.id));
    });
    if (batches.every((b) => b.length === 0)) break;
  }
  const all = claimed.flat();
  console.log(
    `[claims] ${all.length} claims by ${WORKERS} workers in ${rounds} rounds: ${claimed.map((c) => c.length).join(', ')}`,
  );
  expect(all.length).toBe(ids.length);
  expect(new Set(all)).toEqual(new Set(ids));
  expect(claimed.filter((c) => c.length > 0).length).toBeGreaterThan(1);
  const rows = await pg.db.all<{ attempt_count: number; n: number }>(
    `SELECT attempt_count, COUNT(*) AS n FROM events WHERE id IN (${ids.map(() => '?').join(', ')}) GROUP BY attempt_count`,
    ids,
  );
  expect(rows.map((r) => [Number(r.attempt_count), Number(r.n)])).toEqual([[1, ids.length]]);
  const attempts = await pg.db.get<{ n: number }>(
    `SELECT COUNT(*) AS n FROM attempts WHERE event_id IN (${ids.map(() => '?').join(', ')})`,
    ids,
  );
  expect(Number(attempts?.n)).toBe(ids.length);
});

it('per-shop concurrency holds across workers claiming at the same moment', async () => {
  const { shop, endpointId } = await makeShop(setup());
  for (let i = 0; i < 120; i++) await insertEvent(setup(), shop.id, endpointId);
  const ws = await workers({ FLOWPORT_WORKER_CONCURRENCY_PER_SHOP: '5', FLOWPORT_WORKER_LEASE_MS: '600000' });
  let total = 0;
  for (let round = 0; round < 5; round++) {
    const batches = await Promise.all(ws.map((w) => w.claim(50)));
    total += batches.reduce((a, b) => a + b.length, 0);
  }
  const live = await pg.db.get<{ n: number }>(
    "SELECT COUNT(*) AS n FROM events WHERE shop_id = ? AND state = 'delivering'",
    [shop.id],
  );
  expect(total).toBe(5);
  expect(Number(live?.n)).toBe(5);
});

it('an expired lease is re-claimed by another worker, once, and counted as a possible duplicate', async () => {
  const { shop, endpointId } = await makeShop(setup());
  const ids: string[] = [];
  for (let i = 0; i < 10; i++) ids.push(await insertEvent(setup(), shop.id, endpointId));
  const [a, ...others] = await workers({
    FLOWPORT_WORKER_CONCURRENCY_PER_SHOP: '100',
    FLOWPORT_WORKER_LEASE_MS: '300',
    FLOWPORT_WORKER_REQUEST_TIMEOUT_MS: '200',
  });
  const first = await (a as DeliveryWorker).claim(10);
  expect(first.map((e) => e.id).sort()).toEqual([...ids].sort());
  // The "crashed" worker never records an outcome: once its 300 ms lease lapses, the others
  // claim the events again (awaited, not slept for).
  const again: { id: string }[] = [];
  for (const until = Date.now() + 15_000; again.length < ids.length && Date.now() < until; ) {
    again.push(...(await Promise.all(others.map((w) => w.claim(10)))).flat());
    if (again.length < ids.length) await new Promise((r) => setTimeout(r, 50));
  }
  expect(again.map((e) => e.id).sort()).toEqual([...ids].sort());
  const in_ = ids.map(() => '?').join(', ');
  const dup = await pg.db.get<{ n: number }>(
    `SELECT SUM(possible_duplicate_deliveries) AS n FROM events WHERE id IN (${in_})`,
    ids,
  );
  expect(Number(dup?.n)).toBe(10);
  const abandoned = await pg.db.get<{ n: number }>(
    `SELECT COUNT(*) AS n FROM attempts WHERE outcome = 'abandoned' AND event_id IN (${in_})`,
    ids,
  );
  expect(Number(abandoned?.n)).toBe(10);
});
