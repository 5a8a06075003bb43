// Issue 42, wave 2: a refused request says what was signed for THIS endpoint (the raw body, or
// `{timestamp}.{body}` when a timestamp header is configured, or the preset's format), and, only
// when verification fails, which well-known alternative the sender's signature does match
// (`failure.hint`): the body without the timestamp, a timestamp the endpoint does not expect, an
// expired previous secret, a trailing newline, the other encoding, an unexpected or missing
// prefix, a Standard Webhooks secret used as text. Never the secret, the signature or the body.
// Real HTTP and store (both stores in `npm test`).
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrant } from '../../api/src/auth/grants.ts';
import { AUTH_FAILURE_HINTS } from '../../api/src/errors/auth-failure.ts';
import { VERIFY_ORDER } from '../../api/src/intake/verify.ts';
import { AUTH_MODES } from '../../api/src/store/tables/endpoints.ts';
import { renderAuthCheckOrder, renderAuthFailureHints } from '../../scripts/docs/lib/product-tables.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { hmacB64, hmacHex, newEndpoint, newShop, post } from './helpers.ts';
import { rotateEndpointSecret } from './sender-utils.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({
    worker: false,
    bootstrapSandbox: false,
    configure: (c) => ({ ...c, intake: { ...c.intake, endpointCacheMs: 0 } }),
  });
});
afterAll(async () => {
  await server?.close();
});

const nowS = () => String(Math.floor(Date.now() / 1000));

async function receiptOf(shopId: string, receiptId: string) {
  const g = await createGrant(server.runtime.services, {
    shopId,
    tier: 'observer',
    actorKind: 'agent',
    actorName: 'hints test',
    expiresInMs: 3_600_000,
  });
  const res = await fetch(`${server.url}/agent/v1/receipts/${receiptId}`, {
    headers: { authorization: `Bearer ${g.token}` },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, any>;
}

interface Sent {
  status: number;
  code: string;
  detail: string;
  failure: {
    check: string;
    detail: string;
    hint: { code: string; detail: string } | null;
    tolerance_sec?: number | null;
    timestamp_offset_sec?: number | null;
  };
}

async function send(shopId: string, endpointId: string, body: string, headers: Record<string, string>): Promise<Sent> {
  const res = await post(`${server.url}/in/${endpointId}`, body, headers);
  const receipt = await receiptOf(shopId, String(res.json.receipt_id));
  const text = JSON.stringify(receipt);
  for (const v of Object.values(headers)) if (v.length >= 16) expect(text).not.toContain(v);
  return { status: res.status, code: String(res.json.code), detail: String(res.json.detail), failure: receipt.failure };
}

describe('what was signed, for this endpoint', () => {
  it('a {timestamp}.{body} endpoint says so (sender and receipt), and a body-only one says the raw body', async () => {
    const services = server.runtime.services;
    const shop = await newShop(services);
    const ts = await newEndpoint(services, shop.id, { authMode: 'hmac_sha256', hmac: { timestampHeader: 'x-ts' } });
    const plain = await newEndpoint(services, shop.id, { authMode: 'hmac_sha256' });
    const body = JSON.stringify({ id: 'a1', type: 'shipment.created' });
    const wrong = `sha256=${'0'.repeat(64)}`;

    const a = await send(shop.id, ts.endpoint.id, body, { 'x-ts': nowS(), 'x-flowport-signature': wrong });
    expect(a.code).toBe('signature_mismatch');
    for (const text of [a.detail, a.failure.detail]) {
      expect(text).toContain('{x-ts}.{body}');
      expect(text).not.toMatch(/over the raw body as received|does not match the raw body/);
    }
    const b = await send(shop.id, plain.endpoint.id, body, { 'x-flowport-signature': wrong });
    for (const text of [b.detail, b.failure.detail]) expect(text).toContain('the raw body');
    expect(b.failure.hint).toBeNull();
  });
});

describe('failure.hint: the alternative that matches', () => {
  it('names the body signed without the timestamp, a timestamp not configured, a trailing newline', async () => {
    const services = server.runtime.services;
    const shop = await newShop(services);
    const ts = await newEndpoint(services, shop.id, { authMode: 'hmac_sha256', hmac: { timestampHeader: 'x-ts' } });
    const plain = await newEndpoint(services, shop.id, { authMode: 'hmac_sha256' });
    const body = JSON.stringify({ id: 'b1', type: 'shipment.created' });
    const t = nowS();

    const bodyOnly = await send(shop.id, ts.endpoint.id, body, {
      'x-ts': t,
      'x-flowport-signature': `sha256=${hmacHex(ts.secret, body)}`,
    });
    expect(bodyOnly.failure.check).toBe('value_mismatch');
    expect(bodyOnly.failure.hint?.code).toBe('timestamp_not_signed');
    // The timestamp it carried is fine: the receipt says so, so the sender knows the signature is all.
    expect(bodyOnly.failure.tolerance_sec).toBe(300);
    expect(Math.abs(bodyOnly.failure.timestamp_offset_sec as number)).toBeLessThanOrEqual(2);
    expect(bodyOnly.failure.detail).toMatch(
      /Its timestamp \(x-ts\) is \d+ s (behind|ahead of) Flowport's clock, within the 300 s tolerance\./,
    );
    // An old timestamp with a wrong signature: both are said, the signature first.
    const stale = await send(shop.id, ts.endpoint.id, body, {
      'x-ts': String(Number(t) - 3_600),
      'x-flowport-signature': `sha256=${hmacHex(ts.secret, body)}`,
    });
    expect([stale.code, stale.failure.check, stale.failure.timestamp_offset_sec]).toEqual([
      'signature_mismatch',
      'value_mismatch',
      expect.any(Number),
    ]);
    expect(stale.failure.detail).toMatch(
      /outside the 300 s tolerance: with the signature fixed it would still be refused/,
    );
    // Without a timestamp header the receipt says nothing about time.
    const plainRefused = await send(shop.id, plain.endpoint.id, body, {
      'x-flowport-signature': `sha256=${'0'.repeat(64)}`,
    });
    expect([plainRefused.failure.tolerance_sec, plainRefused.failure.timestamp_offset_sec]).toEqual([null, null]);
    expect(bodyOnly.failure.hint?.detail).toMatch(/body alone/);
    // The detail tells the one cause the hint proved, not the generic "or uses another secret" (agent trial).
    expect(bodyOnly.failure.detail).toContain('timestamp_not_signed');
    expect(bodyOnly.failure.detail).not.toMatch(/uses another secret/);

    const unexpected = await send(shop.id, plain.endpoint.id, body, {
      'x-webhook-timestamp': t,
      'x-flowport-signature': `sha256=${hmacHex(plain.secret, `${t}.${body}`)}`,
    });
    expect(unexpected.failure.hint?.code).toBe('timestamp_signed');
    expect(unexpected.failure.hint?.detail).toContain('x-webhook-timestamp');

    const newline = await send(shop.id, plain.endpoint.id, `${body}\n`, {
      'x-flowport-signature': `sha256=${hmacHex(plain.secret, body)}`,
    });
    expect(newline.failure.hint?.code).toBe('trailing_newline');
  });

  it("the endpoint reads carry the newest refusal with its hint, as its receipt says it, so one read answers 'what must the sender change'", async () => {
    const services = server.runtime.services;
    const shop = await newShop(services);
    const ts = await newEndpoint(services, shop.id, { authMode: 'hmac_sha256', hmac: { timestampHeader: 'x-ts' } });
    const quiet = await newEndpoint(services, shop.id, { authMode: 'hmac_sha256' });
    const body = JSON.stringify({ id: 'l1', type: 'shipment.created' });
    await send(shop.id, ts.endpoint.id, body, { 'x-ts': nowS(), 'x-flowport-signature': `sha256=${'0'.repeat(64)}` });
    const newest = await post(`${server.url}/in/${ts.endpoint.id}`, body, {
      'x-ts': nowS(),
      'x-flowport-signature': `sha256=${hmacHex(ts.secret, body)}`,
    });
    expect(newest.status).toBe(401);
    const receipt = await receiptOf(shop.id, String(newest.json.receipt_id));
    const g = await createGrant(services, {
      shopId: shop.id,
      tier: 'observer',
      actorKind: 'agent',
      actorName: 'hints test',
      expiresInMs: 3_600_000,
    });
    const read = async (path: string) => {
      const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${g.token}` } });
      expect(res.status).toBe(200);
      return (await res.json()) as Record<string, any>;
    };
    const list = (await read('/agent/v1/endpoints')).data as Record<string, any>[];
    const one = await read(`/agent/v1/endpoints/${ts.endpoint.id}`);
    for (const ep of [list.find((e) => e.id === ts.endpoint.id), one]) {
      expect(ep?.recent.refused.total).toBe(2);
      expect(ep?.recent.refused.latest).toEqual({
        receipt_id: receipt.id,
        received_at: receipt.received_at,
        http_status: 401,
        error_code: 'signature_mismatch',
        failure: receipt.failure,
      });
      expect(ep?.recent.refused.latest.failure.hint.code).toBe('timestamp_not_signed');
    }
    expect(list.find((e) => e.id === quiet.endpoint.id)?.recent.refused).toMatchObject({ total: 0, latest: null });
  });

  it('names an expired previous secret with when it expired', async () => {
    const services = server.runtime.services;
    const shop = await newShop(services);
    const ep = await newEndpoint(services, shop.id, { authMode: 'hmac_sha256' });
    await rotateEndpointSecret(services, ep.endpoint.id, 1);
    const ended = Date.now() - 60_000;
    await services.db.run('UPDATE endpoints SET previous_secret_expires_at = ? WHERE id = ?', [ended, ep.endpoint.id]);
    const body = JSON.stringify({ id: 'c1' });
    const old = await send(shop.id, ep.endpoint.id, body, {
      'x-flowport-signature': `sha256=${hmacHex(ep.secret, body)}`,
    });
    expect(old.code).toBe('signature_mismatch');
    expect(old.failure.hint?.code).toBe('previous_secret_expired');
    expect(old.failure.hint?.detail).toContain(new Date(ended).toISOString());
  });

  it('names the other encoding, an unexpected prefix and a missing one, when the signature matches so', async () => {
    const services = server.runtime.services;
    const shop = await newShop(services);
    const hex = await newEndpoint(services, shop.id, { authMode: 'hmac_sha256' });
    const bare = await newEndpoint(services, shop.id, { authMode: 'hmac_sha256', hmac: { prefix: '' } });
    const body = JSON.stringify({ id: 'd1' });

    const b64 = await send(shop.id, hex.endpoint.id, body, {
      'x-flowport-signature': `sha256=${hmacB64(hex.secret, body)}`,
    });
    expect(b64.failure.check).toBe('wrong_encoding');
    expect(b64.failure.hint?.code).toBe('other_encoding');

    const prefixed = await send(shop.id, bare.endpoint.id, body, {
      'x-flowport-signature': `sha256=${hmacHex(bare.secret, body)}`,
    });
    expect(prefixed.failure.hint?.code).toBe('unexpected_prefix');
    expect(prefixed.failure.hint?.detail).toContain('sha256=');

    const unprefixed = await send(shop.id, hex.endpoint.id, body, {
      'x-flowport-signature': hmacHex(hex.secret, body),
    });
    expect(unprefixed.failure.check).toBe('wrong_prefix');
    expect(unprefixed.failure.hint?.code).toBe('prefix_missing');
  });

  it('names a Stripe body signed without t=, and a Standard Webhooks secret used as text', async () => {
    const services = server.runtime.services;
    const shop = await newShop(services);
    const stripe = await newEndpoint(services, shop.id, { authMode: 'stripe' });
    const sw = await newEndpoint(services, shop.id, { authMode: 'standard_webhooks' });
    const body = JSON.stringify({ id: 'evt_1', type: 'payment_intent.succeeded' });
    const t = nowS();
    const s = await send(shop.id, stripe.endpoint.id, body, {
      'stripe-signature': `t=${t},v1=${hmacHex(stripe.secret, body)}`,
    });
    expect(s.failure.hint?.code).toBe('timestamp_not_signed');
    expect(s.detail).toContain('{t}.{body}');

    const id = 'msg_1';
    const sig = createHmac('sha256', sw.secret).update(`${id}.${t}.${body}`).digest('base64');
    const w = await send(shop.id, sw.endpoint.id, body, {
      'webhook-id': id,
      'webhook-timestamp': t,
      'webhook-signature': `v1,${sig}`,
    });
    expect(w.failure.hint?.code).toBe('secret_not_decoded');
  });
});

describe('the order of checks', () => {
  it('a request failing two checks reports the one VERIFY_ORDER puts first', async () => {
    const services = server.runtime.services;
    const shop = await newShop(services);
    const hmac = await newEndpoint(services, shop.id, { authMode: 'hmac_sha256', hmac: { timestampHeader: 'x-ts' } });
    const stripe = await newEndpoint(services, shop.id, { authMode: 'stripe' });
    const body = JSON.stringify({ id: 'o1' });
    const stale = String(Math.floor(Date.now() / 1000) - 3600);
    const cases: [string, string, Record<string, string>, [string, string]][] = [
      [
        'hmac_sha256',
        hmac.endpoint.id,
        { 'x-flowport-signature': `md5=${'a'.repeat(64)}` },
        ['timestamp_missing', 'wrong_prefix'],
      ],
      [
        'hmac_sha256',
        hmac.endpoint.id,
        { 'x-ts': stale, 'x-flowport-signature': 'sha256=abcd' },
        ['wrong_length', 'timestamp_outside_tolerance'],
      ],
      [
        'hmac_sha256',
        hmac.endpoint.id,
        { 'x-ts': stale, 'x-flowport-signature': `sha256=${'0'.repeat(64)}` },
        ['value_mismatch', 'timestamp_outside_tolerance'],
      ],
      [
        'stripe',
        stripe.endpoint.id,
        { 'stripe-signature': `t=${stale},v1=${'0'.repeat(64)}` },
        ['value_mismatch', 'timestamp_outside_tolerance'],
      ],
      [
        'stripe',
        stripe.endpoint.id,
        { 'stripe-signature': `v1=${'0'.repeat(64)}` },
        ['timestamp_missing', 'value_mismatch'],
      ],
    ];
    for (const [mode, endpointId, headers, [first, later]] of cases) {
      const order = VERIFY_ORDER[mode as keyof typeof VERIFY_ORDER];
      expect(order.indexOf(first as never), `${mode} ${first}`).toBeLessThan(order.indexOf(later as never));
      const sent = await send(shop.id, endpointId, body, headers);
      expect(sent.failure.check, `${mode} ${JSON.stringify(headers)}`).toBe(first);
    }
  });
});

describe('the docs', () => {
  it('list every hint, and the order of checks of every mode', () => {
    const hints = renderAuthFailureHints();
    for (const code of Object.keys(AUTH_FAILURE_HINTS)) expect(hints).toContain(`\`${code}\``);
    const order = renderAuthCheckOrder();
    for (const mode of AUTH_MODES) {
      expect(order).toContain(`\`${mode}\``);
      expect(VERIFY_ORDER[mode][0]).toBe('no_active_secret');
      expect(VERIFY_ORDER[mode]).toContain('value_mismatch');
    }
  });
});
