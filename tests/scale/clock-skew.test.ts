// Worker processes on different machines do not share a clock. A lease is a
// promise between workers, so it is judged by one clock they all share (the
// database's): a worker whose clock runs a minute ahead must not take over
// deliveries another worker is still making (Flow would run them twice), and one
// whose clock runs behind must not wait a minute longer to recover a crashed
// worker's events.
import { expect, it } from 'vitest';
import { insertEvent, makeShop, waitFor } from '../handoff/helpers.ts';
import { pgWorkers } from '../helpers/pg-workers.ts';

const SKEW_MS = 60_000;
const pg = pgWorkers('skew');

/** A worker "on another machine": its own pool and its own clock. */
const worker = (skewMs: number, env: Record<string, string> = {}) => pg.worker(env, { skewMs });

it('a worker whose clock runs ahead does not take over deliveries still in flight', async () => {
  const setup = pg.services(pg.db);
  const { shop, endpointId } = await makeShop(setup);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push(await insertEvent(setup, shop.id, endpointId));
  const a = await worker(0, { FLOWPORT_WORKER_CONCURRENCY_PER_SHOP: '100' });
  const ahead = await worker(SKEW_MS, { FLOWPORT_WORKER_CONCURRENCY_PER_SHOP: '100' });
  const first = await a.claim(10);
  expect(first).toHaveLength(5);
  // A is calling Shopify now (30 s lease). The worker a minute ahead must leave its events alone.
  expect(await ahead.claim(10)).toEqual([]);
  const dup = await pg.db.get<{ n: number }>('SELECT SUM(possible_duplicate_deliveries) AS n FROM events');
  expect(Number(dup?.n)).toBe(0);
});

it('a worker whose clock runs behind recovers an expired lease without waiting out its skew', async () => {
  const setup = pg.services(pg.db);
  const { shop, endpointId } = await makeShop(setup);
  const id = await insertEvent(setup, shop.id, endpointId);
  const lease = { FLOWPORT_WORKER_LEASE_MS: '300', FLOWPORT_WORKER_REQUEST_TIMEOUT_MS: '200' };
  const crashed = await worker(0, lease);
  const behind = await worker(-SKEW_MS, lease);
  expect((await crashed.claim(1)).map((e) => e.id)).toEqual([id]);
  // The crashed worker never records an outcome; once its lease ends the other worker takes over.
  const again = await waitFor(
    async () => {
      const got = await behind.claim(1);
      return got.length ? got : null;
    },
    're-claim by the worker whose clock is behind',
    20_000,
  );
  expect(again.map((e) => e.id)).toEqual([id]);
});
