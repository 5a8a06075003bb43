// A bad-input suite: well over 100 malformed requests (headers, bodies,
// encodings, sizes, ids, methods). None may produce a 5xx; every one must be
// answered with problem+json carrying a code from the error catalog.
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ERROR_CATALOG } from '../../api/src/errors/catalog.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { hmacHex, newEndpoint, newShop } from './helpers.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ worker: false });
});
afterAll(async () => {
  await server?.close();
});

interface Case {
  name: string;
  method?: string;
  path: string;
  body?: string | Uint8Array;
  headers?: Record<string, string>;
  expect?: string;
}

it('≥100 malformed requests: zero 5xx, each answered with a catalog code', async () => {
  const services = server.runtime.services;
  const shop = await newShop(services);
  const order = await newEndpoint(services, shop.id, {
    authMode: 'hmac_sha256',
    triggerVariant: 'external_order_event',
    mapping: {
      resourceIdPath: 'order.id',
      relatedResourceIdPath: 'customer.id',
      requiredPaths: ['type', 'meta.source'],
    },
  });
  const stripeEp = await newEndpoint(services, shop.id, { authMode: 'stripe' });
  const sw = await newEndpoint(services, shop.id, { authMode: 'standard_webhooks' });
  const p = (id: string) => `/in/${id}`;
  const signed = (body: string | Uint8Array, extra: Record<string, string> = {}) => ({
    'content-type': 'application/json',
    'x-flowport-signature': `sha256=${hmacHex(order.secret, typeof body === 'string' ? body : Buffer.from(body).toString('latin1'))}`,
    ...extra,
  });
  const signedBytes = (body: Uint8Array) => ({
    'content-type': 'application/json',
    'x-flowport-signature': `sha256=${require_hmac(order.secret, body)}`,
  });
  const good = (o: unknown) =>
    JSON.stringify({ type: 't', meta: { source: 's' }, order: { id: 1001 }, ...(o as object) });
  const cases: Case[] = [];

  // ---- ids and methods
  for (const id of [
    'ep_',
    'ep_x',
    'EP_01M80XYGFRWK8CNT40K6GX89J8',
    'ep_00000000000000000000000000',
    'evt_01m80xygfrwk8cnt40k6gx89j8',
    'ep_01m80xygfrwk8cnt40k6gx89j',
    'ep_%00',
    'x'.repeat(500),
    'ep_01m80xygfrwk8cnt40k6gx89j8.json',
    '%F0%9F%92%A9',
  ]) {
    cases.push({
      name: `id ${id.slice(0, 20)}`,
      path: p(id),
      body: '{}',
      headers: { 'content-type': 'application/json' },
      // A NUL in any path is refused first, by every route's input guard (http/input-guard.ts).
      expect: id.includes('%00') ? 'invalid_characters' : 'not_found',
    });
  }
  cases.push({
    name: 'nested path',
    path: `${p(order.endpoint.id)}/extra`,
    body: '{}',
    headers: { 'content-type': 'application/json' },
    expect: 'not_found',
  });
  for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'])
    cases.push({
      name: `method ${method}`,
      method,
      path: p(order.endpoint.id),
      body: method === 'GET' ? undefined : '{}',
    });

  // ---- signature header shapes (hmac_sha256, hex with sha256= prefix)
  const body = good({});
  const hex = hmacHex(order.secret, body);
  for (const [n, v] of [
    ['missing', null],
    ['empty', ''],
    ['prefix only', 'sha256='],
    ['no prefix', hex],
    ['wrong prefix', `sha1=${hex}`],
    ['uppercase prefix', `SHA256=${hex}`],
    ['short', `sha256=${hex.slice(0, 63)}`],
    ['long', `sha256=${hex}0`],
    ['non-hex', `sha256=${'z'.repeat(64)}`],
    ['base64', `sha256=${Buffer.from(hex, 'hex').toString('base64')}`],
    ['zeros', `sha256=${'0'.repeat(64)}`],
    ['two sigs', `sha256=${'0'.repeat(64)},sha256=${hex}x`],
    ['spaces inside', `sha256= ${hex.slice(1)}`],
    ['latin1 junk', 'sha256=\u00e9\u00e8'],
    ['huge', `sha256=${'a'.repeat(8000)}`],
    ['wrong secret', `sha256=${hmacHex('nope', body)}`],
    ['sig of other body', `sha256=${hmacHex(order.secret, `${body} `)}`],
  ] as const) {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (v !== null) headers['x-flowport-signature'] = v;
    cases.push({ name: `sig ${n}`, path: p(order.endpoint.id), body, headers });
  }

  // ---- bodies that are signed correctly but not acceptable JSON objects
  for (const b of [
    '',
    ' ',
    '{',
    '}',
    '{"a":',
    '{"a":1,}',
    "{'a':1}",
    '{a:1}',
    'nul',
    'NaN',
    '[1,2',
    '{"a":1}{"b":2}',
    '{"a":"\\x"}',
    '{"a":01}',
    '\u0000',
    '<xml/>',
    'a=1&b=2',
    '{"a":1',
    '"unterminated',
    '{"a":tru}',
  ]) {
    cases.push({
      name: `json ${JSON.stringify(b).slice(0, 20)}`,
      path: p(order.endpoint.id),
      body: b,
      headers: signed(b),
      expect: 'invalid_json',
    });
  }
  for (const b of ['[]', '[{"type":"t"}]', '"a string"', '42', 'null', 'true', 'false', '-1.5e3']) {
    cases.push({
      name: `non-object ${b}`,
      path: p(order.endpoint.id),
      body: b,
      headers: signed(b),
      expect: 'body_not_object',
    });
  }
  // invalid UTF-8 byte sequences
  for (const bytes of [
    [0xff],
    [0xc3, 0x28],
    [0xe2, 0x28, 0xa1],
    [0xf0, 0x28, 0x8c, 0xbc],
    [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d],
    [0xed, 0xa0, 0x80],
  ]) {
    const u8 = new Uint8Array(bytes);
    cases.push({
      name: `bytes ${bytes.join(',')}`,
      path: p(order.endpoint.id),
      body: u8,
      headers: signedBytes(u8),
      expect: 'invalid_json',
    });
  }
  // deeply nested JSON
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  cases.push({ name: 'deep array', path: p(order.endpoint.id), body: deep, headers: signed(deep) });
  const deepObj = `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`;
  cases.push({ name: 'deep object', path: p(order.endpoint.id), body: deepObj, headers: signed(deepObj) });

  // ---- mapping
  for (const [n, o, code] of [
    ['resource missing', { order: undefined }, 'required_path_missing'],
    ['resource null', { order: { id: null } }, 'required_path_missing'],
    ['resource empty', { order: { id: '' } }, 'required_path_missing'],
    ['resource negative', { order: { id: -5 } }, 'invalid_resource_id'],
    ['resource zero', { order: { id: 0 } }, 'invalid_resource_id'],
    ['resource float', { order: { id: 1.5 } }, 'invalid_resource_id'],
    ['resource huge', { order: { id: 1e300 } }, 'invalid_resource_id'],
    ['resource text', { order: { id: 'abc' } }, 'invalid_resource_id'],
    ['resource leading zero', { order: { id: '0123' } }, 'invalid_resource_id'],
    ['resource gid customer', { order: { id: 'gid://shopify/Customer/1' } }, 'invalid_resource_id'],
    ['resource gid malformed', { order: { id: 'gid://shopify/Order/' } }, 'invalid_resource_id'],
    ['resource gid other host', { order: { id: 'gid://other/Order/1' } }, 'invalid_resource_id'],
    ['resource object', { order: { id: { n: 1 } } }, 'invalid_resource_id'],
    ['resource array', { order: { id: [1] } }, 'invalid_resource_id'],
    ['resource bool', { order: { id: true } }, 'invalid_resource_id'],
    ['related invalid', { customer: { id: 'x' } }, 'invalid_resource_id'],
    ['required type missing', { type: undefined }, 'required_path_missing'],
    ['required nested missing', { meta: {} }, 'required_path_missing'],
    ['required nested null', { meta: { source: null } }, 'required_path_missing'],
    ['required parent scalar', { meta: 'x' }, 'required_path_missing'],
    // A NUL would fail on PostgreSQL's text columns; any control character is refused (issue 24).
    ['event type NUL', { type: 'order\u0000paid' }, 'invalid_characters'],
    ['event type only NUL', { type: '\u0000' }, 'invalid_characters'],
    ['event type escape', { type: 'x\u001b[31m' }, 'invalid_characters'],
    ['event type DEL', { type: 'a\u007f' }, 'invalid_characters'],
  ] as const) {
    const b = good(o);
    cases.push({ name: `mapping ${n}`, path: p(order.endpoint.id), body: b, headers: signed(b), expect: code });
  }

  // ---- media types
  for (const ct of [
    'text/plain',
    'application/xml',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/json; charset=latin1',
    'application/json; charset=utf-16',
    'text/html',
    'application/jsonp',
    'image/png',
    '*/*',
  ]) {
    cases.push({
      name: `ct ${ct}`,
      path: p(order.endpoint.id),
      body,
      headers: { ...signed(body), 'content-type': ct },
      expect: 'unsupported_media_type',
    });
  }

  // ---- sizes
  const big = JSON.stringify({ ...JSON.parse(body), pad: 'x'.repeat(1024 * 1024) });
  cases.push({
    name: 'over 1 MiB',
    path: p(order.endpoint.id),
    body: big,
    headers: signed(big),
    expect: 'payload_too_large',
  });
  const flowBig = JSON.stringify({ ...JSON.parse(body), pad: 'x'.repeat(60_000) });
  cases.push({
    name: 'over Flow limit',
    path: p(order.endpoint.id),
    body: flowBig,
    headers: signed(flowBig),
    expect: 'flow_payload_too_large',
  });
  const escBig = JSON.stringify({ ...JSON.parse(body), pad: '"'.repeat(30_000) });
  cases.push({
    name: 'over Flow limit after escaping',
    path: p(order.endpoint.id),
    body: escBig,
    headers: signed(escBig),
    expect: 'flow_payload_too_large',
  });

  // ---- stripe header shapes
  const sp = '{"id":"evt_1","type":"x"}';
  const stripe = new Stripe('sk_test_placeholder');
  const real = stripe.webhooks.generateTestHeaderString({ payload: sp, secret: stripeEp.secret });
  const v1 = /v1=([0-9a-f]+)/.exec(real)?.[1] ?? '';
  const nowS = Math.floor(Date.now() / 1000);
  for (const [n, h] of [
    ['empty', ''],
    ['garbage', 'garbage'],
    ['no t', `v1=${v1}`],
    ['t text', `t=abc,v1=${v1}`],
    ['t ms', `t=${Date.now()},v1=${v1}`],
    ['t negative', `t=-1,v1=${v1}`],
    ['no v1', `t=${nowS}`],
    ['v0 only', `t=${nowS},v0=${v1}`],
    ['v1 short', `t=${nowS},v1=abc`],
    ['v1 empty', `t=${nowS},v1=`],
    ['equals soup', '=,=,='],
    ['wrong t', real.replace(/t=\d+/, `t=${nowS - 5}`)],
  ] as const) {
    cases.push({
      name: `stripe ${n}`,
      path: p(stripeEp.endpoint.id),
      body: sp,
      headers: { 'content-type': 'application/json', 'stripe-signature': h },
    });
  }

  // ---- standard webhooks header shapes
  const wh = new Webhook(sw.secret);
  const now = new Date();
  const sig = wh.sign('msg_1', now, sp);
  const ts = String(Math.floor(now.getTime() / 1000));
  for (const [n, h] of [
    ['no headers', {}],
    ['no id', { 'webhook-timestamp': ts, 'webhook-signature': sig }],
    ['no ts', { 'webhook-id': 'msg_1', 'webhook-signature': sig }],
    ['ts iso', { 'webhook-id': 'msg_1', 'webhook-timestamp': now.toISOString(), 'webhook-signature': sig }],
    ['ts future', { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Number(ts) + 3600), 'webhook-signature': sig }],
    ['sig no version', { 'webhook-id': 'msg_1', 'webhook-timestamp': ts, 'webhook-signature': sig.slice(3) }],
    ['sig v2', { 'webhook-id': 'msg_1', 'webhook-timestamp': ts, 'webhook-signature': `v2,${sig.slice(3)}` }],
    ['sig v1a', { 'webhook-id': 'msg_1', 'webhook-timestamp': ts, 'webhook-signature': `v1a,${sig.slice(3)}` }],
    ['sig bad base64', { 'webhook-id': 'msg_1', 'webhook-timestamp': ts, 'webhook-signature': 'v1,!!!!' }],
    ['other id', { 'webhook-id': 'msg_2', 'webhook-timestamp': ts, 'webhook-signature': sig }],
    ['mixed svix/webhook', { 'svix-id': 'msg_1', 'svix-timestamp': ts, 'webhook-signature': sig }],
  ] as const) {
    cases.push({
      name: `sw ${n}`,
      path: p(sw.endpoint.id),
      body: sp,
      headers: { 'content-type': 'application/json', ...h },
    });
  }

  expect(cases.length).toBeGreaterThanOrEqual(100);
  const failures: string[] = [];
  for (const c of cases) {
    const res = await fetch(`${server.url}${c.path}`, { method: c.method ?? 'POST', body: c.body, headers: c.headers });
    const text = await res.text();
    let code: string | undefined;
    try {
      code = (JSON.parse(text) as { code?: string }).code;
    } catch {
      code = undefined;
    }
    const ok =
      res.status < 500 &&
      res.status >= 400 &&
      (res.headers.get('content-type') ?? '').startsWith('application/problem+json') &&
      code !== undefined &&
      Object.hasOwn(ERROR_CATALOG, code) &&
      (c.expect === undefined || c.expect === code);
    if (!ok)
      failures.push(
        `${c.name}: ${res.status} ${code ?? text.slice(0, 80)}${c.expect ? ` (expected ${c.expect})` : ''}`,
      );
  }
  expect(failures).toEqual([]);
  const n = await services.db.get<{ n: number }>(
    "SELECT COUNT(*) AS n FROM events WHERE shop_id = ? AND state = 'queued'",
    [shop.id],
  );
  expect(Number(n?.n)).toBe(0);
}, 120_000);

/** HMAC over raw bytes (not a JS string), for the invalid-UTF-8 cases. */
function require_hmac(secret: string, body: Uint8Array): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}
