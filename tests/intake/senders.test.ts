// Intake against the real sender libraries: Standard Webhooks, Stripe and
// GitHub (octokit) sign; Flowport answers 202. A one-byte change to body,
// timestamp or signature is refused with the right code; a stale timestamp
// gets its own code. Also: the other presets, dedupe, rotation, endpoint
// states, the plan cap and receipts.
import { sign as octokitSign } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rotateEndpointSecret, setEndpointStatus, standardWebhooksKeyForTest } from './sender-utils.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { flipOne, hmacB64, hmacHex, newEndpoint, newShop, post } from './helpers.ts';
import { getShopReceipt, receiptIdForEvent } from '../../api/src/reads/receipts.ts';
import { INTAKE_SUPPORT_CODES } from '../../api/src/errors/codes/intake.ts';

let server: TestServer;
let shopId: string;
const stripe = new Stripe('sk_test_placeholder');
const url = (id: string) => `${server.url}/in/${id}`;
const nowS = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  server = await startTestServer({ worker: false });
  shopId = (await newShop(server.runtime.services)).id;
});
afterAll(async () => {
  await server?.close();
});

/** The receipt of one request, read the way the API reads it (stored for rejections, derived from the event row otherwise). */
/**
 * Sends until the answer is what a change made elsewhere leads to: the intake caches endpoint
 * facts for up to a second, so a change shows within that, however slow the machine is.
 */
async function eventually<T extends { status: number }>(
  send: () => Promise<T>,
  done: (r: T) => boolean,
  ms = 15_000,
): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const r = await send();
    if (done(r) || Date.now() > until) return r;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function receiptFor(requestId: string | null) {
  const db = server.runtime.services.db;
  const stored = await db.get<{ id: string; shop_id: string }>(
    'SELECT id, shop_id FROM receipts WHERE request_id = ?',
    [requestId],
  );
  const event = stored
    ? undefined
    : await db.get<{ id: string; shop_id: string }>('SELECT id, shop_id FROM events WHERE request_id = ?', [requestId]);
  const ref = stored ?? (event ? { id: receiptIdForEvent(event.id), shop_id: event.shop_id } : undefined);
  return ref ? getShopReceipt(db, ref.shop_id, ref.id) : undefined;
}

describe('standard_webhooks (standardwebhooks library)', () => {
  it('accepts a signed request, refuses one-byte changes and stale timestamps', async () => {
    const { endpoint, secret } = await newEndpoint(server.runtime.services, shopId, { authMode: 'standard_webhooks' });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const wh = new Webhook(secret);
    const id = `msg_${Math.random().toString(36).slice(2)}`;
    const date = new Date();
    const ts = String(Math.floor(date.getTime() / 1000));
    const body = JSON.stringify({ type: 'user.created', data: { id: 'u_1', padding: 'x'.repeat(50) } });
    const sig = wh.sign(id, date, body);
    const headers = { 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': sig };

    const bad1 = await post(url(endpoint.id), flipOne(body, 30), headers);
    expect([bad1.status, bad1.json.code]).toEqual([401, 'signature_mismatch']);
    const bad2 = await post(url(endpoint.id), body, { ...headers, 'webhook-timestamp': String(Number(ts) + 1) });
    expect([bad2.status, bad2.json.code]).toEqual([401, 'signature_mismatch']);
    const bad3 = await post(url(endpoint.id), body, {
      ...headers,
      'webhook-signature': `v1,${flipOne(sig.slice(3), 5)}`,
    });
    expect([bad3.status, bad3.json.code]).toEqual([401, 'signature_mismatch']);
    expect(bad3.json.support_code).toBe('FP-I-SIG');
    expect(bad3.json.receipt_id).toMatch(/^rcpt_/);

    const ok = await post(url(endpoint.id), body, headers);
    expect(ok.status).toBe(202);
    expect(ok.json.status).toBe('queued');
    const ev = await server.runtime.services.db.get<Record<string, unknown>>('SELECT * FROM events WHERE id = ?', [
      ok.json.event_id as string,
    ]);
    expect(ev).toMatchObject({ state: 'queued', external_event_id: id, event_type: 'user.created', body });

    // svix-* headers work too, with several signatures (one stale key, one good)
    const id2 = `msg_${Math.random().toString(36).slice(2)}`;
    const sig2 = wh.sign(id2, date, body);
    const svix = await post(url(endpoint.id), body, {
      'svix-id': id2,
      'svix-timestamp': ts,
      'svix-signature': `v1,${Buffer.alloc(32).toString('base64')} ${sig2}`,
    });
    expect(svix.status).toBe(202);

    // stale: correctly signed 10 minutes ago
    const old = new Date(Date.now() - 600_000);
    const id3 = 'msg_old';
    const stale = await post(url(endpoint.id), body, {
      'webhook-id': id3,
      'webhook-timestamp': String(Math.floor(old.getTime() / 1000)),
      'webhook-signature': wh.sign(id3, old, body),
    });
    expect([stale.status, stale.json.code, stale.json.support_code]).toEqual([
      401,
      'timestamp_outside_tolerance',
      'FP-I-TS',
    ]);
    void standardWebhooksKeyForTest;
  });
});

describe('stripe (stripe.webhooks.generateTestHeaderString)', () => {
  it('accepts, dedupes on the event id, refuses changes and stale timestamps', async () => {
    const { endpoint, secret } = await newEndpoint(server.runtime.services, shopId, {
      authMode: 'stripe',
      triggerVariant: 'external_order_event',
      mapping: { resourceIdPath: 'data.object.metadata.order_id' },
    });
    expect(secret.startsWith('whsec_')).toBe(true);
    const evtId = `evt_${Math.random().toString(36).slice(2)}`;
    const payload = JSON.stringify({
      id: evtId,
      type: 'payment_intent.succeeded',
      data: { object: { metadata: { order_id: 'gid://shopify/Order/1234' } } },
    });
    const header = stripe.webhooks.generateTestHeaderString({ payload, secret });
    const t = /t=(\d+)/.exec(header)?.[1] ?? '';

    const b1 = await post(url(endpoint.id), flipOne(payload, 10), { 'stripe-signature': header });
    expect([b1.status, b1.json.code]).toEqual([401, 'signature_mismatch']);
    const b2 = await post(url(endpoint.id), payload, {
      'stripe-signature': header.replace(`t=${t}`, `t=${Number(t) - 1}`),
    });
    expect([b2.status, b2.json.code]).toEqual([401, 'signature_mismatch']);
    const b3 = await post(url(endpoint.id), payload, {
      'stripe-signature': header.replace(/v1=([0-9a-f]+)/, (_m, h: string) => `v1=${flipOne(h, 3)}`),
    });
    expect([b3.status, b3.json.code]).toEqual([401, 'signature_mismatch']);
    const b4 = await post(url(endpoint.id), payload, {});
    expect([b4.status, b4.json.code]).toEqual([401, 'signature_missing']);

    const ok = await post(url(endpoint.id), payload, { 'stripe-signature': header });
    expect(ok.status).toBe(202);
    const ev = await server.runtime.services.db.get<Record<string, unknown>>('SELECT * FROM events WHERE id = ?', [
      ok.json.event_id as string,
    ]);
    expect(ev).toMatchObject({
      external_event_id: evtId,
      resource_id: 'gid://shopify/Order/1234',
      event_type: 'payment_intent.succeeded',
    });

    // Stripe retries the same event: duplicate, 200, first event id, recorded, not queued.
    const again = await post(url(endpoint.id), payload, {
      'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload, secret }),
    });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({
      status: 'duplicate_suppressed',
      event_id: ok.json.event_id,
      duplicate_of: ok.json.event_id,
    });
    const dup = await server.runtime.services.db.get<Record<string, unknown>>(
      "SELECT * FROM events WHERE duplicate_of = ? AND state = 'duplicate_suppressed'",
      [ok.json.event_id as string],
    );
    expect(dup?.receipt_id).toBe(again.json.receipt_id);
    expect(dup?.next_attempt_at).toBeNull();

    const stale = await post(url(endpoint.id), payload, {
      'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: nowS() - 301 }),
    });
    expect([stale.status, stale.json.code]).toEqual([401, 'timestamp_outside_tolerance']);

    // Several v1 signatures (Stripe-side secret roll): any match passes.
    const evt2 = JSON.stringify({ id: `${evtId}_2`, type: 'x', data: { object: { metadata: { order_id: 55 } } } });
    const h2 = stripe.webhooks.generateTestHeaderString({ payload: evt2, secret });
    const multi = await post(url(endpoint.id), evt2, {
      'stripe-signature': h2.replace(',v1=', `,v1=${'ab'.repeat(32)},v1=`),
    });
    expect(multi.status).toBe(202);

    // Wrong resource type for an order trigger
    const evt3 = JSON.stringify({
      id: `${evtId}_3`,
      type: 'x',
      data: { object: { metadata: { order_id: 'gid://shopify/Customer/9' } } },
    });
    const wrong = await post(url(endpoint.id), evt3, {
      'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload: evt3, secret }),
    });
    expect([wrong.status, wrong.json.code]).toEqual([422, 'invalid_resource_id']);
  });
});

describe('github (@octokit/webhooks-methods sign)', () => {
  it('accepts, refuses a one-byte change, dedupes on X-GitHub-Delivery', async () => {
    const { endpoint, secret } = await newEndpoint(server.runtime.services, shopId, { authMode: 'github' });
    const body = JSON.stringify({ action: 'opened', issue: { number: 1 } });
    const signature = await octokitSign(secret, body);
    const delivery = crypto.randomUUID();
    const h = { 'x-hub-signature-256': signature, 'x-github-delivery': delivery, 'x-github-event': 'issues' };
    const bad = await post(url(endpoint.id), `${body} `, h);
    expect([bad.status, bad.json.code]).toEqual([401, 'signature_mismatch']);
    const badSig = await post(url(endpoint.id), body, { ...h, 'x-hub-signature-256': flipOne(signature, 20) });
    expect([badSig.status, badSig.json.code]).toEqual([401, 'signature_mismatch']);
    const ok = await post(url(endpoint.id), body, h);
    expect(ok.status).toBe(202);
    const ev = await server.runtime.services.db.get<Record<string, unknown>>(
      'SELECT event_type, external_event_id FROM events WHERE id = ?',
      [ok.json.event_id as string],
    );
    expect(ev).toEqual({ event_type: 'issues', external_event_id: delivery });
    const redelivery = await post(url(endpoint.id), body, h);
    expect(redelivery.json.status).toBe('duplicate_suppressed');
  });
});

describe('other presets', () => {
  it('shopify: base64 HMAC, X-Shopify-Event-Id dedupe', async () => {
    const { endpoint, secret } = await newEndpoint(server.runtime.services, shopId, { authMode: 'shopify' });
    const body = JSON.stringify({ id: 820982911946154500, email: 'jon@example.com' });
    const ok = await post(url(endpoint.id), body, {
      'x-shopify-hmac-sha256': hmacB64(secret, body),
      'x-shopify-topic': 'orders/paid',
      'x-shopify-event-id': 'e-1',
    });
    expect(ok.status).toBe(202);
    const bad = await post(url(endpoint.id), body, { 'x-shopify-hmac-sha256': hmacB64(`${secret}x`, body) });
    expect(bad.json.code).toBe('signature_mismatch');
  });

  it('slack: v0 signature with timestamp', async () => {
    const { endpoint, secret } = await newEndpoint(server.runtime.services, shopId, { authMode: 'slack' });
    const body = JSON.stringify({ type: 'event_callback', event_id: 'Ev1', event: { type: 'app_mention' } });
    const ts = String(nowS());
    const ok = await post(url(endpoint.id), body, {
      'x-slack-request-timestamp': ts,
      'x-slack-signature': `v0=${hmacHex(secret, `v0:${ts}:${body}`)}`,
    });
    expect(ok.status).toBe(202);
    const old = String(nowS() - 400);
    const stale = await post(url(endpoint.id), body, {
      'x-slack-request-timestamp': old,
      'x-slack-signature': `v0=${hmacHex(secret, `v0:${old}:${body}`)}`,
    });
    expect(stale.json.code).toBe('timestamp_outside_tolerance');
    const noTs = await post(url(endpoint.id), body, {
      'x-slack-signature': `v0=${hmacHex(secret, `v0:${ts}:${body}`)}`,
    });
    expect(noTs.json.code).toBe('timestamp_missing');
  });

  it('slack: the url_verification handshake is answered with its challenge once signed, and stored as no event', async () => {
    // A required path the handshake body lacks: the handshake is answered before mapping.
    const { endpoint, secret } = await newEndpoint(server.runtime.services, shopId, {
      authMode: 'slack',
      mapping: { requiredPaths: ['event.type'] },
    });
    const challenge = `3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P-${Math.random().toString(36).slice(2)}`;
    const body = JSON.stringify({ token: '<VERIFICATION_TOKEN>', challenge, type: 'url_verification' });
    const ts = String(nowS());
    const signed = {
      'x-slack-request-timestamp': ts,
      'x-slack-signature': `v0=${hmacHex(secret, `v0:${ts}:${body}`)}`,
    };
    const ok = await post(url(endpoint.id), body, signed);
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ status: 'handshake', challenge });
    const receipt = await receiptFor(ok.headers.get('x-request-id'));
    expect(receipt).toMatchObject({
      id: ok.json.receipt_id,
      event_id: null,
      http_status: 200,
      auth_result: 'verified',
      error_code: null,
      support_code: INTAKE_SUPPORT_CODES.handshake.code,
    });
    const events = await server.runtime.services.db.get<{ n: number }>(
      'SELECT COUNT(*) AS n FROM events WHERE endpoint_id = ?',
      [endpoint.id],
    );
    expect(Number(events?.n)).toBe(0);

    // Unsigned, or signed with another secret: refused, and the challenge is not echoed.
    const unsigned = await post(url(endpoint.id), body, { 'x-slack-request-timestamp': ts });
    expect([unsigned.status, unsigned.json.code]).toEqual([401, 'signature_missing']);
    const forged = await post(url(endpoint.id), body, {
      'x-slack-request-timestamp': ts,
      'x-slack-signature': `v0=${hmacHex(`${secret}x`, `v0:${ts}:${body}`)}`,
    });
    expect([forged.status, forged.json.code]).toEqual([401, 'signature_mismatch']);
    for (const r of [unsigned, forged]) expect(JSON.stringify(r.json)).not.toContain(challenge);

    // Other modes have no such handshake: the same body is an ordinary event there.
    const gh = await newEndpoint(server.runtime.services, shopId, { authMode: 'github' });
    const stored = await post(url(gh.endpoint.id), body, {
      'x-hub-signature-256': await octokitSign(gh.secret, body),
      'x-github-delivery': `d-${Math.random()}`,
      'x-github-event': 'issues',
    });
    expect([stored.status, stored.json.status]).toEqual([202, 'queued']);
  });

  it('github: the ping sent when a webhook is created is answered once signed, and never reaches Flow', async () => {
    const { endpoint, secret } = await newEndpoint(server.runtime.services, shopId, {
      authMode: 'github',
      mapping: { requiredPaths: ['action'] },
    });
    const body = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 12345678, hook: { type: 'Repository' } });
    const headers = (sig: string) => ({
      'x-hub-signature-256': sig,
      'x-github-delivery': `d-${Math.random()}`,
      'x-github-event': 'ping',
    });
    const ok = await post(url(endpoint.id), body, headers(await octokitSign(secret, body)));
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ status: 'handshake', receipt_id: expect.stringMatching(/^rcpt_/) });
    const receipt = await receiptFor(ok.headers.get('x-request-id'));
    expect(receipt).toMatchObject({
      event_id: null,
      http_status: 200,
      support_code: INTAKE_SUPPORT_CODES.handshake.code,
    });
    const events = await server.runtime.services.db.get<{ n: number }>(
      'SELECT COUNT(*) AS n FROM events WHERE endpoint_id = ?',
      [endpoint.id],
    );
    expect(Number(events?.n)).toBe(0);
    // A forged ping is refused like any request.
    const forged = await post(url(endpoint.id), body, headers(await octokitSign(`${secret}x`, body)));
    expect([forged.status, forged.json.code]).toEqual([401, 'signature_mismatch']);
  });

  it('static_header and basic', async () => {
    const st = await newEndpoint(server.runtime.services, shopId, { authMode: 'static_header' });
    const header = st.config.staticHeader?.header ?? '';
    expect((await post(url(st.endpoint.id), '{"a":1}', { [header]: st.secret })).status).toBe(202);
    expect((await post(url(st.endpoint.id), '{"a":1}', { [header]: flipOne(st.secret) })).json.code).toBe(
      'credentials_invalid',
    );
    expect((await post(url(st.endpoint.id), '{"a":1}')).json.code).toBe('credentials_missing');
    const ba = await newEndpoint(server.runtime.services, shopId, { authMode: 'basic' });
    const user = ba.config.basic?.username ?? '';
    const auth = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
    expect((await post(url(ba.endpoint.id), '{"a":1}', { authorization: auth(user, ba.secret) })).status).toBe(202);
    expect((await post(url(ba.endpoint.id), '{"a":1}', { authorization: auth(`${user}x`, ba.secret) })).json.code).toBe(
      'credentials_invalid',
    );
  });

  it('hmac_sha256 with a timestamp header and base64', async () => {
    const { endpoint, secret } = await newEndpoint(server.runtime.services, shopId, {
      authMode: 'hmac_sha256',
      hmac: { header: 'x-sig', encoding: 'base64', prefix: '', timestampHeader: 'x-ts' },
      mapping: { externalId: { kind: 'json', path: 'id' } },
    });
    const body = '{"id":"a1","type":"t"}';
    const ts = String(nowS());
    expect((await post(url(endpoint.id), body, { 'x-ts': ts, 'x-sig': hmacB64(secret, `${ts}.${body}`) })).status).toBe(
      202,
    );
    expect(
      (await post(url(endpoint.id), body, { 'x-ts': 'abc', 'x-sig': hmacB64(secret, `${ts}.${body}`) })).json.code,
    ).toBe('timestamp_invalid');
    // The signed text is the header as sent: a zero-padded timestamp signs with its zero.
    const padded = `0${ts}`;
    const body2 = '{"id":"a2","type":"t"}';
    const sent = await post(url(endpoint.id), body2, {
      'x-ts': padded,
      'x-sig': hmacB64(secret, `${padded}.${body2}`),
    });
    expect([sent.status, sent.json.code]).toEqual([202, undefined]);
    const unpadded = await post(url(endpoint.id), '{"id":"a3","type":"t"}', {
      'x-ts': padded,
      'x-sig': hmacB64(secret, `${ts}.{"id":"a3","type":"t"}`),
    });
    expect(unpadded.json.code).toBe('signature_mismatch');
  });
});

describe('rotation, endpoint states, cap, batching', () => {
  it('the previous secret verifies during the overlap only', async () => {
    const { endpoint, secret: oldSecret } = await newEndpoint(server.runtime.services, shopId, {
      authMode: 'hmac_sha256',
    });
    const services = server.runtime.services;
    const rotated = await rotateEndpointSecret(services, endpoint.id, 24);
    expect(rotated.secret).not.toBe(oldSecret);
    expect(rotated.configVersion).toBe(2);
    const send = (s: string, body: string) =>
      post(url(endpoint.id), body, { 'x-flowport-signature': `sha256=${hmacHex(s, body)}` });
    // The intake caches endpoint facts for up to a second: the new secret works once it shows.
    const okNew = await eventually(
      () => send(rotated.secret, '{"n":2}'),
      (r) => r.status === 202,
    );
    expect(okNew.status).toBe(202);
    expect((await receiptFor(okNew.headers.get('x-request-id')))?.config_version).toBe(2);
    expect((await send(oldSecret, '{"n":1}')).status).toBe(202);
    await rotateEndpointSecret(services, endpoint.id, 0);
    const refused = await eventually(
      () => send(rotated.secret, '{"n":3}'),
      (r) => r.status !== 202,
    );
    expect(refused.json.code).toBe('signature_mismatch');
  });

  it('paused → 423, archived → 410, unknown → 404', async () => {
    const { endpoint, secret } = await newEndpoint(server.runtime.services, shopId, { authMode: 'hmac_sha256' });
    const body = '{"x":1}';
    const h = { 'x-flowport-signature': `sha256=${hmacHex(secret, body)}` };
    await setEndpointStatus(server.runtime.services, endpoint.id, 'paused');
    const p = await eventually(
      () => post(url(endpoint.id), body, h),
      (r) => r.status !== 202,
    );
    expect([p.status, p.json.code]).toEqual([423, 'endpoint_paused']);
    expect(p.headers.get('retry-after')).toBeTruthy();
    await setEndpointStatus(server.runtime.services, endpoint.id, 'archived');
    const a = await eventually(
      () => post(url(endpoint.id), body, h),
      (r) => r.status !== 423,
    );
    expect([a.status, a.json.code]).toEqual([410, 'endpoint_gone']);
    const u = await post(url('ep_00000000000000000000000000'), body, h);
    expect([u.status, u.json.code]).toEqual([404, 'not_found']);
  });

  it('past the monthly cap: 429 + Retry-After, nothing stored', async () => {
    const shop = await newShop(server.runtime.services, 'free');
    const { endpoint, secret } = await newEndpoint(server.runtime.services, shop.id, { authMode: 'hmac_sha256' });
    const period = new Date().toISOString().slice(0, 7);
    await server.runtime.services.db.run(
      "INSERT INTO usage_counters (shop_id, period, meter, count) VALUES (?, ?, 'accepted_events', ?)",
      [shop.id, period, 999],
    );
    const send = (n: number) => {
      const body = JSON.stringify({ n });
      return post(url(endpoint.id), body, { 'x-flowport-signature': `sha256=${hmacHex(secret, body)}` });
    };
    expect((await send(1)).status).toBe(202);
    const capped = await send(2);
    expect([capped.status, capped.json.code]).toEqual([429, 'intake_event_cap_reached']);
    expect(Number(capped.headers.get('retry-after'))).toBeGreaterThan(0);
    const c = await server.runtime.services.db.get<{ count: number }>(
      "SELECT count FROM usage_counters WHERE shop_id = ? AND meter = 'accepted_events'",
      [shop.id],
    );
    expect(Number(c?.count)).toBe(1000);
    const n = await server.runtime.services.db.get<{ n: number }>(
      'SELECT COUNT(*) AS n FROM events WHERE shop_id = ?',
      [shop.id],
    );
    expect(Number(n?.n)).toBe(1);
  });

  it('concurrent identical ids in one batch: one accepted, the rest duplicates', async () => {
    const { endpoint, secret } = await newEndpoint(server.runtime.services, shopId, { authMode: 'github' });
    const body = '{"same":true}';
    const delivery = crypto.randomUUID();
    const h = { 'x-hub-signature-256': await octokitSign(secret, body), 'x-github-delivery': delivery };
    const results = await Promise.all(Array.from({ length: 20 }, () => post(url(endpoint.id), body, h)));
    const accepted = results.filter((r) => r.status === 202);
    expect(accepted).toHaveLength(1);
    expect(
      results.filter((r) => r.json.status === 'duplicate_suppressed' && r.json.event_id === accepted[0]?.json.event_id),
    ).toHaveLength(19);
  });

  it('concurrent different ids, some sent before: each old id is a duplicate of its first copy, each new id accepted once', async () => {
    const { endpoint, secret } = await newEndpoint(server.runtime.services, shopId, { authMode: 'github' });
    const send = async (delivery: string) => {
      const body = JSON.stringify({ delivery });
      return post(url(endpoint.id), body, {
        'x-hub-signature-256': await octokitSign(secret, body),
        'x-github-delivery': delivery,
      });
    };
    const old = Array.from({ length: 5 }, () => crypto.randomUUID());
    const firsts = new Map<string, string>();
    for (const d of old) {
      const r = await send(d);
      expect(r.status).toBe(202);
      firsts.set(d, r.json.event_id as string);
    }
    // Old and new ids mixed in concurrent requests (one or a few batches), each new id twice.
    // One id with the characters an array literal must quote (PostgreSQL reads them in one query).
    const fresh = [...Array.from({ length: 9 }, () => crypto.randomUUID()), `odd "id", \\ {x} ${crypto.randomUUID()}`];
    const sent = [...old, ...fresh, ...fresh];
    const results = await Promise.all(sent.map((d) => send(d)));
    for (const [i, d] of sent.entries()) {
      const r = results[i] as (typeof results)[number];
      if (firsts.has(d)) expect([r.status, r.json.duplicate_of]).toEqual([200, firsts.get(d)]);
    }
    for (const d of fresh) {
      const mine = results.filter((_, i) => sent[i] === d);
      expect(mine.map((r) => r.status).sort()).toEqual([200, 202]);
      const accepted = mine.find((r) => r.status === 202);
      expect(mine.find((r) => r.status === 200)?.json.duplicate_of).toBe(accepted?.json.event_id);
    }
  });

  it('rejections get receipts with their facts, then a per-minute tally', async () => {
    const { endpoint } = await newEndpoint(server.runtime.services, shopId, { authMode: 'hmac_sha256' });
    const first = await post(url(endpoint.id), '{"a":1}', { 'x-flowport-signature': `sha256=${'0'.repeat(64)}` });
    const r = await receiptFor(first.headers.get('x-request-id'));
    expect(r).toMatchObject({
      auth_result: 'failed',
      validation_result: 'not_checked',
      http_status: 401,
      error_code: 'signature_mismatch',
      support_code: 'FP-I-SIG',
      event_id: null,
    });
    await Promise.all(Array.from({ length: 80 }, () => post(url(endpoint.id), '{"a":1}')));
    const db = server.runtime.services.db;
    const receipts = await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM receipts WHERE endpoint_id = ?', [
      endpoint.id,
    ]);
    const tally = await db.get<{ n: number }>(
      'SELECT SUM(count) AS n FROM intake_rejection_tallies WHERE endpoint_id = ?',
      [endpoint.id],
    );
    expect(Number(receipts?.n) + Number(tally?.n ?? 0)).toBe(81);
    expect(Number(receipts?.n)).toBeLessThanOrEqual(120);
  });
});
