// Alerts to the merchant through real HTTP, with a real receiving server on loopback: subscribing
// is an action intent (preview, confirm, signing secret shown once); a held shop opens one incident,
// sent once to each channel (a Standard Webhooks-signed webhook, verified with the standardwebhooks
// library, retried after the receiver fails; and a Slack-compatible webhook), then a resolved
// message when it clears; incidents are readable through the API and MCP.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createGrant } from '../../api/src/auth/grants.ts';
import { newId } from '../../api/src/ids.ts';
import { waitFor } from '../handoff/helpers.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { connectModern } from '../mcp/helpers.ts';
import { api, confirm } from './helpers.ts';
import { countStoredEvents } from '../../api/src/store/tables/events/window-counts.ts';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  answered: number;
}
const received: Received[] = [];
let failNextHook = 1;
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
      const status = req.url === '/hook' && failNextHook-- > 0 ? 500 : 200;
      received.push({ path: req.url ?? '', headers: req.headers, body, answered: status });
      res.writeHead(status).end();
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

describe('alerts', () => {
  it('subscribes by intent, sends one signed message per incident and channel, retries, resolves; incidents readable', async () => {
    const sb = s.sandbox as NonNullable<TestServer['sandbox']>;
    const services = s.runtime.services;
    const admin = await createGrant(services, {
      shopId: sb.shop_id,
      tier: 'admin_assistant',
      actorKind: 'human',
      actorName: 'merchant',
      expiresInMs: 3_600_000,
    });
    // Subscribing is governed: an observer cannot, a bad URL is refused.
    const observer = await createGrant(services, {
      shopId: sb.shop_id,
      tier: 'observer',
      actorKind: 'agent',
      actorName: 'observer',
      expiresInMs: 3_600_000,
    });
    const body = (path: string, channel: string) => ({ channel, url: `${receiverUrl}${path}` });
    expect(
      (await api(s, observer.token, 'POST', '/agent/v1/alert-subscription-intents', body('/hook', 'webhook'))).status,
    ).toBe(403);
    const plainHttp = await api(s, admin.token, 'POST', '/agent/v1/alert-subscription-intents', {
      channel: 'webhook',
      url: 'http://alerts.example.com/hook',
    });
    expect(plainHttp.status).toBe(400);

    const hookPreview = await api(
      s,
      admin.token,
      'POST',
      '/agent/v1/alert-subscription-intents',
      body('/hook', 'webhook'),
    );
    expect(hookPreview.status, hookPreview.text).toBe(201);
    expect(hookPreview.json.kind).toBe('alert_subscribe');
    expect(hookPreview.text).not.toContain('/hook');
    const hook = await confirm(s, admin.token, hookPreview.json.id);
    expect(hook.status, hook.text).toBe(200);
    const secret = hook.json.result.signing_secret as string;
    expect(secret).toMatch(/^whsec_/);
    // Shown once: later reads do not carry it.
    expect((await api(s, admin.token, 'GET', `/agent/v1/action-intents/${hookPreview.json.id}`)).text).not.toContain(
      secret,
    );
    const slackPreview = await api(
      s,
      admin.token,
      'POST',
      '/agent/v1/alert-subscription-intents',
      body('/slack', 'slack'),
    );
    expect((await confirm(s, admin.token, slackPreview.json.id)).status).toBe(200);

    // The shop is held: one incident, one message per channel (the webhook after one failure).
    await services.db.run(`UPDATE shops SET connection_status = 'frozen' WHERE id = ?`, [sb.shop_id]);
    const accepted = (path: string, type: string) =>
      received.filter((r) => r.path === path && r.answered === 200 && r.body.includes(type));
    await waitFor(
      () =>
        accepted('/hook', 'incident.opened').length === 1 && accepted('/slack', 'incident').length === 1 ? true : null,
      'opened messages',
    );
    // More evaluation passes change nothing: still one incident, one message each.
    for (let i = 0; i < 3; i++) await s.runtime.alerts?.once();
    const opened = accepted('/hook', 'incident.opened')[0] as Received;
    expect(
      received.filter((r) => r.path === '/hook' && r.body.includes('incident.opened')).map((r) => r.answered),
    ).toEqual([500, 200]);
    expect(received.filter((r) => r.path === '/slack')).toHaveLength(1);
    const payload = new Webhook(secret).verify(opened.body, opened.headers as Record<string, string>) as {
      type: string;
      data: { trigger: string; subject: string; state: string; id: string };
    };
    expect(payload).toMatchObject({
      type: 'incident.opened',
      data: { trigger: 'shop_held', subject: sb.shop_id, state: 'open' },
    });
    // A forged or altered message does not verify.
    expect(() =>
      new Webhook(secret).verify(opened.body.replace('open', 'shut'), opened.headers as Record<string, string>),
    ).toThrow();
    const slack = JSON.parse((received.find((r) => r.path === '/slack') as Received).body) as { text: string };
    expect(slack.text).toContain('frozen');

    const open = await api(s, admin.token, 'GET', '/agent/v1/incidents?state=open');
    expect(open.status).toBe(200);
    expect(open.json.data).toHaveLength(1);
    expect(open.json.data[0]).toMatchObject({ trigger: 'shop_held', state: 'open', id: payload.data.id });

    // It clears: a resolved message on each channel.
    await services.db.run(`UPDATE shops SET connection_status = 'connected' WHERE id = ?`, [sb.shop_id]);
    await waitFor(
      () =>
        accepted('/hook', 'incident.resolved').length === 1 && received.filter((r) => r.path === '/slack').length === 2
          ? true
          : null,
      'resolved messages',
    );
    const resolved = accepted('/hook', 'incident.resolved')[0] as Received;
    expect(new Webhook(secret).verify(resolved.body, resolved.headers as Record<string, string>)).toMatchObject({
      type: 'incident.resolved',
      data: { id: payload.data.id, state: 'resolved' },
    });
    const mcp = await connectModern(s.url, admin.token);
    const listed = await mcp.callTool('list_incidents', {});
    await mcp.close();
    const incidents = (
      listed.structuredContent as { data: { id: string; state: string; notifications: { status: string }[] }[] }
    ).data;
    expect(incidents).toHaveLength(1);
    expect(incidents[0]?.state).toBe('resolved');
    expect(incidents[0]?.notifications.map((n) => n.status)).toEqual(['sent', 'sent', 'sent', 'sent']);
    // Nothing secret travelled: the signing secret and the Slack URL are not in any message body.
    for (const r of received) expect(r.body).not.toContain('whsec_');
  });

  it('opens an incident for each trigger, and resolves each when its cause clears', async () => {
    const sb = s.sandbox as NonNullable<TestServer['sandbox']>;
    const services = s.runtime.services;
    const monitor = s.runtime.alerts;
    if (!monitor) throw new Error('alert monitor expected');
    const now = services.now();
    const insert = async (state: string, receivedAt: number, updatedAt: number) => {
      const id = newId('event');
      const body = JSON.stringify({ id });
      await services.db.run(
        `INSERT INTO events (id, shop_id, endpoint_id, receipt_id, state, event_type, sender, body, body_size, body_sha256,
           config_version, received_at, updated_at)
         VALUES (?, ?, ?, ?, ?, 'alert.test', 'tests', ?, ?, ?, 1, ?, ?)`,
        [
          id,
          sb.shop_id,
          sb.endpoint_id,
          newId('receipt'),
          state,
          body,
          body.length,
          'x'.repeat(64),
          receivedAt,
          updatedAt,
        ],
      );
      await countStoredEvents(services.db, [id]);
      return id;
    };
    const failing: string[] = [];
    for (let i = 0; i < monitor.settings.failureThreshold; i++) failing.push(await insert('failed', now, now));
    const nowf: string[] = [];
    for (let i = 0; i < monitor.settings.noWorkflowThreshold; i++) nowf.push(await insert('no_workflow', now, now));
    // Received long enough ago that the free plan's retention ends within a day.
    const old = await insert('failed', now - 2.5 * 86_400_000, now - 2.5 * 86_400_000);
    await services.db.run('UPDATE endpoints SET previous_secret_expires_at = ? WHERE id = ?', [
      now + 30 * 60_000,
      sb.endpoint_id,
    ]);
    await monitor.once();
    const admin = await createGrant(services, {
      shopId: sb.shop_id,
      tier: 'observer',
      actorKind: 'agent',
      actorName: 'reader',
      expiresInMs: 3_600_000,
    });
    const open = await api(s, admin.token, 'GET', '/agent/v1/incidents?state=open');
    const triggers = (open.json.data as { trigger: string }[]).map((i) => i.trigger).sort();
    expect(triggers).toEqual(['endpoint_failing', 'no_workflow', 'retention_expiring', 'secret_overlap_ending']);
    // The causes clear: every incident resolves.
    const all = [...failing, ...nowf, old];
    await services.db.run(
      `UPDATE events SET state = 'delivered', updated_at = ? WHERE id IN (${all.map(() => '?').join(', ')})`,
      [now - 86_400_000, ...all],
    );
    await services.db.run('UPDATE endpoints SET previous_secret_expires_at = NULL WHERE id = ?', [sb.endpoint_id]);
    await monitor.once();
    expect((await api(s, admin.token, 'GET', '/agent/v1/incidents?state=open')).json.data).toEqual([]);
    const resolved = await api(s, admin.token, 'GET', '/agent/v1/incidents?state=resolved&limit=100');
    expect((resolved.json.data as { trigger: string }[]).map((i) => i.trigger)).toEqual(
      expect.arrayContaining(['endpoint_failing', 'no_workflow', 'retention_expiring', 'secret_overlap_ending']),
    );
  });
});

describe('alert targets outside sandbox mode (FLOWPORT_ALERT_PRIVATE_TARGETS=off)', () => {
  it('refuses URLs that are or resolve to loopback, private, link-local or reserved addresses, and takes a public one', async () => {
    const strict = await startTestServer({ env: { FLOWPORT_ALERT_PRIVATE_TARGETS: 'off' } });
    try {
      const sb = strict.sandbox as NonNullable<TestServer['sandbox']>;
      const admin = await createGrant(strict.runtime.services, {
        shopId: sb.shop_id,
        tier: 'admin_assistant',
        actorKind: 'human',
        actorName: 'merchant',
        expiresInMs: 3_600_000,
      });
      const inside = [
        receiverUrl, // http to this machine
        'https://127.0.0.1:8443/hook',
        'https://localhost/hook', // a name that resolves to loopback
        'https://10.1.2.3/hook',
        'https://172.20.0.5/hook',
        'https://192.168.1.10/hook',
        'https://169.254.169.254/latest/meta-data',
        'https://100.64.0.1/hook',
        'https://[::1]/hook',
        'https://[fd00::1]/hook',
        'https://[fe80::1]/hook',
        'https://[::ffff:127.0.0.1]/hook',
        'https://0.0.0.0/hook',
        'https://[::7f00:1]/hook', // IPv4-compatible loopback
        'https://[::ffff:0:a9fe:a9fe]/hook', // SIIT, the metadata service
        'https://[2002:a00:1::1]/hook', // 6to4 of 10.0.0.1
        'https://[64:ff9b:1::7f00:1]/hook', // local-use NAT64
        'https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook', // Teredo, client 127.0.0.1
      ];
      for (const url of inside) {
        const r = await api(strict, admin.token, 'POST', '/agent/v1/alert-subscription-intents', {
          channel: 'webhook',
          url,
        });
        expect(r.status, `${url}: ${r.text}`).toBe(422);
        expect(r.json.code).toBe('alert_target_private');
        expect(r.json.docs_url).toMatch(/\/reference\/errors\/alert_target_private\/$/);
      }
      // An IP literal on the public internet needs no DNS: the preview is made (nothing is sent).
      const pub = await api(strict, admin.token, 'POST', '/agent/v1/alert-subscription-intents', {
        channel: 'webhook',
        url: 'https://93.184.215.14/hook',
      });
      expect(pub.status, pub.text).toBe(201);
      const rows = await strict.runtime.services.db.all('SELECT id FROM alert_subscriptions WHERE shop_id = ?', [
        sb.shop_id,
      ]);
      expect(rows).toEqual([]);
    } finally {
      await strict.close();
    }
  });
});
