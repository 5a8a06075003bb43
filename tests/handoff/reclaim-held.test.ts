// A worker dies mid-delivery and, before its lease runs out, the shop is
// disconnected (another delivery saw Shopify's 401). The re-claim holds the
// event; the dead worker's attempt must be closed as abandoned, not left
// "in progress" forever.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DeliveryWorker } from '../../api/src/handoff/worker.ts';
import type { Services } from '../../api/src/operations/types.ts';
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
