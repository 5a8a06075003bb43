// A worker dies mid-delivery and, before its lease runs out, the shop is
// disconnected (another delivery saw Shopify's 401). The re-claim holds the
// event; the dead worker's attempt must be closed as abandoned, not left
// "in progress" forever. Also: a re-claimed probe of a shop Shopify refuses (frozen,
// locked, access denied, not found) is not failed for attempts Shopify refused for the
// store (ADR 0201).
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest';
import { DeliveryWorker } from '../../api/src/handoff/worker.ts';
import type { Services } from '../../api/src/core/types.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { attemptsOf, eventRow, insertEvent, makeShop, waitFor } from './helpers.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ worker: false });
});
afterAll(async () => {
  await server?.close();
});

it('a re-claimed lease of a shop disconnected meanwhile: the event is held and the orphan attempt abandoned', async () => {
  const base = server.runtime.services;
  const services: Services = {
    ...base,
    config: { ...base.config, worker: { ...base.config.worker, leaseMs: 300, requestTimeoutMs: 200 } },
  };
  const { shop, endpointId } = await makeShop(services);
  const id = await insertEvent(services, shop.id, endpointId);
  const crashed = new DeliveryWorker(services, { adminBaseUrl: () => 'http://127.0.0.1:9' });
  const other = new DeliveryWorker(services, { adminBaseUrl: () => 'http://127.0.0.1:9' });
  expect((await crashed.claim(1)).map((e) => e.id)).toEqual([id]);
  // The crashed worker never records an outcome; meanwhile the shop's token is refused elsewhere.
  await services.db.run(`UPDATE shops SET connection_status = 'disconnected' WHERE id = ?`, [shop.id]);
  await waitFor(async () => {
    await other.claim(1);
    return (await eventRow(services, id)).state === 'held';
  }, 'held by the re-claim');
  const row = await eventRow(services, id);
  expect(row).toMatchObject({ state: 'held', support_code: 'FP-H-HELD', possible_duplicate_deliveries: 1 });
  const attempts = await attemptsOf(services, id);
  expect(attempts).toHaveLength(1);
  expect(attempts[0]?.outcome).toBe('abandoned');
  expect(attempts[0]?.finished_at).not.toBeNull();
});

// Written out rather than read from UNAVAILABLE_SHOP, so a wrong outcome there fails here.
for (const [status, outcome, httpStatus] of [
  ['frozen', 'shop_frozen', 402],
  ['locked', 'shop_locked', 423],
  ['access_denied', 'shop_access_denied', 403],
  ['not_found', 'shop_not_found', 404],
] as const) {
  it(`a re-claimed probe of a shop ${status} whose ${httpStatus}s exceed the retry budget is claimed again, not failed as exhausted`, async () => {
    // A store of its own: a claim takes the oldest due event of any shop, and an earlier case's
    // abandoned probe would be due again here.
    const own = await startTestServer({ worker: false });
    onTestFinished(() => own.close());
    const base = own.runtime.services;
    const services: Services = {
      ...base,
      config: {
        ...base.config,
        worker: { ...base.config.worker, leaseMs: 300, requestTimeoutMs: 200, maxAttempts: 3 },
      },
    };
    const { shop, endpointId } = await makeShop(services);
    const id = await insertEvent(services, shop.id, endpointId);
    // This event is the shop's probe; Shopify already refused it 5 times (over the budget of 3).
    await services.db.run(
      `UPDATE shops SET connection_status = ?, next_probe_at = ?, probe_event_id = ? WHERE id = ?`,
      [status, Date.now() + 3_600_000, id, shop.id],
    );
    for (let i = 0; i < 5; i++) {
      await services.db.run(
        `INSERT INTO attempts (id, event_id, shop_id, trigger, started_at, finished_at, outcome, http_status)
         VALUES (?, ?, ?, 'automatic', ?, ?, ?, ?)`,
        [`att_refused${i}${id.slice(4, 20)}`, id, shop.id, Date.now(), Date.now(), outcome, httpStatus],
      );
    }
    await services.db.run('UPDATE events SET attempt_count = 5 WHERE id = ?', [id]);
    const crashed = new DeliveryWorker(services, { adminBaseUrl: () => 'http://127.0.0.1:9' });
    const other = new DeliveryWorker(services, { adminBaseUrl: () => 'http://127.0.0.1:9' });
    expect((await crashed.claim(1)).map((e) => e.id)).toEqual([id]);
    // The crashed worker never records an outcome; the lease runs out and another worker re-claims the probe.
    let reclaimed: string[] = [];
    await waitFor(async () => {
      reclaimed = (await other.claim(1)).map((e) => e.id);
      return reclaimed.length > 0 || (await eventRow(services, id)).state === 'failed';
    }, 're-claimed');
    expect(reclaimed).toEqual([id]);
    expect(await eventRow(services, id)).toMatchObject({ state: 'delivering', attempt_count: 7 });
  });
}
