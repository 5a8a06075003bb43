// Uninstall and Flow's trigger lifecycle, end to end over real HTTP with the worker running and
// the sandbox playing Shopify: app/uninstalled holds the shop's events, revokes its grants and
// sessions; a reinstall releases and delivers them. A disabled trigger ends events no_workflow
// without a call to Shopify; enabling it delivers; an older callback never overrides a newer one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrant } from '../../api/src/auth/grants.ts';
import { INGEST_PATH_PREFIX } from '../../api/src/lib/package-info.ts';
import { DEFAULT_HMAC, insertEndpoint, PLAIN_MAPPING } from '../../api/src/services/endpoints.ts';
import { SHOPIFY_APP_PATHS, signWebhookBody } from '../../api/src/lib/shopify-app.ts';
import { eventRow, insertEvent, postSigned, waitFor, workerSettings } from '../handoff/helpers.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { go, install, sandboxApp, sandboxUrl, setWorkflow, uniqueShop } from './helpers.ts';

const SECRET = 'fpsec_test_secret_for_install_tests';
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ configure: workerSettings({}) });
});
afterAll(async () => {
  await server?.close();
});

const services = () => server.runtime.services;

/** Installs a shop through OAuth and gives it one endpoint. */
async function installedShop(prefix: string) {
  const domain = uniqueShop(prefix);
  const jar = await install(server, domain);
  const shop = await services().db.get<{ id: string }>('SELECT id FROM shops WHERE domain = ?', [domain]);
  if (!shop) throw new Error('no shop');
  const ep = await insertEndpoint(
    services(),
    shop.id,
    {
      name: 'install test',
      senderLabel: 'tests',
      triggerVariant: 'external_event',
      authMode: 'hmac_sha256',
      hmac: DEFAULT_HMAC,
      mapping: PLAIN_MAPPING,
    },
    SECRET,
  );
  return { domain, shopId: shop.id, endpointId: ep.id, jar };
}

async function send(endpointId: string, n: string): Promise<string> {
  const res = await postSigned(
    `${server.url}${INGEST_PATH_PREFIX}/${endpointId}`,
    SECRET,
    JSON.stringify({ type: 't', id: n }),
  );
  expect(res.status).toBe(202);
  return ((await res.json()) as { event_id: string }).event_id;
}

const callsTo = (domain: string) => server.runtime.sandbox?.calls.get(domain) ?? 0;

describe('app/uninstalled', () => {
  it('holds events, deletes the token, revokes grants and sessions; a reinstall releases and delivers them', async () => {
    const { domain, shopId, endpointId, jar } = await installedShop('uninst');
    const grant = await createGrant(services(), {
      shopId,
      tier: 'observer',
      actorKind: 'agent',
      actorName: 'bot',
      expiresInMs: 86_400_000,
    });
    const first = await send(endpointId, 'before');
    await waitFor(async () => (await eventRow(services(), first)).state === 'delivered', 'first delivery');

    const un = await fetch(sandboxUrl(server, domain, '/admin/apps/flowport/uninstall'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(((await un.json()) as { flowport_status: number }).flowport_status).toBe(200);
    const shop = await services().db.get<{ connection_status: string; access_token_enc: string | null }>(
      'SELECT connection_status, access_token_enc FROM shops WHERE id = ?',
      [shopId],
    );
    expect(shop).toEqual({ connection_status: 'uninstalled', access_token_enc: null });
    const api = await fetch(`${server.url}/agent/v1/events`, { headers: { authorization: `Bearer ${grant.token}` } });
    expect(api.status).toBe(401);
    const page = await go(jar, `${server.url}${SHOPIFY_APP_PATHS.merchant}`);
    expect(await page.text()).toContain('Sign in to Flowport');

    const held = await send(endpointId, 'while-uninstalled');
    const heldRow = await waitFor(async () => {
      const r = await eventRow(services(), held);
      return r.state === 'held' ? r : null;
    }, 'held event');
    expect(heldRow.support_code).toBe('FP-H-UNIN');
    expect(heldRow.error_code).toBe('shop_uninstalled');
    const explained = await services().db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM audit_log WHERE shop_id = ? AND action = 'shop.uninstall'",
      [shopId],
    );
    expect(Number(explained?.n)).toBe(1);

    // An event held since before the plan's retention (received 400 days ago): the reinstall expires it.
    const old = await insertEvent(services(), shopId, endpointId, {
      state: 'held',
      receivedAt: Date.now() - 400 * 86_400_000,
    });

    await install(server, domain);
    const expired = await eventRow(services(), old);
    expect(expired.state).toBe('failed');
    expect(expired.support_code).toBe('FP-H-HEXP');
    expect(
      await services().db.get<{ body: string | null; retention_state: string }>(
        'SELECT body, retention_state FROM events WHERE id = ?',
        [old],
      ),
    ).toEqual({ body: null, retention_state: 'expired' });
    const delivered = await waitFor(async () => {
      const r = await eventRow(services(), held);
      return r.state === 'delivered' ? r : null;
    }, 'held event delivered after reinstall');
    expect(delivered.state).toBe('delivered');
    const reinstall = await services().db.get<{ details_json: string }>(
      "SELECT details_json FROM audit_log WHERE shop_id = ? AND action = 'shop.reinstall'",
      [shopId],
    );
    expect(JSON.parse(reinstall?.details_json ?? '{}')).toMatchObject({
      previous_status: 'uninstalled',
      released_held_events: 1,
    });
  });

  it('dedupes on X-Shopify-Webhook-Id and refuses a bad HMAC with 401', async () => {
    const { domain, shopId } = await installedShop('dedupe');
    const { client_secret } = sandboxApp(server);
    const body = JSON.stringify({ domain });
    const headers = (hmac: string) => ({
      'content-type': 'application/json',
      'x-shopify-topic': 'app/uninstalled',
      'x-shopify-shop-domain': domain,
      'x-shopify-webhook-id': 'wh-dedupe-1',
      'x-shopify-hmac-sha256': hmac,
    });
    const url = `${server.url}${SHOPIFY_APP_PATHS.appUninstalledWebhook}`;
    const bad = await fetch(url, { method: 'POST', headers: headers(signWebhookBody('wrong', body)), body });
    expect(bad.status).toBe(401);
    expect(((await bad.json()) as { code: string }).code).toBe('shopify_webhook_unverified');
    expect(
      (
        await services().db.get<{ connection_status: string }>('SELECT connection_status FROM shops WHERE id = ?', [
          shopId,
        ])
      )?.connection_status,
    ).toBe('connected');
    const ok = await fetch(url, { method: 'POST', headers: headers(signWebhookBody(client_secret, body)), body });
    expect(await ok.json()).toEqual({ ok: true, duplicate: false });
    const again = await fetch(url, { method: 'POST', headers: headers(signWebhookBody(client_secret, body)), body });
    expect(await again.json()).toEqual({ ok: true, duplicate: true });
    const audits = await services().db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM audit_log WHERE shop_id = ? AND action = 'shop.uninstall'",
      [shopId],
    );
    expect(Number(audits?.n)).toBe(1);
  });
});

describe("Flow's trigger lifecycle", () => {
  it('disabled: no_workflow without a call to Shopify, with the signal time; enabled: delivered', async () => {
    const { domain, endpointId } = await installedShop('life');
    const signalAt = new Date(Date.now() - 1000).toISOString();
    expect((await setWorkflow(server, domain, 'external-event', false, signalAt)).flowport_status).toBe(200);
    const before = callsTo(domain);
    const skipped = await send(endpointId, 'disabled');
    const row = await waitFor(async () => {
      const r = await eventRow(services(), skipped);
      return r.state === 'no_workflow' ? r : null;
    }, 'no_workflow');
    expect(row.support_code).toBe('FP-H-NOFL');
    expect(callsTo(domain)).toBe(before);
    const attempt = await services().db.get<{ flow_response: string }>(
      'SELECT flow_response FROM attempts WHERE event_id = ?',
      [skipped],
    );
    expect(attempt?.flow_response).toContain(signalAt);
    const grant = await createGrant(services(), {
      shopId: (await services().db.get<{ id: string }>('SELECT id FROM shops WHERE domain = ?', [domain]))
        ?.id as string,
      tier: 'observer',
      actorKind: 'agent',
      actorName: 'reader',
      expiresInMs: 86_400_000,
    });
    const listed = await fetch(`${server.url}/agent/v1/events?state=no_workflow&support_code=FP-H-NOFL`, {
      headers: { authorization: `Bearer ${grant.token}` },
    });
    const list = (await listed.json()) as { data: { id: string }[] };
    expect(list.data.map((e) => e.id)).toEqual([skipped]);
    const setup = await fetch(`${server.url}/agent/v1/setup`, { headers: { authorization: `Bearer ${grant.token}` } });
    expect(JSON.stringify(await setup.json())).toContain('No enabled workflow uses external-event');
    const receipt = await fetch(`${server.url}/agent/v1/events/${skipped}/receipt`, {
      headers: { authorization: `Bearer ${grant.token}` },
    });
    expect(((await receipt.json()) as { handoff: { flow_readiness: unknown } }).handoff.flow_readiness).toEqual({
      trigger: 'external-event',
      enabled_workflow: 'no',
      since: signalAt,
      as_of: expect.any(String),
      // The event came in after the signal: it was the readiness then too.
      at_receipt: { enabled_workflow: 'no', since: signalAt },
    });

    expect((await setWorkflow(server, domain, 'external-event', true)).flowport_status).toBe(200);
    const sent = await send(endpointId, 'enabled');
    await waitFor(async () => (await eventRow(services(), sent)).state === 'delivered', 'delivered once enabled');
    expect(callsTo(domain)).toBe(before + 1);
  });

  it('unknown (no callback yet): Flowport still calls Shopify, and the receipt says unknown', async () => {
    const { domain, shopId, endpointId } = await installedShop('unknown');
    const before = callsTo(domain);
    const id = await send(endpointId, 'unknown');
    await waitFor(async () => (await eventRow(services(), id)).state === 'delivered', 'delivered while unknown');
    expect(callsTo(domain)).toBe(before + 1);
    const grant = await createGrant(services(), {
      shopId,
      tier: 'observer',
      actorKind: 'agent',
      actorName: 'reader',
      expiresInMs: 86_400_000,
    });
    const receipt = await fetch(`${server.url}/agent/v1/events/${id}/receipt`, {
      headers: { authorization: `Bearer ${grant.token}` },
    });
    expect(((await receipt.json()) as { handoff: { flow_readiness: unknown } }).handoff.flow_readiness).toEqual({
      trigger: 'external-event',
      enabled_workflow: 'unknown',
      since: null,
      as_of: expect.any(String),
      at_receipt: { enabled_workflow: 'unknown', since: null },
    });
  });

  it('keeps the newest signal when callbacks arrive out of order', async () => {
    const { domain } = await installedShop('order');
    const t = Date.now();
    await setWorkflow(server, domain, 'external-order-event', true, new Date(t).toISOString());
    await setWorkflow(server, domain, 'external-order-event', false, new Date(t - 60_000).toISOString());
    const row = await services().db.get<{ has_enabled_flow: number; signal_at: number }>(
      'SELECT has_enabled_flow, signal_at FROM flow_trigger_lifecycle WHERE shop_domain = ? AND trigger_handle = ?',
      [domain, 'external-order-event'],
    );
    expect(Number(row?.has_enabled_flow)).toBe(1);
    expect(Number(row?.signal_at)).toBe(t);
    await setWorkflow(server, domain, 'external-order-event', false, new Date(t + 1).toISOString());
    const newer = await services().db.get<{ has_enabled_flow: number }>(
      'SELECT has_enabled_flow FROM flow_trigger_lifecycle WHERE shop_domain = ? AND trigger_handle = ?',
      [domain, 'external-order-event'],
    );
    expect(Number(newer?.has_enabled_flow)).toBe(0);
  });

  it('refuses an unsigned or forged callback with 401, and a signed malformed one with 400; stores nothing', async () => {
    const domain = uniqueShop('forged');
    const body = JSON.stringify({
      flow_trigger_definition_id: 'external-event',
      has_enabled_flow: false,
      shop_id: 1,
      shopify_domain: domain,
      timestamp: new Date().toISOString(),
    });
    const url = `${server.url}${SHOPIFY_APP_PATHS.flowLifecycle}`;
    for (const hmac of [undefined, signWebhookBody('wrong', body)]) {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(hmac ? { 'x-shopify-hmac-sha256': hmac } : {}) },
        body,
      });
      expect(res.status).toBe(401);
    }
    const { client_secret } = sandboxApp(server);
    for (const [bad, code] of [
      ['{"flow_trigger_definition_id":', 'invalid_json'],
      [JSON.stringify({ flow_trigger_definition_id: 'external-event', shopify_domain: domain }), 'invalid_request'],
      [JSON.stringify({ ...JSON.parse(body), timestamp: 'yesterday' }), 'invalid_request'],
    ] as const) {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-shopify-hmac-sha256': signWebhookBody(client_secret, bad) },
        body: bad,
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { code: string }).code).toBe(code);
    }
    const row = await services().db.get('SELECT * FROM flow_trigger_lifecycle WHERE shop_domain = ?', [domain]);
    expect(row).toBeUndefined();
  });
});

describe('flowport sandbox workflows / uninstall (CLI)', () => {
  it('turns a sandbox workflow off and on, and uninstalls, through the running server', async () => {
    const { flowport } = await import('../cli/helpers.ts');
    const { domain, shopId } = await installedShop('cli');
    const off = await flowport([
      'sandbox',
      'workflows',
      'disable',
      '--shop',
      domain,
      '--trigger',
      'external-product-event',
      '--url',
      server.url,
      '--json',
    ]);
    expect(off.code).toBe(0);
    expect(off.json).toMatchObject({ trigger: 'external-product-event', enabled: false, flowport_status: 200 });
    const row = () =>
      services().db.get<{ has_enabled_flow: number }>(
        'SELECT has_enabled_flow FROM flow_trigger_lifecycle WHERE shop_domain = ? AND trigger_handle = ?',
        [domain, 'external-product-event'],
      );
    expect(Number((await row())?.has_enabled_flow)).toBe(0);
    const on = await flowport([
      'sandbox',
      'workflows',
      'enable',
      '--shop',
      domain,
      '--trigger',
      'external-product-event',
      '--url',
      server.url,
    ]);
    expect(on.code).toBe(0);
    expect(Number((await row())?.has_enabled_flow)).toBe(1);
    const un = await flowport(['sandbox', 'uninstall', '--shop', domain, '--url', server.url, '--json']);
    expect(un.code).toBe(0);
    expect(
      (
        await services().db.get<{ connection_status: string }>('SELECT connection_status FROM shops WHERE id = ?', [
          shopId,
        ])
      )?.connection_status,
    ).toBe('uninstalled');
  });
});

describe('expiring offline tokens', () => {
  it('refreshes the token before it expires, then delivers with the new one', async () => {
    const sandbox = server.runtime.sandbox;
    if (!sandbox) throw new Error('sandbox mode expected');
    sandbox.install.expiringTokenSeconds = 60; // inside the 5-minute refresh margin at once
    let installed: Awaited<ReturnType<typeof installedShop>>;
    try {
      installed = await installedShop('expiring');
    } finally {
      sandbox.install.expiringTokenSeconds = null;
    }
    const before = await services().db.get<{
      access_token_enc: string;
      access_token_expires_at: number;
      refresh_token_enc: string;
    }>('SELECT access_token_enc, access_token_expires_at, refresh_token_enc FROM shops WHERE id = ?', [
      installed.shopId,
    ]);
    expect(before?.refresh_token_enc).toBeTruthy();
    expect(Number(before?.access_token_expires_at)).toBeGreaterThan(Date.now());
    const refreshes = sandbox.install.refreshes;
    const id = await send(installed.endpointId, 'expiring');
    await waitFor(async () => (await eventRow(services(), id)).state === 'delivered', 'delivered');
    expect(sandbox.install.refreshes).toBe(refreshes + 1);
    const after = await services().db.get<{ access_token_enc: string }>(
      'SELECT access_token_enc FROM shops WHERE id = ?',
      [installed.shopId],
    );
    const newToken = services().secrets.decrypt(after?.access_token_enc as string);
    expect(newToken).not.toBe(services().secrets.decrypt(before?.access_token_enc as string));
    const { createHash } = await import('node:crypto');
    const last = sandbox.triggers.filter((t) => t.shop === installed.domain).at(-1);
    expect(last?.tokenSha256).toBe(createHash('sha256').update(newToken).digest('hex').slice(0, 12));
  });
});
