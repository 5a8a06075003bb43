// Shopify webhooks bind to the signed body (issue 40, defects 4 and 10), over real HTTP on
// loopback against the suite's store (SQLite or PostgreSQL): the shop an app/uninstalled or
// privacy webhook acts on comes from the signed payload and must match X-Shopify-Shop-Domain; a
// topic header that does not fit the payload is refused; the webhook id is remembered per shop
// and topic only after the HMAC passed, once, even under 20 simultaneous deliveries; a Flow
// lifecycle signal dated in the future is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorDocsPath } from '../../api/src/docs-paths.ts';
import { SHOPIFY_APP_PATHS, signWebhookBody } from '../../api/src/lib/shopify-app.ts';
import { createShop } from '../../api/src/services/shops.ts';
import { COMPLIANCE_WEBHOOK_PATH } from '../../api/src/shopify/compliance.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { uniqueShop } from './helpers.ts';

const SECRET = 'shpss_webhook_binding_secret_0123456789';
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    worker: false,
    bootstrapSandbox: false,
    env: { FLOWPORT_SHOPIFY_CLIENT_ID: 'binding-client', FLOWPORT_SHOPIFY_CLIENT_SECRET: SECRET },
  });
});
afterAll(async () => {
  await server?.close();
});

const db = () => server.runtime.services.db;

async function connectedShop(prefix: string): Promise<{ id: string; domain: string }> {
  const domain = uniqueShop(prefix);
  const shop = await createShop(server.runtime.services, { domain, sandbox: true, accessToken: 'shpat_binding' });
  return { id: shop.id, domain };
}

const statusOf = async (id: string) =>
  (await db().get<{ connection_status: string }>('SELECT connection_status FROM shops WHERE id = ?', [id]))
    ?.connection_status;

const auditCount = async (shopId: string, action: string) =>
  Number(
    (
      await db().get<{ n: number | string }>('SELECT COUNT(*) AS n FROM audit_log WHERE shop_id = ? AND action = ?', [
        shopId,
        action,
      ])
    )?.n,
  );

function shopPayload(domain: string) {
  return { id: 1, name: domain.split('.')[0], domain, myshopify_domain: domain };
}

function uninstall(
  payload: unknown,
  headers: { shop?: string | null; id?: string; topic?: string; hmac?: string } = {},
): Promise<Response> {
  const body = JSON.stringify(payload);
  const h: Record<string, string> = {
    'content-type': 'application/json',
    'x-shopify-topic': headers.topic ?? 'app/uninstalled',
    'x-shopify-hmac-sha256': headers.hmac ?? signWebhookBody(SECRET, body),
    'x-shopify-webhook-id': headers.id ?? `wh-${Math.random().toString(36).slice(2)}`,
  };
  if (headers.shop !== null)
    h['x-shopify-shop-domain'] = headers.shop ?? (payload as { myshopify_domain: string }).myshopify_domain;
  return fetch(`${server.url}${SHOPIFY_APP_PATHS.appUninstalledWebhook}`, { method: 'POST', headers: h, body });
}

function privacy(
  topic: string,
  payload: { shop_domain: string } & Record<string, unknown>,
  headers: { shop?: string | null; id?: string } = {},
): Promise<Response> {
  const body = JSON.stringify(payload);
  const h: Record<string, string> = {
    'content-type': 'application/json',
    'x-shopify-topic': topic,
    'x-shopify-hmac-sha256': signWebhookBody(SECRET, body),
    'x-shopify-webhook-id': headers.id ?? `wh-${Math.random().toString(36).slice(2)}`,
  };
  if (headers.shop !== null) h['x-shopify-shop-domain'] = headers.shop ?? payload.shop_domain;
  return fetch(`${server.url}${COMPLIANCE_WEBHOOK_PATH}`, { method: 'POST', headers: h, body });
}

async function expectProblem(res: Response, status: number, code: string): Promise<void> {
  const p = (await res.json()) as { code: string; docs_url?: string; type?: string };
  expect(res.status, JSON.stringify(p)).toBe(status);
  expect(p.code).toBe(code);
  expect(p.docs_url ?? p.type).toContain(errorDocsPath(code as never));
}

const dataRequest = (domain: string) => ({
  shop_id: 1,
  shop_domain: domain,
  orders_requested: [1],
  customer: { id: 2, email: 'a@example.com', phone: null },
  data_request: { id: 3 },
});
const customersRedact = (domain: string) => ({
  shop_id: 1,
  shop_domain: domain,
  customer: { id: 2, email: 'a@example.com', phone: null },
  orders_to_redact: [1],
});
const shopRedact = (domain: string) => ({ shop_id: 1, shop_domain: domain });

describe('app/uninstalled acts on the shop its signed body names', () => {
  it('refuses a body signed for one store sent with another store in X-Shopify-Shop-Domain; both stay installed', async () => {
    const a = await connectedShop('bind-a');
    const b = await connectedShop('bind-b');
    await expectProblem(
      await uninstall(shopPayload(a.domain), { shop: b.domain }),
      400,
      'shopify_webhook_shop_mismatch',
    );
    expect(await statusOf(a.id)).toBe('connected');
    expect(await statusOf(b.id)).toBe('connected');
    expect(await auditCount(b.id, 'shop.uninstall')).toBe(0);
  });

  it('takes the shop from the body (myshopify_domain) when X-Shopify-Shop-Domain is absent', async () => {
    const a = await connectedShop('bind-nohdr');
    const res = await uninstall(shopPayload(a.domain), { shop: null });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, duplicate: false });
    expect(await statusOf(a.id)).toBe('uninstalled');
  });

  it('refuses a signed privacy payload sent as app/uninstalled (no shop resource in the body)', async () => {
    const a = await connectedShop('bind-shape');
    await expectProblem(
      await uninstall(shopRedact(a.domain), { shop: a.domain }),
      400,
      'shopify_webhook_topic_mismatch',
    );
    expect(await statusOf(a.id)).toBe('connected');
  });

  it("an id already used for another store's signed body still works for this store (ids are per shop)", async () => {
    const a = await connectedShop('burn-a');
    const b = await connectedShop('burn-b');
    const id = `wh-burn-${Math.random().toString(36).slice(2)}`;
    // Unsigned first: nothing is remembered.
    const forged = await uninstall(shopPayload(b.domain), { id, hmac: signWebhookBody('wrong', 'x') });
    expect(forged.status).toBe(401);
    // A body signed for store A (e.g. replayed) with store B's coming webhook id.
    expect(await (await uninstall(shopPayload(a.domain), { id })).json()).toEqual({ ok: true, duplicate: false });
    const real = await uninstall(shopPayload(b.domain), { id });
    expect(await real.json()).toEqual({ ok: true, duplicate: false });
    expect(await statusOf(b.id)).toBe('uninstalled');
  });

  it('20 simultaneous deliveries of one webhook id: exactly one takes effect', async () => {
    const a = await connectedShop('race-un');
    const id = `wh-race-${Math.random().toString(36).slice(2)}`;
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        uninstall(shopPayload(a.domain), { id }).then(async (r) => ({
          status: r.status,
          body: (await r.json()) as { duplicate?: boolean },
        })),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(answers.filter((r) => r.body.duplicate === false)).toHaveLength(1);
    expect(await auditCount(a.id, 'shop.uninstall')).toBe(1);
  });
});

describe('privacy webhooks act on the signed shop and the signed shape', () => {
  it('refuses a signed data request or customer redact relabelled shop/redact; the shop keeps its token', async () => {
    const a = await connectedShop('relabel');
    for (const payload of [dataRequest(a.domain), customersRedact(a.domain)])
      await expectProblem(await privacy('shop/redact', payload), 400, 'shopify_webhook_topic_mismatch');
    await expectProblem(
      await privacy('customers/redact', dataRequest(a.domain)),
      400,
      'shopify_webhook_topic_mismatch',
    );
    await expectProblem(await privacy('customers/redact', shopRedact(a.domain)), 400, 'shopify_webhook_topic_mismatch');
    await expectProblem(
      await privacy('customers/data_request', shopRedact(a.domain)),
      400,
      'shopify_webhook_topic_mismatch',
    );
    const row = await db().get<{ connection_status: string; access_token_enc: string | null }>(
      'SELECT connection_status, access_token_enc FROM shops WHERE id = ?',
      [a.id],
    );
    expect(row?.connection_status).toBe('connected');
    expect(row?.access_token_enc).toBeTruthy();
    expect(await auditCount(a.id, 'shopify.shop_redact')).toBe(0);
    // Each topic with its own shape is taken.
    for (const [topic, payload] of [
      ['customers/data_request', dataRequest(a.domain)],
      ['customers/redact', customersRedact(a.domain)],
    ] as const)
      expect((await privacy(topic, payload)).status).toBe(200);
  });

  it('refuses a payload for one store sent with another store in X-Shopify-Shop-Domain', async () => {
    const a = await connectedShop('priv-a');
    const b = await connectedShop('priv-b');
    await expectProblem(
      await privacy('shop/redact', shopRedact(a.domain), { shop: b.domain }),
      400,
      'shopify_webhook_shop_mismatch',
    );
    expect(await statusOf(a.id)).toBe('connected');
    expect(await statusOf(b.id)).toBe('connected');
  });

  it('20 simultaneous deliveries of one shop/redact webhook id: exactly one takes effect', async () => {
    const a = await connectedShop('race-priv');
    const id = `wh-race-${Math.random().toString(36).slice(2)}`;
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        privacy('shop/redact', shopRedact(a.domain), { id }).then(async (r) => ({
          status: r.status,
          body: (await r.json()) as { duplicate?: boolean },
        })),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(answers.filter((r) => r.body.duplicate !== true)).toHaveLength(1);
    expect(await auditCount(a.id, 'shopify.shop_redact')).toBe(1);
  });
});

describe('Flow lifecycle signal from the future', () => {
  const signal = (domain: string, timestamp: string, enabled: boolean) =>
    JSON.stringify({
      flow_trigger_definition_id: 'external-event',
      has_enabled_flow: enabled,
      shop_id: 1,
      shopify_domain: domain,
      timestamp,
    });
  const post = (body: string) =>
    fetch(`${server.url}${SHOPIFY_APP_PATHS.flowLifecycle}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-shopify-hmac-sha256': signWebhookBody(SECRET, body) },
      body,
    });

  it('refuses a signed signal dated year 9999 (stores nothing), so a later real signal still wins', async () => {
    const domain = uniqueShop('future');
    await expectProblem(
      await post(signal(domain, '9999-12-31T00:00:00Z', false)),
      400,
      'shopify_lifecycle_timestamp_future',
    );
    await expectProblem(
      await post(signal(domain, new Date(Date.now() + 60 * 60_000).toISOString(), false)),
      400,
      'shopify_lifecycle_timestamp_future',
    );
    expect(await db().get('SELECT 1 AS x FROM flow_trigger_lifecycle WHERE shop_domain = ?', [domain])).toBeUndefined();
    // A little clock skew is fine.
    const skewed = await post(signal(domain, new Date(Date.now() + 60_000).toISOString(), false));
    expect(skewed.status).toBe(200);
    const now = await post(signal(domain, new Date(Date.now() + 120_000).toISOString(), true));
    expect(now.status).toBe(200);
    const row = await db().get<{ has_enabled_flow: number }>(
      'SELECT has_enabled_flow FROM flow_trigger_lifecycle WHERE shop_domain = ?',
      [domain],
    );
    expect(Number(row?.has_enabled_flow)).toBe(1);
  });
});
