// Shopify's privacy webhooks (customers/data_request, customers/redact, shop/redact) over real
// HTTP on loopback against a real store: HMAC over the raw bytes with the app's client secret,
// purges that leave metadata, audit entries without customer data, other shops untouched.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrant } from '../../api/src/auth/grants.ts';
import { COMPLIANCE_WEBHOOK_PATH } from '../../api/src/shopify/compliance.ts';
import { errorDocsPath } from '../../api/src/docs-paths.ts';
import { insertMany } from '../../api/src/store/db.ts';
import { eventRow, insertEvent, makeShop } from '../handoff/helpers.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';

const SECRET = 'shpss_test_client_secret_0123456789';
const EMAIL = 'Jane.Doe@example.com';
const PHONE = '+15550001111';

let server: TestServer;
const logged: string[] = [];
const originals = { log: console.log, error: console.error, warn: console.warn };

beforeAll(async () => {
  for (const k of ['log', 'error', 'warn'] as const) {
    console[k] = (...args: unknown[]) => {
      logged.push(args.map(String).join(' '));
      originals[k](...args);
    };
  }
  server = await startTestServer({
    worker: false,
    bootstrapSandbox: false,
    env: { FLOWPORT_SHOPIFY_CLIENT_SECRET: SECRET, FLOWPORT_LOG_LEVEL: 'info' },
  });
});

afterAll(async () => {
  Object.assign(console, originals);
  await server?.close();
});

function sign(body: string, secret = SECRET): string {
  return createHmac('sha256', secret).update(body).digest('base64');
}

async function send(
  topic: string,
  payload: unknown,
  opts: { hmac?: string | null; webhookId?: string; url?: string; raw?: string } = {},
): Promise<Response> {
  const body = opts.raw ?? JSON.stringify(payload);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-shopify-topic': topic,
    'x-shopify-webhook-id': opts.webhookId ?? `wh-${Math.random().toString(36).slice(2)}`,
  };
  const hmac = opts.hmac === undefined ? sign(body) : opts.hmac;
  if (hmac !== null) headers['x-shopify-hmac-sha256'] = hmac;
  return fetch(`${opts.url ?? server.url}${COMPLIANCE_WEBHOOK_PATH}`, { method: 'POST', headers, body });
}

async function twoShops() {
  const a = await makeShop(server.runtime.services);
  const b = await makeShop(server.runtime.services);
  return { a, b };
}

async function auditFor(shopId: string | null, action: string) {
  return server.runtime.services.db.all<{ details_json: string; actor_name: string; target_id: string | null }>(
    `SELECT details_json, actor_name, target_id FROM audit_log WHERE ${shopId ? 'shop_id = ?' : 'shop_id IS NULL'} AND action = ? ORDER BY seq`,
    shopId ? [shopId, action] : [action],
  );
}

describe('privacy webhooks: verification', () => {
  it('refuses a missing or wrong HMAC with 401 problem+json and changes nothing', async () => {
    const { a } = await twoShops();
    const ev = await insertEvent(server.runtime.services, a.shop.id, a.endpointId, { body: '{"x":1}' });
    const payload = { shop_id: 1, shop_domain: a.shop.domain };
    for (const hmac of [null, sign(JSON.stringify(payload), 'wrong-secret'), 'not base64!', '']) {
      const res = await send('shop/redact', payload, { hmac });
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      const p = (await res.json()) as { code: string; docs_url: string };
      expect(p.code).toBe('shopify_webhook_unverified');
      expect(p.docs_url).toContain(errorDocsPath('shopify_webhook_unverified'));
      expect(JSON.stringify(p)).not.toContain(SECRET);
    }
    expect((await eventRow(server.runtime.services, ev)).body).toBe('{"x":1}');
    const shop = await server.runtime.services.db.get<{ connection_status: string; access_token_enc: string | null }>(
      'SELECT connection_status, access_token_enc FROM shops WHERE id = ?',
      [a.shop.id],
    );
    expect(shop?.connection_status).toBe('connected');
    expect(shop?.access_token_enc).not.toBeNull();
    expect(await auditFor(a.shop.id, 'shopify.shop_redact')).toHaveLength(0);
  });

  it('verifies the raw bytes: the same JSON re-serialised does not pass', async () => {
    const raw = '{ "shop_id": 1,  "shop_domain": "nobody.myshopify.com" }';
    const res = await send('shop/redact', null, { raw, hmac: sign(JSON.stringify(JSON.parse(raw))) });
    expect(res.status).toBe(401);
    expect((await send('shop/redact', null, { raw })).status).toBe(200);
  });

  it('answers an unknown topic with 400 and malformed JSON with invalid_json', async () => {
    const bad = await send('orders/create', { shop_domain: 'x.myshopify.com' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { code: string }).code).toBe('shopify_webhook_topic_unknown');
    const broken = await send('shop/redact', null, { raw: '{"shop_domain": ' });
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as { code: string }).code).toBe('invalid_json');
  });

  it('refuses everything when no client secret is configured (sandbox), and caps the body', async () => {
    const bare = await startTestServer({
      worker: false,
      bootstrapSandbox: false,
      env: { FLOWPORT_INTAKE_MAX_BODY_BYTES: '1024' },
    });
    try {
      const res = await send('shop/redact', { shop_domain: 'x.myshopify.com' }, { url: bare.url });
      expect(res.status).toBe(401);
      const p = (await res.json()) as { code: string; detail: string };
      expect(p.code).toBe('shopify_webhook_unverified');
      expect(p.detail).toContain('FLOWPORT_SHOPIFY_CLIENT_SECRET');
      // The body is read with the intake cap before anything else.
      const big = await send(
        'shop/redact',
        { shop_domain: 'x.myshopify.com', pad: 'x'.repeat(2048) },
        { url: bare.url },
      );
      expect(big.status).toBe(413);
      expect(((await big.json()) as { code: string }).code).toBe('payload_too_large');
    } finally {
      await bare.close();
    }
  });
});

describe('privacy webhooks: effects', () => {
  it('shop/redact purges every body of that shop, removes its token, disconnects it; other shops untouched', async () => {
    const { a, b } = await twoShops();
    const s = server.runtime.services;
    const queued = await insertEvent(s, a.shop.id, a.endpointId, { body: '{"q":1}' });
    const delivered = await insertEvent(s, a.shop.id, a.endpointId, { body: '{"d":1}', state: 'delivered' });
    const other = await insertEvent(s, b.shop.id, b.endpointId, { body: '{"o":1}' });
    const before = await eventRow(s, queued);
    const res = await send(
      'shop/redact',
      { shop_id: 954889, shop_domain: a.shop.domain.toUpperCase() },
      { webhookId: 'wh-shop-1' },
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ received: true, topic: 'shop/redact', events: 2 });
    for (const id of [queued, delivered]) {
      const row = await eventRow(s, id);
      expect(row.body).toBeNull();
      expect(row.retention_state).toBe('erased');
    }
    const after = await eventRow(s, queued);
    expect([after.body_sha256, after.body_size]).toEqual([before.body_sha256, before.body_size]);
    // Not yet delivered: it ends failed instead of reaching Flow without its data; the delivered one keeps its state.
    expect([after.state, after.support_code, after.error_code]).toEqual(['failed', 'FP-H-ERAS', 'event_erased']);
    expect((await eventRow(s, delivered)).state).toBe('delivered');
    expect((await eventRow(s, other)).body).toBe('{"o":1}');
    const shops = await s.db.all<{ id: string; connection_status: string; access_token_enc: string | null }>(
      'SELECT id, connection_status, access_token_enc FROM shops WHERE id IN (?, ?)',
      [a.shop.id, b.shop.id],
    );
    const byId = new Map(shops.map((r) => [r.id, r]));
    expect(byId.get(a.shop.id)).toMatchObject({ connection_status: 'disconnected', access_token_enc: null });
    expect(byId.get(b.shop.id)?.connection_status).toBe('connected');
    expect(byId.get(b.shop.id)?.access_token_enc).not.toBeNull();
    const audit = await auditFor(a.shop.id, 'shopify.shop_redact');
    expect(audit).toHaveLength(1);
    expect(audit[0]?.target_id).toBe('wh-shop-1');
    expect(JSON.parse(audit[0]?.details_json ?? '{}')).toMatchObject({ events_purged: 2, access_token_removed: true });
    // Shopify retries the same webhook: acknowledged, nothing recorded twice.
    const again = await send(
      'shop/redact',
      { shop_id: 954889, shop_domain: a.shop.domain },
      { webhookId: 'wh-shop-1' },
    );
    expect(again.status).toBe(200);
    expect(await auditFor(a.shop.id, 'shopify.shop_redact')).toHaveLength(1);
  });

  it('shop/redact for a shop Flowport does not know is acknowledged', async () => {
    const res = await send('shop/redact', { shop_id: 1, shop_domain: 'never-installed.myshopify.com' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ shop_known: false, events: 0 });
  });

  it("customers/redact purges that shop's events naming the customer, its orders, email or phone", async () => {
    const { a, b } = await twoShops();
    const s = server.runtime.services;
    const byCustomer = await insertEvent(s, a.shop.id, a.endpointId, { resourceId: 'gid://shopify/Customer/191167' });
    const byOrder = await insertEvent(s, a.shop.id, a.endpointId, { resourceId: '299938' });
    const byRelated = await insertEvent(s, a.shop.id, a.endpointId, { body: '{"r":1}' });
    await s.db.run('UPDATE events SET related_resource_id = ? WHERE id = ?', ['gid://shopify/Order/299939', byRelated]);
    const byEmail = await insertEvent(s, a.shop.id, a.endpointId, {
      body: JSON.stringify({ contact: EMAIL.toLowerCase() }),
      state: 'delivered',
    });
    const byPhone = await insertEvent(s, a.shop.id, a.endpointId, { body: JSON.stringify({ tel: PHONE }) });
    const unrelated = await insertEvent(s, a.shop.id, a.endpointId, {
      body: '{"contact":"someone@example.com"}',
      resourceId: '191168',
    });
    const otherShop = await insertEvent(s, b.shop.id, b.endpointId, {
      body: JSON.stringify({ contact: EMAIL }),
      resourceId: '191167',
    });
    const payload = {
      shop_id: 954889,
      shop_domain: a.shop.domain,
      customer: { id: 191167, email: EMAIL, phone: PHONE },
      orders_to_redact: [299938, 299939],
    };
    const res = await send('customers/redact', payload);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(JSON.parse(text)).toMatchObject({ topic: 'customers/redact', events: 5 });
    expect(text).not.toContain(EMAIL);
    for (const id of [byCustomer, byOrder, byRelated, byEmail, byPhone]) {
      expect(await eventRow(s, id)).toMatchObject({ body: null, retention_state: 'erased' });
    }
    expect((await eventRow(s, unrelated)).body).not.toBeNull();
    expect((await eventRow(s, otherShop)).body).not.toBeNull();
    // Erased before delivery: failed, never handed to Flow; delivered and unrelated events keep their states.
    for (const id of [byCustomer, byOrder, byRelated, byPhone]) {
      expect(await eventRow(s, id)).toMatchObject({ state: 'failed', support_code: 'FP-H-ERAS' });
    }
    expect((await eventRow(s, byEmail)).state).toBe('delivered');
    // Reads and replay say the body was erased, not that retention ran out.
    const reader = await createGrant(s, {
      shopId: a.shop.id,
      tier: 'admin_assistant',
      actorKind: 'agent',
      actorName: 'privacy-test',
      expiresInMs: 60_000,
    });
    const auth = { authorization: `Bearer ${reader.token}` };
    const read = (await (await fetch(`${server.url}/agent/v1/events/${byEmail}`, { headers: auth })).json()) as {
      retention_state: string;
      replay: { available: boolean; reason: string };
      timeline: { kind: string; summary: string }[];
    };
    expect([read.retention_state, read.replay.available, read.replay.reason]).toEqual(['erased', false, 'body_erased']);
    expect(read.timeline.filter((t) => t.kind === 'retention').map((t) => t.summary)).toEqual([
      "Payload body erased at Shopify's request (privacy webhook).",
    ]);
    const replay = await fetch(`${server.url}/agent/v1/events/${byEmail}/replay-intents`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ acknowledge_recent_delivery: true }),
    });
    expect([replay.status, ((await replay.json()) as { code: string }).code]).toEqual([410, 'event_erased']);
    expect((await eventRow(s, unrelated)).state).toBe('queued');
    expect((await eventRow(s, otherShop)).state).toBe('queued');
    const audit = await auditFor(a.shop.id, 'shopify.customers_redact');
    expect(audit).toHaveLength(1);
    expect(audit[0]?.actor_name).toMatch(/Shopify/);
    expect(JSON.parse(audit[0]?.details_json ?? '{}')).toMatchObject({
      customer_id: 191167,
      orders: 2,
      events_purged: 5,
    });
    for (const secretish of [EMAIL, EMAIL.toLowerCase(), PHONE])
      expect(audit[0]?.details_json).not.toContain(secretish);
  });

  it('customers/data_request records the request with the count of matching events and changes nothing', async () => {
    const { a } = await twoShops();
    const s = server.runtime.services;
    const one = await insertEvent(s, a.shop.id, a.endpointId, { resourceId: '555' });
    const two = await insertEvent(s, a.shop.id, a.endpointId, { body: JSON.stringify({ email: EMAIL }) });
    await insertEvent(s, a.shop.id, a.endpointId, { body: '{"nothing":true}' });
    const res = await send('customers/data_request', {
      shop_id: 954889,
      shop_domain: a.shop.domain,
      orders_requested: [555],
      customer: { id: 191167, email: EMAIL, phone: PHONE },
      data_request: { id: 9999 },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ topic: 'customers/data_request', events: 2 });
    for (const id of [one, two]) expect((await eventRow(s, id)).body).not.toBeNull();
    const audit = await auditFor(a.shop.id, 'shopify.customers_data_request');
    expect(audit).toHaveLength(1);
    expect(JSON.parse(audit[0]?.details_json ?? '{}')).toMatchObject({ data_request_id: 9999, events_matching: 2 });
    expect(audit[0]?.details_json).not.toContain(EMAIL);
  });

  it('customers/redact matches the customer exactly: whole email, normalised phone, ids on JSON values', async () => {
    const { a } = await twoShops();
    const s = server.runtime.services;
    const ev = (body: unknown, state?: string) =>
      insertEvent(s, a.shop.id, a.endpointId, { body: JSON.stringify(body), ...(state ? { state } : {}) });
    const matched = [
      await ev({ customer: { email: 'JO@Example.com' } }),
      await ev({ billing: { phone: '+1 (555) 000-1111' } }, 'held'),
      await ev({ customer: { id: 191177 } }),
      await ev({ customer_id: '191177' }, 'delivered'),
      await ev({ ref: 'gid://shopify/Customer/191177' }),
      await ev({ lines: [{ order_id: 299977 }] }),
      await ev({ order: { id: '299978' } }),
      await ev({ note: 'gid://shopify/Order/299978' }),
    ];
    const lookAlikes = [
      await ev({ contact: 'mojo@example.com' }),
      await ev({ contact: 'jo@example.com.au' }, 'held'),
      await ev({ note: 'write to jo@example.com please' }),
      await ev({ phone: '+1 555 000 11112' }),
      await ev({ text: 'call 1-555-000-1111 after 5' }),
      await ev({ product_id: 191177, quantity: 299977 }),
      await ev({ order: { id: 2999780 } }),
      await ev({ note: 'gid://shopify/Customer/1911770' }),
      await ev({ 'jo@example.com': true }),
    ];
    await s.db.run("UPDATE events SET body = 'not json jo@example.com' WHERE id = ?", [lookAlikes[0] as string]);
    const res = await send('customers/redact', {
      shop_id: 954889,
      shop_domain: a.shop.domain,
      customer: { id: 191177, email: 'jo@example.com', phone: '+15550001111' },
      orders_to_redact: [299977, 299978],
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ events: matched.length });
    for (const id of matched) expect(await eventRow(s, id)).toMatchObject({ body: null, retention_state: 'erased' });
    for (const id of lookAlikes) {
      const row = await eventRow(s, id);
      expect(row.body).not.toBeNull();
      expect(row.state).not.toBe('failed');
    }
    expect((await eventRow(s, matched[1] as string)).state).toBe('failed');
    expect((await eventRow(s, lookAlikes[1] as string)).state).toBe('held');
  });

  it('a short phone or an empty email names nobody', async () => {
    const { a } = await twoShops();
    const s = server.runtime.services;
    const ids = [
      await insertEvent(s, a.shop.id, a.endpointId, { body: '{"phone":"1","n":1}' }),
      await insertEvent(s, a.shop.id, a.endpointId, { body: '{"phone":"+1 555 0001","email":""}' }),
    ];
    for (const phone of ['1', '+1 555', '555-0001']) {
      const res = await send('customers/redact', {
        shop_domain: a.shop.domain,
        customer: { email: ' ', phone },
        orders_to_redact: [],
      });
      expect(await res.json()).toMatchObject({ events: 0 });
    }
    for (const id of ids) expect((await eventRow(s, id)).body).not.toBeNull();
  });

  it('a customer with 20,000 orders is answered on both customer topics', async () => {
    const { a } = await twoShops();
    const s = server.runtime.services;
    const orders = Array.from({ length: 20_000 }, (_, i) => 7_000_000_000 + i);
    const last = await insertEvent(s, a.shop.id, a.endpointId, { resourceId: String(orders[19_999]) });
    const inBody = await insertEvent(s, a.shop.id, a.endpointId, {
      body: JSON.stringify({ order_id: orders[12_345] }),
    });
    const other = await insertEvent(s, a.shop.id, a.endpointId, { resourceId: '6999999999' });
    const asked = await send('customers/data_request', {
      shop_domain: a.shop.domain,
      customer: { id: 1 },
      orders_requested: orders,
      data_request: { id: 1 },
    });
    expect(asked.status).toBe(200);
    expect(await asked.json()).toMatchObject({ events: 2 });
    const res = await send('customers/redact', {
      shop_domain: a.shop.domain,
      customer: { id: 1 },
      orders_to_redact: orders,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ events: 2 });
    for (const id of [last, inBody]) expect((await eventRow(s, id)).body).toBeNull();
    expect((await eventRow(s, other)).body).not.toBeNull();
  });

  it('erases more matched events than one statement takes (chunks of ids), and only those', async () => {
    const { a } = await twoShops();
    const s = server.runtime.services;
    const body = JSON.stringify({ customer: { email: 'many@example.com' } });
    const rows = Array.from({ length: 5_100 }, (_, i) => [
      `evt_many_${a.shop.id}_${String(i).padStart(5, '0')}`,
      a.shop.id,
      a.endpointId,
      `rcp_many_${a.shop.id}_${i}`,
      i % 2 ? 'delivered' : 'queued',
      body,
      Buffer.byteLength(body),
      'x',
      1,
      1,
      1,
      'test.event',
      'tests',
    ]);
    await s.db.tx((tx) =>
      insertMany(
        tx,
        'events',
        [
          'id',
          'shop_id',
          'endpoint_id',
          'receipt_id',
          'state',
          'body',
          'body_size',
          'body_sha256',
          'received_at',
          'updated_at',
          'config_version',
          'event_type',
          'sender',
        ],
        rows,
      ),
    );
    const kept = await insertEvent(s, a.shop.id, a.endpointId, { body: '{"email":"few@example.com"}' });
    const res = await send('customers/redact', {
      shop_domain: a.shop.domain,
      customer: { id: 5, email: 'MANY@example.com' },
      orders_to_redact: [],
    });
    expect(await res.json()).toMatchObject({ events: 5_100 });
    const left = await s.db.get<{ n: number | string; failed: number | string }>(
      `SELECT COUNT(*) AS n, SUM(CASE WHEN state = 'failed' THEN 1 ELSE 0 END) AS failed
         FROM events WHERE shop_id = ? AND body IS NULL AND retention_state = 'erased'`,
      [a.shop.id],
    );
    expect([Number(left?.n), Number(left?.failed)]).toEqual([5_100, 2_550]);
    expect((await eventRow(s, kept)).body).not.toBeNull();
  });

  it('never writes the client secret to a log', () => {
    expect(logged.join('\n')).not.toContain(SECRET);
  });
});
