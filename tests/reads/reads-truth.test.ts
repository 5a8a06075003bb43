// Issue 23 point 5: reads tell the truth. An event's replay availability accounts for the
// recent-delivery check a preview makes (and names the acknowledgement); diagnostics'
// sender-rejection check counts the refused intake requests its own receipts list; events,
// event lists and receipts carry the endpoint's auth mode; a replay preview warns when the
// body expires before the preview does. Real HTTP, worker and sandbox Flow (both stores).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api, confirm, deliveredEvent, waitDelivered } from '../intents/helpers.ts';

vi.setConfig({ testTimeout: 120_000 });

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startTestServer();
  token = server.sandbox?.grant_token as string;
});
afterAll(async () => {
  await server?.close();
});

describe('replay availability', () => {
  it('a just-delivered event: available only with acknowledge_recent_delivery, said by the detail and the list', async () => {
    const id = await deliveredEvent(server);
    const ev = await api(server, token, 'GET', `/agent/v1/events/${id}`);
    expect(ev.status).toBe(200);
    expect(ev.json.replay).toMatchObject({
      available: true,
      reason: 'recent_delivery',
      acknowledgements: ['acknowledge_recent_delivery'],
    });
    expect(ev.json.replay.detail).toContain('acknowledge_recent_delivery');
    const listed = await api(server, token, 'GET', `/agent/v1/events?limit=100`);
    const item = listed.json.data.find((e: { id: string }) => e.id === id);
    expect(item.replay).toEqual(ev.json.replay);
    // What the read said is what the preview does: refused without it, accepted with it.
    const plain = await api(server, token, 'POST', `/agent/v1/events/${id}/replay-intents`, {});
    expect(plain.status).toBe(409);
    expect(plain.json.code).toBe('replay_recent_delivery');
    const acknowledged = await api(server, token, 'POST', `/agent/v1/events/${id}/replay-intents`, {
      acknowledge_recent_delivery: true,
    });
    expect(acknowledged.status, acknowledged.text).toBe(201);
  });

  it('an original delivered an hour ago whose replay just reached Flow is recovered (both acknowledgements); the replay needs the recent one; one nothing replays needs none (list and detail agree with the preview)', async () => {
    const db = server.runtime.services.db;
    const original = await deliveredEvent(server);
    const alone = await deliveredEvent(server);
    const p = await api(server, token, 'POST', `/agent/v1/events/${original}/replay-intents`, {
      acknowledge_recent_delivery: true,
    });
    expect(p.status, p.text).toBe(201);
    const done = await confirm(server, token, p.json.id);
    expect(done.status, done.text).toBe(200);
    const replay = done.json.result.event_id as string;
    await waitDelivered(server, replay);
    // Both senders' events reached Flow an hour ago; only the original's replay reached it now.
    await db.run('UPDATE events SET delivered_at = ? WHERE id IN (?, ?)', [Date.now() - 3_600_000, original, alone]);
    const listed = await api(server, token, 'GET', `/agent/v1/events?limit=100`);
    expect(listed.status).toBe(200);
    const item = (id: string) => listed.json.data.find((e: { id: string }) => e.id === id);
    // The original is recovered by its replay (ADR 0420): both acknowledgements, the recovered one first.
    const od = await api(server, token, 'GET', `/agent/v1/events/${original}`);
    expect(od.json.recovered_by).toBe(replay);
    expect(od.json.replay).toMatchObject({
      available: false,
      reason: 'already_recovered',
      acknowledgements: ['acknowledge_recovered', 'acknowledge_recent_delivery'],
    });
    expect(item(original).replay).toEqual(od.json.replay);
    const refused = await api(server, token, 'POST', `/agent/v1/events/${original}/replay-intents`, {});
    expect(refused.json.code).toBe('event_already_recovered');
    const onlyRecovered = await api(server, token, 'POST', `/agent/v1/events/${original}/replay-intents`, {
      acknowledge_recovered: true,
    });
    expect(onlyRecovered.json.code).toBe('replay_recent_delivery');
    const rd = await api(server, token, 'GET', `/agent/v1/events/${replay}`);
    expect(rd.json.replay).toMatchObject({ available: true, reason: 'recent_delivery' });
    expect(item(replay).replay).toEqual(rd.json.replay);
    const plainReplay = await api(server, token, 'POST', `/agent/v1/events/${replay}/replay-intents`, {});
    expect(plainReplay.json.code).toBe('replay_recent_delivery');
    const detail = await api(server, token, 'GET', `/agent/v1/events/${alone}`);
    expect(detail.json.replay).toEqual({ available: true, reason: null, detail: null, acknowledgements: [] });
    expect(item(alone).replay).toEqual(detail.json.replay);
    const plain = await api(server, token, 'POST', `/agent/v1/events/${alone}/replay-intents`, {});
    expect(plain.status, plain.text).toBe(201);
  });

  it('a replay preview warns when the body expires before the preview does', async () => {
    const id = await deliveredEvent(server);
    // The body is kept one more minute; the preview lives longer.
    await server.runtime.services.db.run('UPDATE events SET body_expires_at = ? WHERE id = ?', [
      Date.now() + 60_000,
      id,
    ]);
    const preview = await api(server, token, 'POST', `/agent/v1/events/${id}/replay-intents`, {
      acknowledge_recent_delivery: true,
    });
    expect(preview.status, preview.text).toBe(201);
    const warning = (preview.json.preview.warnings as string[]).find((w) => w.includes('retention_expired'));
    expect(warning).toContain('before this preview expires');
  });
});

describe('diagnostics', () => {
  it('the sender-rejection check counts the refused intake requests the same response lists', async () => {
    const endpoint = server.sandbox?.endpoint_id as string;
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${server.url}/in/${endpoint}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-flowport-signature': 'sha256=00' },
        body: JSON.stringify({ n: i }),
      });
      expect(res.status).toBe(401);
    }
    const d = await api(server, token, 'GET', '/agent/v1/diagnostics');
    expect(d.status).toBe(200);
    const refusedListed = (d.json.recent_receipts as { http_status: number }[]).filter((r) => r.http_status >= 400);
    expect(refusedListed.length).toBeGreaterThanOrEqual(4);
    const check = (d.json.checks as { check: string; status: string; detail: string }[]).find(
      (c) => c.check === 'sender_rejections',
    );
    expect(check?.status).toBe('warn');
    expect(check?.detail).toMatch(/^4 request\(s\) refused at intake in 24 h \(/);
    expect(check?.detail).not.toContain('No rejected requests');
  });
});

describe('auth mode in event history', () => {
  it('events, event lists and receipts carry the endpoint auth mode', async () => {
    const id = await deliveredEvent(server);
    const ev = await api(server, token, 'GET', `/agent/v1/events/${id}`);
    expect(ev.json.auth_mode).toBe('hmac_sha256');
    const listed = await api(server, token, 'GET', '/agent/v1/events?limit=5');
    for (const e of listed.json.data) expect(e.auth_mode).toBe('hmac_sha256');
    const receipt = await api(server, token, 'GET', `/agent/v1/events/${id}/receipt`);
    expect(receipt.json.auth_mode).toBe('hmac_sha256');
    const byId = await api(server, token, 'GET', `/agent/v1/receipts/${receipt.json.id}`);
    expect(byId.json.auth_mode).toBe('hmac_sha256');
  });
});
