// Alert subscriptions are listed and removed (issue 42 item 7, ADR 1311), with a real receiving
// server on loopback: removing is an action intent (preview → confirm, idempotent, audited,
// metered); a removed subscription is told nothing more (its pending messages are cancelled, new
// incidents are not sent to it) while the others still are; it stays listed as `removed`
// (`status=removed`) without its URL or secret; HTTP and MCP show the same list.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createGrant } from '../../api/src/auth/grants.ts';
import { waitFor } from '../handoff/helpers.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { connectModern } from '../mcp/helpers.ts';
import { api, confirm } from './helpers.ts';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const received: { path: string; body: string }[] = [];
let receiver: Server;
let receiverUrl = '';
let s: TestServer;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      received.push({ path: req.url ?? '', body });
      // `/down` never takes a message: its messages stay pending, retried with backoff.
      res.writeHead(req.url === '/down' ? 503 : 200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  s = await startTestServer({ env: { FLOWPORT_ALERT_INTERVAL_MS: '100' } });
});
afterAll(async () => {
  await s?.close();
  await new Promise((r) => receiver?.close(r));
});

describe('alert subscriptions: listed and removed', () => {
  it('a removed subscription stops being notified; its pending messages are cancelled; the others still are', async () => {
    const sb = s.sandbox as NonNullable<TestServer['sandbox']>;
    const services = s.runtime.services;
    const db = services.db;
    const admin = await createGrant(services, {
      shopId: sb.shop_id,
      tier: 'admin_assistant',
      actorKind: 'human',
      actorName: 'merchant',
      expiresInMs: 3_600_000,
    });
    const observer = await createGrant(services, {
      shopId: sb.shop_id,
      tier: 'observer',
      actorKind: 'agent',
      actorName: 'observer',
      expiresInMs: 3_600_000,
    });
    const subscribe = async (path: string, note: string) => {
      const p = await api(s, admin.token, 'POST', '/agent/v1/alert-subscription-intents', {
        channel: 'webhook',
        url: `${receiverUrl}${path}`,
        note,
      });
      expect(p.status, p.text).toBe(201);
      const done = await confirm(s, admin.token, p.json.id);
      expect(done.status, done.text).toBe(200);
      return done.json.result.subscription_id as string;
    };
    const keep = await subscribe('/keep', 'on-call');
    const down = await subscribe('/down', 'old pager');
    const gone = await subscribe('/gone', 'to remove');

    // Listed, oldest first, without URL or secret; an observer may read them.
    const listed = await api(s, observer.token, 'GET', '/agent/v1/alert-subscriptions');
    expect(listed.status, listed.text).toBe(200);
    expect(listed.json.data.map((x: { id: string }) => x.id)).toEqual([keep, down, gone]);
    expect(listed.json.data[0]).toMatchObject({
      id: keep,
      object: 'alert_subscription',
      channel: 'webhook',
      origin: receiverUrl,
      note: 'on-call',
      status: 'active',
      removed_at: null,
    });
    expect(listed.text).not.toContain('/keep');
    expect(listed.text).not.toContain('whsec_');
    expect(listed.json.page).toMatchObject({ has_more: false, next_cursor: null });

    // The shop is held: an incident, sent to /keep; /down keeps failing, its message pending.
    await db.run(`UPDATE shops SET connection_status = 'frozen' WHERE id = ?`, [sb.shop_id]);
    await waitFor(
      () =>
        received.some((r) => r.path === '/keep') &&
        received.some((r) => r.path === '/down') &&
        received.some((r) => r.path === '/gone')
          ? true
          : null,
      'opened messages',
    );

    // An observer cannot remove; removing is previewed first, and nothing changes until confirmed.
    const refused = await api(
      s,
      observer.token,
      'POST',
      `/agent/v1/alert-subscriptions/${down}/unsubscribe-intents`,
      {},
    );
    expect(refused.status).toBe(403);
    const preview = await api(s, admin.token, 'POST', `/agent/v1/alert-subscriptions/${down}/unsubscribe-intents`, {});
    expect(preview.status, preview.text).toBe(201);
    expect(preview.json).toMatchObject({
      kind: 'alert_unsubscribe',
      state: 'previewed',
      target: { type: 'alert_subscription', id: down },
      required_scope: 'alert_unsubscribe:execute',
      meter_cost: { preview: 1, execution: 1 },
    });
    expect(preview.json.preview.details.pending_messages).toBe(1);
    expect(
      (await api(s, admin.token, 'GET', '/agent/v1/alert-subscriptions')).json.data.map((x: { id: string }) => x.id),
    ).toContain(down);

    const key = randomUUID();
    const done = await confirm(s, admin.token, preview.json.id, key);
    expect(done.status, done.text).toBe(200);
    expect(done.json.state).toBe('executed');
    expect(done.json.result).toMatchObject({ subscription_id: down, cancelled_messages: 1 });
    // Idempotent: the same key answers the same, and nothing runs twice.
    const again = await confirm(s, admin.token, preview.json.id, key);
    expect(again.status).toBe(200);
    expect(again.text).toBe(done.text);
    // Audited.
    const audit = await api(s, admin.token, 'GET', `/agent/v1/audit?target_id=${preview.json.id}`);
    expect(audit.json.data.map((e: { action: string }) => e.action)).toContain('confirmActionIntent');

    // Its pending message is cancelled and never retried.
    const notes = await db.all<{ status: string }>('SELECT status FROM alert_notifications WHERE subscription_id = ?', [
      down,
    ]);
    expect(notes.map((n) => n.status)).toEqual(['cancelled']);

    // Remove /gone too, then a new incident: only /keep is told.
    const p2 = await api(s, admin.token, 'POST', `/agent/v1/alert-subscriptions/${gone}/unsubscribe-intents`, {});
    expect((await confirm(s, admin.token, p2.json.id)).status).toBe(200);
    const downBefore = received.filter((r) => r.path === '/down').length;
    const goneBefore = received.filter((r) => r.path === '/gone').length;
    await db.run(`UPDATE shops SET connection_status = 'connected' WHERE id = ?`, [sb.shop_id]);
    await waitFor(
      () => (received.some((r) => r.path === '/keep' && r.body.includes('incident.resolved')) ? true : null),
      'resolved message',
    );
    for (let i = 0; i < 3; i++) await s.runtime.alerts?.once();
    expect(received.filter((r) => r.path === '/down')).toHaveLength(downBefore);
    expect(received.filter((r) => r.path === '/gone')).toHaveLength(goneBefore);
    expect(received.filter((r) => r.path === '/gone' && r.body.includes('incident.resolved'))).toEqual([]);

    // Listed: active by default; removed ones with status=removed, their URL and secret destroyed.
    const active = await api(s, observer.token, 'GET', '/agent/v1/alert-subscriptions');
    expect(active.json.data.map((x: { id: string }) => x.id)).toEqual([keep]);
    const removed = await api(s, observer.token, 'GET', '/agent/v1/alert-subscriptions?status=removed');
    expect(removed.json.data.map((x: { id: string; status: string }) => [x.id, x.status])).toEqual([
      [down, 'removed'],
      [gone, 'removed'],
    ]);
    expect(removed.json.data[0].removed_at).toBeTruthy();
    const row = await db.get<{ url_enc: string; secret_enc: string | null }>(
      'SELECT url_enc, secret_enc FROM alert_subscriptions WHERE id = ?',
      [down],
    );
    expect(row).toEqual({ url_enc: '', secret_enc: null });

    // Removing it again: not found (it is no longer an active subscription of this shop).
    const twice = await api(s, admin.token, 'POST', `/agent/v1/alert-subscriptions/${down}/unsubscribe-intents`, {});
    expect(twice.status).toBe(404);
    expect(twice.json.code).toBe('not_found');

    // MCP lists the same.
    const mcp = await connectModern(s.url, observer.token);
    const viaMcp = await mcp.callTool('list_alert_subscriptions', {});
    await mcp.close();
    expect((viaMcp.structuredContent as { data: { id: string }[] }).data.map((x) => x.id)).toEqual([keep]);
  });

  it("another shop's subscription is not found", async () => {
    const sb = s.sandbox as NonNullable<TestServer['sandbox']>;
    const services = s.runtime.services;
    const other = await createGrant(services, {
      shopId: sb.shop_id,
      tier: 'admin_assistant',
      actorKind: 'agent',
      actorName: 'mine',
      expiresInMs: 3_600_000,
    });
    const sub = await api(s, other.token, 'POST', '/agent/v1/alert-subscription-intents', {
      channel: 'slack',
      url: `${receiverUrl}/slack`,
    });
    const id = (await confirm(s, other.token, sub.json.id)).json.result.subscription_id as string;
    const { makeShop } = await import('../handoff/helpers.ts');
    const foreign = await makeShop(services);
    const stranger = await createGrant(services, {
      shopId: foreign.shop.id,
      tier: 'admin_assistant',
      actorKind: 'agent',
      actorName: 'stranger',
      expiresInMs: 3_600_000,
    });
    const r = await api(s, stranger.token, 'POST', `/agent/v1/alert-subscriptions/${id}/unsubscribe-intents`, {});
    expect(r.status).toBe(404);
    expect((await api(s, stranger.token, 'GET', '/agent/v1/alert-subscriptions')).json.data).toEqual([]);
  });
});
