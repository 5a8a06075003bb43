// The shop's shared bucket account on PostgreSQL (ADR 0200 "Pacing", ADR 0202; issue 45 item 4),
// at the store: the row is the one account every worker process spends from, so the store itself
// must refuse a spend the account cannot cover (two claims cannot both spend the last points),
// and an answer's correction must count the calls a claim in progress is leasing (it waits for
// the shop's claim lock), or it would hand those points out again. PostgreSQL only: on SQLite the
// account is the one process's memory and this table stays empty.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../api/src/ids.ts';
import type { Db } from '../../api/src/store/db.ts';
import { storeClockMs } from '../../api/src/store/clock.ts';
import {
  claimShopKey,
  lowerSharedBucket,
  type SharedBucket,
  spendSharedBuckets,
} from '../../api/src/store/tables/shops.ts';
import { tryLockKeys } from '../../api/src/store/db.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { testStore } from '../helpers/store.ts';
import { insertEvent, makeShop, waitFor } from './helpers.ts';

/** A restore rate so slow that the account does not refill during the test (points per second). */
const STILL = 1e-9;

describe.runIf(testStore() === 'postgres')('the shared bucket account in the store (PostgreSQL)', () => {
  let server: TestServer;
  let db: Db;
  beforeAll(async () => {
    server = await startTestServer({ worker: false });
    db = server.runtime.services.db;
  });
  afterAll(async () => {
    await server?.close();
  });

  const dbNow = async () => Number(await storeClockMs(db));
  const account = (shopId: string) =>
    db.get<SharedBucket>('SELECT * FROM shop_buckets WHERE shop_id = ?', [shopId]) as Promise<SharedBucket>;
  /** Resolves once some transaction waits for a lock (the second writer is blocked), or `settled` does. */
  const blockedOr = (settled: Promise<unknown>) =>
    Promise.race([
      settled,
      waitFor(
        async () => (await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM pg_locks WHERE NOT granted'))?.n,
        'a writer waiting for a lock',
        20_000,
        5,
      ),
    ]);

  it('two claims cannot both spend the last points: the second spend, once the first commits, is refused', async () => {
    const services = server.runtime.services;
    const { shop } = await makeShop(services);
    const at = await dbNow();
    await lowerSharedBucket(db, {
      shopId: shop.id,
      eventId: 'none',
      available: 3,
      restoreRate: STILL,
      maximumAvailable: 10,
      dbNow: at,
      cost: 1,
    });
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let firstSpent: SharedBucket[] = [];
    const first = db.tx(async (tx) => {
      firstSpent = await spendSharedBuckets(tx, new Map([[shop.id, { calls: 2, inFlight: 0 }]]), at, 1);
      await held;
    });
    await waitFor(() => firstSpent.length > 0, 'the first spend');
    // The second claim's spend runs while the first still holds its row, as a claim in another
    // process would if its shop lock were not there.
    const second = db.tx((tx) => spendSharedBuckets(tx, new Map([[shop.id, { calls: 2, inFlight: 0 }]]), at, 1));
    await blockedOr(second);
    release();
    await first;
    expect(firstSpent.map((r) => Number(r.available))).toEqual([1]);
    expect(await second).toEqual([]);
    expect(Number((await account(shop.id)).available)).toBe(1);
    // What the account covers is still spent.
    expect(
      (await spendSharedBuckets(db, new Map([[shop.id, { calls: 1, inFlight: 0 }]]), at, 1)).map((r) =>
        Number(r.available),
      ),
    ).toEqual([0]);
  });

  it("an answer's correction waits for a claim in progress and counts the calls it leases", async () => {
    const services = server.runtime.services;
    const { shop, endpointId } = await makeShop(services);
    const at = await dbNow();
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let leased = false;
    // A claim for the shop in another worker: it holds the shop's claim lock and leases one call,
    // not yet committed.
    const claim = db.tx(async (tx) => {
      expect((await tryLockKeys(tx, [claimShopKey(shop.id)])).size).toBe(1);
      const id = await insertEvent({ ...services, db: tx }, shop.id, endpointId);
      await tx.run(
        "UPDATE events SET state = 'delivering', lease_owner = 'other/claim', lease_expires_at = ? WHERE id = ?",
        [at + 60_000, id],
      );
      leased = true;
      await held;
    });
    await waitFor(() => leased, 'the claim in progress');
    // Shopify's answer to another call says 10 points; the claim's call is not counted in it yet.
    const correction = db.tx((tx) =>
      lowerSharedBucket(tx, {
        shopId: shop.id,
        eventId: newId('event'),
        available: 10,
        restoreRate: STILL,
        maximumAvailable: 40,
        dbNow: at,
        cost: 1,
      }),
    );
    await blockedOr(correction);
    release();
    await claim;
    const row = await correction;
    expect(Number(row?.available)).toBe(9);
    expect(Number((await account(shop.id)).available)).toBe(9);
  });
  it("an answer's correction also counts the calls that were in flight when it began to wait and were recorded meanwhile", async () => {
    const services = server.runtime.services;
    const { shop, endpointId } = await makeShop(services);
    const at = await dbNow();
    // A call in flight (committed lease) when Shopify's answer to another call arrives.
    const inFlight = await insertEvent(services, shop.id, endpointId);
    await db.run("UPDATE events SET state = 'delivering', lease_owner = 'w/claim', lease_expires_at = ? WHERE id = ?", [
      at + 60_000,
      inFlight,
    ]);
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let locked = false;
    // A claim for the shop in progress: the correction waits for it.
    const claim = db.tx(async (tx) => {
      expect((await tryLockKeys(tx, [claimShopKey(shop.id)])).size).toBe(1);
      locked = true;
      await held;
    });
    await waitFor(() => locked, 'the claim in progress');
    // Shopify said 10 before the call in flight reached it.
    const correction = db.tx((tx) =>
      lowerSharedBucket(tx, {
        shopId: shop.id,
        eventId: newId('event'),
        available: 10,
        restoreRate: STILL,
        maximumAvailable: 40,
        dbNow: at,
        cost: 1,
      }),
    );
    await blockedOr(correction);
    // While the correction waits, the call in flight is answered and recorded: no longer a lease.
    await db.run("UPDATE events SET state = 'delivered', lease_owner = NULL, lease_expires_at = NULL WHERE id = ?", [
      inFlight,
    ]);
    release();
    await claim;
    expect(Number((await correction)?.available)).toBe(9);
  });

  it('the account holds no more than the bucket beside the calls in flight: a full bucket with 6 of 10 points on their way pays for 4 calls', async () => {
    const services = server.runtime.services;
    const { shop } = await makeShop(services);
    const at = await dbNow();
    await lowerSharedBucket(db, {
      shopId: shop.id,
      eventId: 'none',
      available: 10,
      restoreRate: STILL,
      maximumAvailable: 10,
      dbNow: at,
      cost: 1,
    });
    // 6 calls in flight have not reached Shopify: its bucket, full, will take their 6 points.
    expect(await spendSharedBuckets(db, new Map([[shop.id, { calls: 5, inFlight: 6 }]]), at, 1)).toEqual([]);
    const [row] = await spendSharedBuckets(db, new Map([[shop.id, { calls: 4, inFlight: 6 }]]), at, 1);
    expect(Number(row?.available)).toBe(0);
  });
});
