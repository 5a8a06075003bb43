// Issue 42 item 10: a store frozen on Shopify's side with held events. What is wrong right now is
// an incident whether or not anyone subscribed to alerts (subscriptions only decide who is told);
// a held event says why it is held, when the next probe goes out (the same time setup shows) and
// by when it must be released before its body expires; its replay block gives a held reason, not
// "still being delivered"; and a held event whose body expires is kept as a record (failed,
// FP-H-HEXP), never silently dropped. Real HTTP, the worker and the alert monitor, both stores.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createGrant } from '../../api/src/auth/grants.ts';
import { sweepRetention } from '../../api/src/handoff/lifecycle.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api, sendSigned } from '../intents/helpers.ts';
import { waitFor } from './helpers.ts';

vi.setConfig({ testTimeout: 60_000 });

let server: TestServer;
let token: string;
const services = () => server.runtime.services;
beforeAll(async () => {
  server = await startTestServer();
  const sb = server.sandbox as NonNullable<TestServer['sandbox']>;
  token = (
    await createGrant(services(), {
      shopId: sb.shop_id,
      tier: 'observer',
      actorKind: 'agent',
      actorName: 'held reader',
      expiresInMs: 3_600_000,
    })
  ).token;
});
afterAll(async () => {
  await server?.close();
});

/** Freezes the sandbox shop (as a 402 does, next probe in an hour) and sends `n` events, all held. */
async function frozenWithHeld(n: number): Promise<{ ids: string[]; probeAt: number }> {
  const sb = server.sandbox as NonNullable<TestServer['sandbox']>;
  const probeAt = Date.now() + 3_600_000;
  await services().db.run("UPDATE shops SET connection_status = 'frozen', next_probe_at = ? WHERE id = ?", [
    probeAt,
    sb.shop_id,
  ]);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await sendSigned(server, sb.endpoint_id, sb.signing_secret, {
      type: 'order.paid',
      id: `held-${i}-${Math.random()}`,
    });
    expect(r.status, JSON.stringify(r.json)).toBe(202);
    ids.push(r.json.event_id);
  }
  for (const id of ids)
    await waitFor(async () => {
      const row = await services().db.get<{ state: string }>('SELECT state FROM events WHERE id = ?', [id]);
      return row?.state === 'held' ? true : null;
    }, `${id} held`);
  return { ids, probeAt };
}

describe('a store frozen on Shopify side, 4 events held, no alert subscription', () => {
  let held: { ids: string[]; probeAt: number };
  beforeAll(async () => {
    held = await frozenWithHeld(4);
  });

  it('list_incidents answers what is wrong right now: the held shop, with its held events', async () => {
    const subs = await services().db.get<{ n: number }>('SELECT COUNT(*) AS n FROM alert_subscriptions');
    expect(Number(subs?.n)).toBe(0);
    await server.runtime.alerts?.once();
    const r = await api(server, token, 'GET', '/agent/v1/incidents?state=open');
    expect(r.status, r.text).toBe(200);
    const inc = (r.json.data as { trigger: string; details: Record<string, unknown>; notifications: unknown[] }[]).find(
      (i) => i.trigger === 'shop_held',
    );
    expect(inc, r.text).toBeDefined();
    expect(inc?.details).toMatchObject({ connection_status: 'frozen', held_events: 4 });
    expect(inc?.notifications).toEqual([]);
  });

  it('a held event says why it is held, when the next probe is, and by when it must be released', async () => {
    const id = held.ids[0] as string;
    const ev = await api(server, token, 'GET', `/agent/v1/events/${id}`);
    expect(ev.status, ev.text).toBe(200);
    expect(ev.json.state).toBe('held');
    expect(ev.json.replay.available).toBe(false);
    expect(ev.json.replay.reason).toBe('event_held');
    expect(ev.json.replay.detail).not.toMatch(/still being delivered/);
    const setup = await api(server, token, 'GET', '/agent/v1/setup');
    expect(setup.json.shop.next_probe_at).toBe(new Date(held.probeAt).toISOString());
    expect(ev.json.handoff.hold).toEqual({
      reason: 'frozen',
      why: expect.stringMatching(/frozen/),
      release: expect.any(String),
      next_probe_at: setup.json.shop.next_probe_at,
      release_by: ev.json.retention.body_expires_at,
      after_release_by: expect.stringMatching(/FP-H-HEXP/),
    });
    expect(Date.parse(ev.json.handoff.hold.release_by)).toBeGreaterThan(Date.now());
    // The list says the same replay block.
    const list = await api(server, token, 'GET', '/agent/v1/events?state=held');
    const summary = list.json.data.find((e: { id: string }) => e.id === id);
    expect(summary.replay).toEqual(ev.json.replay);
  });

  it('a day before a held body expires, retention_expiring counts it (no subscription needed)', async () => {
    const soon = held.ids[1] as string;
    await services().db.run('UPDATE events SET body_expires_at = ? WHERE id = ?', [Date.now() + 3_600_000, soon]);
    await server.runtime.alerts?.once();
    const r = await api(server, token, 'GET', '/agent/v1/incidents?state=open');
    const inc = r.json.data.find((i: { trigger: string }) => i.trigger === 'retention_expiring');
    expect(inc, r.text).toBeDefined();
    expect(inc.details).toMatchObject({ count: 1, held: 1, sample_event_ids: [soon] });
    expect(inc.summary).toMatch(/1 held/);
    await services().db.run('UPDATE events SET body_expires_at = ? WHERE id = ?', [Date.now() + 30 * 86_400_000, soon]);
  });

  it('a held event whose body expires is kept as a record: failed, FP-H-HEXP, body purged, listed', async () => {
    const [gone, ...kept] = held.ids as [string, ...string[]];
    const past = Date.now() - 40 * 86_400_000;
    await services().db.run('UPDATE events SET received_at = ?, body_expires_at = ? WHERE id = ?', [
      past,
      past + 7 * 86_400_000,
      gone,
    ]);
    await sweepRetention(services());
    const ev = await api(server, token, 'GET', `/agent/v1/events/${gone}`);
    expect(ev.json).toMatchObject({
      state: 'failed',
      support_code: 'FP-H-HEXP',
      error_code: 'event_expired_while_held',
      retention_state: 'expired',
    });
    expect(ev.json.retention.body_retained).toBe(false);
    const listed = await api(server, token, 'GET', '/agent/v1/events?support_code=FP-H-HEXP');
    expect(listed.json.data.map((e: { id: string }) => e.id)).toEqual([gone]);
    // The others are still held, bodies kept.
    for (const id of kept) expect((await api(server, token, 'GET', `/agent/v1/events/${id}`)).json.state).toBe('held');
  });

  it('the incident resolves when the shop is connected again', async () => {
    const sb = server.sandbox as NonNullable<TestServer['sandbox']>;
    await services().db.run("UPDATE shops SET connection_status = 'connected', next_probe_at = NULL WHERE id = ?", [
      sb.shop_id,
    ]);
    await server.runtime.alerts?.once();
    const r = await api(server, token, 'GET', '/agent/v1/incidents?state=open');
    expect(r.json.data.filter((i: { trigger: string }) => i.trigger === 'shop_held')).toEqual([]);
  });
});
