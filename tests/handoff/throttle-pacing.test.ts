// The worker paces a shop by Shopify's throttleStatus (ADR 0200, "Pacing"): after a THROTTLED
// answer it sends nothing more to that shop until the bucket the answer described holds a call's
// points again, and it keeps to the restore rate afterwards. The stand-in's own leaky bucket is the
// judge: a call that arrives before the bucket has a point is answered THROTTLED and counted, so
// the assertions are on the stand-in's counts, not on wall-clock durations.
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { setBucket } from '../../api/src/sandbox/app.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { attemptsOf, eventRow, insertEvent, makeShop, waitFor, workerSettings } from './helpers.ts';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    // Small retry delays, so the throttled event's retry is governed by the bucket, not the backoff.
    configure: workerSettings({ retryBaseMs: 10, retryCapMs: 50, maxAttempts: 20 }),
  });
});
afterAll(async () => {
  await server?.close();
});

const services = () => server.runtime.services;
const standIn = () => {
  const s = server.runtime.sandbox;
  if (!s) throw new Error('sandbox mode expected');
  return s;
};

it('after the first THROTTLED, no call reaches Shopify before the bucket it described has points again', async () => {
  const { shop, endpointId } = await makeShop(services());
  // An empty bucket that restores 2 points a second: the first call is THROTTLED and says so.
  setBucket(standIn(), shop.domain, { maximumAvailable: 4, restoreRate: 2, currentlyAvailable: 0 });
  const first = await insertEvent(services(), shop.id, endpointId);
  // The worker has read that answer once it recorded the attempt (it paces before it records).
  await waitFor(
    async () => (await attemptsOf(services(), first)).some((a) => a.outcome === 'throttled'),
    'the first THROTTLED answer, recorded',
  );
  // More events while the bucket is still empty: without pacing they would all be sent at once
  // when the shop's pause ended, and all but the bucket's few points would be THROTTLED.
  const ids = [first];
  for (let i = 0; i < 5; i++) ids.push(await insertEvent(services(), shop.id, endpointId));
  const rows = await waitFor(async () => {
    const r = await Promise.all(ids.map((id) => eventRow(services(), id)));
    return r.every((e) => e.state === 'delivered') ? r : null;
  }, 'every event delivered');
  expect(rows.map((r) => r.state)).toEqual(Array(6).fill('delivered'));
  // Exactly one THROTTLED answer (the first, which the worker could not foresee), and no call
  // beyond one per event plus that one.
  expect(standIn().throttled.get(shop.domain)).toBe(1);
  expect(standIn().calls.get(shop.domain)).toBe(7);
});

it('a success showing the bucket nearly empty slows the shop before it runs dry', async () => {
  const { shop, endpointId } = await makeShop(services());
  // Two points left, restoring 2 a second: the answers count them down to zero.
  setBucket(standIn(), shop.domain, { maximumAvailable: 10, restoreRate: 2, currentlyAvailable: 2 });
  // One event first, so the worker has an answer describing the bucket before the rest are due.
  const ids = [await insertEvent(services(), shop.id, endpointId)];
  await waitFor(async () => (await eventRow(services(), ids[0] as string)).state === 'delivered', 'the first event');
  for (let i = 0; i < 5; i++) ids.push(await insertEvent(services(), shop.id, endpointId));
  await waitFor(
    async () => (await Promise.all(ids.map((id) => eventRow(services(), id)))).every((e) => e.state === 'delivered'),
    'every event delivered',
  );
  // The answers said how many points were left, so no call was ever THROTTLED.
  expect(standIn().throttled.get(shop.domain) ?? 0).toBe(0);
  expect(standIn().calls.get(shop.domain)).toBe(6);
});
