// One shop's backlog must not hold up every other shop: a shop at its delivery
// concurrency (its calls to Shopify hang) with hundreds of older due events, and
// another shop's new event is still delivered at once.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { loadConfig } from '../../api/src/config.ts';
import { DeliveryWorker } from '../../api/src/handoff/worker.ts';
import { SecretBox } from '../../api/src/lib/crypto.ts';
import type { Services } from '../../api/src/core/types.ts';
import { migrate } from '../../api/src/store/migrate.ts';
import { PostgresDb } from '../../api/src/store/postgres.ts';
import { startTestServer, tempDir, type TestServer } from '../helpers/runtime.ts';
import { createPgSchema } from '../helpers/store.ts';
import { eventRow, insertEvent, insertQueuedEvents, makeShop, waitFor, workerSettings } from './helpers.ts';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

/** A backlog far larger than any look reads: 5,000 queued events of one shop, due since `at`. */
const BACKLOG = 5_000;

/**
 * Rows and index entries of the events table read so far, by sequential scans and index scans
 * (PostgreSQL's cumulative statistics). The pool has one connection, so the flush forced first
 * is that backend's own.
 */
async function eventsTuplesRead(db: PostgresDb): Promise<number> {
  await db.get('SELECT pg_stat_force_next_flush()');
  const r = await db.get<{ n: string }>(
    `SELECT COALESCE(t.seq_tup_read, 0) + COALESCE((SELECT SUM(i.idx_tup_read) FROM pg_stat_user_indexes i
        WHERE i.relid = t.relid), 0) AS n
       FROM pg_stat_user_tables t WHERE t.schemaname = current_schema() AND t.relname = 'events'`,
  );
  return Number(r?.n);
}

const MAX_IN_FLIGHT = 8;
const hanging = new Set<ServerResponse>();
let stuckShopify: Server;
let stuckUrl = '';
let server: TestServer;

beforeAll(async () => {
  // A Shopify that takes the calls and never answers (the worker's timeout is long).
  stuckShopify = createServer((req, res) => {
    req.resume();
    hanging.add(res);
  });
  stuckShopify.listen(0, '127.0.0.1');
  await new Promise<void>((r) => stuckShopify.once('listening', () => r()));
  stuckUrl = `http://127.0.0.1:${(stuckShopify.address() as AddressInfo).port}/stuck`;
  server = await startTestServer({
    configure: workerSettings({
      concurrencyPerShop: 2,
      maxInFlight: MAX_IN_FLIGHT,
      requestTimeoutMs: 100_000,
      leaseMs: 200_000,
    }),
  });
});
afterAll(async () => {
  for (const res of hanging) res.destroy();
  await new Promise<void>((r) => stuckShopify.close(() => r()));
  await server?.close();
});

it("a shop at its concurrency with a long backlog does not hold up another shop's event", async () => {
  const services = server.runtime.services;
  const busy = await makeShop(services, { adminBaseUrl: stuckUrl });
  // More older due events than one claim looks at (4 × the worker's free slots).
  for (let i = 0; i < MAX_IN_FLIGHT * 4 + 10; i++) await insertEvent(services, busy.shop.id, busy.endpointId);
  await waitFor(() => hanging.size >= 2, 'the busy shop at its concurrency');
  const other = await makeShop(services);
  const id = await insertEvent(services, other.shop.id, other.endpointId);
  const row = await waitFor(
    async () => {
      const r = await eventRow(services, id);
      return r.state === 'delivered' ? r : null;
    },
    "the other shop's event delivered",
    20_000,
  );
  expect(row.state).toBe('delivered');
  expect(hanging.size).toBe(2);
});

it("Postgres, two workers: a shop at its concurrency with another worker's leases does not hold up this worker's claims", async () => {
  const schema = await createPgSchema('fair');
  const dbs: PostgresDb[] = [];
  try {
    const secrets = new SecretBox(Buffer.alloc(32, 7));
    // One connection each, so that each one's statistics can be flushed on demand (eventsTuplesRead).
    const servicesOn = async (): Promise<Services> => {
      const db = await PostgresDb.connect(schema.url, { poolSize: 1 });
      dbs.push(db);
      const config = loadConfig({
        FLOWPORT_DATA_DIR: tempDir(),
        FLOWPORT_LOG_LEVEL: 'silent',
        FLOWPORT_WORKER_CONCURRENCY_PER_SHOP: '2',
      });
      return { config, db, secrets, now: Date.now, registry: () => [], hooks: {} };
    };
    const setup = await servicesOn();
    await migrate(setup.db);
    const busy = await makeShop(setup);
    await insertQueuedEvents(setup.db, busy.shop.id, busy.endpointId, BACKLOG, setup.now() - 60_000, 'backlog');
    // As autovacuum would soon after such a burst: a table never analyzed looks empty to the planner.
    await setup.db.run('ANALYZE events');
    const other = await makeShop(setup);
    const id = await insertEvent(setup, other.shop.id, other.endpointId);
    const a = new DeliveryWorker(await servicesOn(), { adminBaseUrl: () => 'http://127.0.0.1:9' });
    const bServices = await servicesOn();
    const b = new DeliveryWorker(bServices, { adminBaseUrl: () => 'http://127.0.0.1:9' });
    // Worker A holds the busy shop's two slots (its calls are in flight).
    expect((await a.claim(2)).map((e) => e.shop_id)).toEqual([busy.shop.id, busy.shop.id]);
    // Worker B looks at 4 × 4 rows at most; all the oldest belong to the busy shop. What the
    // other connections read so far is flushed first, so the count below is B's alone.
    for (const d of dbs) await d.get('SELECT pg_stat_force_next_flush()');
    const before = await eventsTuplesRead(bServices.db as PostgresDb);
    expect((await b.claim(4)).map((e) => e.id)).toEqual([id]);
    // And it did not walk the busy shop's backlog to find it (ADR 0203): the rows and index
    // entries its look and claim read stay far below the backlog (the look before it read all of them).
    const read = (await eventsTuplesRead(bServices.db as PostgresDb)) - before;
    expect(read).toBeLessThan(100);
  } finally {
    for (const d of dbs) await d.close();
    await schema.drop();
  }
});
