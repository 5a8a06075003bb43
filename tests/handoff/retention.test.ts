// Retention: with a short configured retention, the sweep purges bodies of
// settled events, keeps their metadata, and replay availability then says
// `retention_expired`. Events still being delivered keep their body.
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { bodyExpiresAt, replayAvailability, sweepRetention } from '../../api/src/handoff/lifecycle.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { attemptsOf, eventRow, insertEvent, makeShop, postSigned, waitFor } from './helpers.ts';
import { getShopReceipt, receiptIdForEvent } from '../../api/src/reads/receipts.ts';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    env: { FLOWPORT_BODY_RETENTION_OVERRIDE_MS: '1500', FLOWPORT_RETENTION_SWEEP_INTERVAL_MS: '100' },
  });
});
afterAll(async () => {
  await server?.close();
});

it('bodies are purged after the retention, metadata stays, replay says retention_expired', async () => {
  const services = server.runtime.services;
  const creds = server.sandbox!;
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await postSigned(
      creds.ingest_url,
      creds.signing_secret,
      JSON.stringify({ type: 'order.paid', id: `r${i}` }),
    );
    expect(res.status).toBe(202);
    ids.push(((await res.json()) as { event_id: string }).event_id);
  }
  // Intake records the configured retention (1.5 s here), not the plan's days, so reads show the real expiry.
  for (const id of ids) {
    const r = await services.db.get<{ received_at: number; body_expires_at: number }>(
      'SELECT received_at, body_expires_at FROM events WHERE id = ?',
      [id],
    );
    expect(Number(r?.body_expires_at) - Number(r?.received_at)).toBe(1500);
  }
  // A queued event of a held-up shop must keep its body however old it is.
  const { shop, endpointId } = await makeShop(services);
  await services.db.run(`UPDATE shops SET connection_status = 'disconnected' WHERE id = ?`, [shop.id]);
  const pending = await insertEvent(services, shop.id, endpointId, { receivedAt: services.now() - 3_600_000 });

  for (const id of ids) {
    const before = await waitFor(async () => {
      const r = await eventRow(services, id);
      return r.state === 'delivered' ? r : null;
    }, 'delivered');
    expect(before.body).not.toBeNull();
  }
  const rows = await Promise.all(
    ids.map((id) =>
      waitFor(async () => {
        const r = await eventRow(services, id);
        return r.retention_state === 'expired' ? r : null;
      }, 'body purged by the sweep'),
    ),
  );
  for (const r of rows) {
    expect(r.body).toBeNull();
    expect(r).toMatchObject({ state: 'delivered', support_code: 'FP-H-OK', retention_state: 'expired' });
    expect(r.body_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(r.body_size).toBeGreaterThan(0);
    expect(await attemptsOf(services, r.id)).toHaveLength(1);
    const ep = { status: 'active', deleted_at: null };
    expect(replayAvailability(r, ep, { connection_status: 'connected' })).toMatchObject({
      available: false,
      reason: 'retention_expired',
    });
  }
  // The receipts stay readable after the bodies are purged.
  for (const id of ids) {
    const receipt = await getShopReceipt(services.db, creds.shop_id, receiptIdForEvent(id));
    expect(receipt).toMatchObject({ event_id: id, http_status: 202, auth_result: 'verified' });
  }
  await sweepRetention(services);
  const kept = await eventRow(services, pending);
  expect(kept.state).toBe('held');
  expect(kept.body).not.toBeNull();
  expect(kept.retention_state).toBe('retained');
  expect(bodyExpiresAt(services.config, { received_at: 1_000 }, { plan: 'free' })).toBe(2_500);
});

it('replay availability reasons, in order of precedence', () => {
  const ok = { state: 'delivered', retention_state: 'retained', body: '{}' };
  const ep = { status: 'active', deleted_at: null };
  const connected = { connection_status: 'connected' };
  expect(replayAvailability(ok, ep, connected)).toEqual({ available: true });
  expect(replayAvailability({ ...ok, state: 'rejected', body: null }, ep, connected).reason).toBe('rejected_event');
  expect(replayAvailability({ ...ok, state: 'duplicate_suppressed' }, ep, connected).reason).toBe('duplicate_event');
  expect(replayAvailability(ok, { status: 'archived', deleted_at: null }, connected).reason).toBe('endpoint_archived');
  expect(replayAvailability(ok, { status: 'archived', deleted_at: 5 }, connected).reason).toBe('endpoint_deleted');
  expect(replayAvailability({ ...ok, state: 'queued' }, ep, connected).reason).toBe('delivery_in_progress');
  expect(replayAvailability(ok, ep, { connection_status: 'disconnected' }).reason).toBe('shop_disconnected');
  expect(replayAvailability({ ...ok, state: 'failed' }, ep, connected).available).toBe(true);
});
