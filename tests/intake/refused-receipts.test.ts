// Refused requests are first-class (issue 42, part B): every refused request's receipt says which
// check failed (`failure.check`, `failure.detail`) without the secret, the signature or the body;
// it carries the body's SHA-256 whenever the body was read; receipts are listed with filters and
// the events list's paging; endpoint reads, setup and diagnostics count refusals by code. On a
// real server and store (both stores in `npm test`).
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrant } from '../../api/src/auth/grants.ts';
import { newId } from '../../api/src/ids.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { hmacB64, hmacHex, newEndpoint, newShop, post } from './helpers.ts';
import { rotateEndpointSecret } from './sender-utils.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ worker: false, bootstrapSandbox: false });
});
afterAll(async () => {
  await server?.close();
});

async function tokenFor(shopId: string): Promise<string> {
  const g = await createGrant(server.runtime.services, {
    shopId,
    tier: 'observer',
    actorKind: 'agent',
    actorName: 'refused receipts test',
    expiresInMs: 3_600_000,
  });
  return g.token;
}

async function api(token: string, path: string) {
  const res = await fetch(`${server.url}/agent/v1${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const nowS = () => Math.floor(Date.now() / 1000);
/** A body with a marker no receipt may ever show. */
const bodyWith = (marker: string) => JSON.stringify({ id: `ext_${newId('request')}`, type: 'order.paid', marker });

interface Case {
  name: string;
  endpoint: string;
  body: string;
  headers: Record<string, string>;
  /** What must never appear in the receipt (secret, signature values). */
  hidden: string[];
  code: string;
  failure: Record<string, unknown>;
}

describe('a refused receipt says which check failed, safely', () => {
  it('each auth check of each mode has its own failure.check, detail and the body hash; nothing secret', async () => {
    const services = server.runtime.services;
    const shop = await newShop(services);
    const hmac = await newEndpoint(services, shop.id, {
      authMode: 'hmac_sha256',
      hmac: { timestampHeader: 'x-ts' },
    });
    const rotated = await newEndpoint(services, shop.id, { authMode: 'hmac_sha256' });
    const next = await rotateEndpointSecret(services, rotated.endpoint.id, 24);
    const stat = await newEndpoint(services, shop.id, { authMode: 'static_header' });
    const basic = await newEndpoint(services, shop.id, { authMode: 'basic' });
    const stripe = await newEndpoint(services, shop.id, { authMode: 'stripe' });
    const sw = await newEndpoint(services, shop.id, { authMode: 'standard_webhooks' });
    const slack = await newEndpoint(services, shop.id, { authMode: 'slack' });
    const b = bodyWith('MARKER-hmac');
    const ts = String(nowS());
    const good = `sha256=${hmacHex(hmac.secret, `${ts}.${b}`)}`;
    const old = String(nowS() - 3600);
    const oldSig = `sha256=${hmacHex(hmac.secret, `${old}.${b}`)}`;
    const wrongSig = `sha256=${'0'.repeat(64)}`;
    const staticHeader = (stat.config.staticHeader?.header ?? 'x-flowport-token').toLowerCase();
    const basicUser = basic.config.basic?.username ?? '';
    const cases: Case[] = [
      {
        name: 'hmac: no signature header',
        endpoint: hmac.endpoint.id,
        body: b,
        headers: { 'x-ts': ts },
        hidden: [hmac.secret],
        code: 'signature_missing',
        failure: { check: 'header_missing', header: 'x-flowport-signature' },
      },
      {
        name: 'hmac: wrong prefix',
        endpoint: hmac.endpoint.id,
        body: b,
        headers: { 'x-ts': ts, 'x-flowport-signature': `md5=${'a'.repeat(64)}` },
        hidden: [hmac.secret, 'a'.repeat(64)],
        code: 'signature_malformed',
        failure: { check: 'wrong_prefix', header: 'x-flowport-signature' },
      },
      {
        name: 'hmac: not hex',
        endpoint: hmac.endpoint.id,
        body: b,
        headers: { 'x-ts': ts, 'x-flowport-signature': `sha256=${'z'.repeat(64)}` },
        hidden: [hmac.secret, 'z'.repeat(64)],
        code: 'signature_malformed',
        failure: { check: 'wrong_encoding', header: 'x-flowport-signature' },
      },
      {
        name: 'hmac: too short',
        endpoint: hmac.endpoint.id,
        body: b,
        headers: { 'x-ts': ts, 'x-flowport-signature': 'sha256=abcdef12' },
        hidden: [hmac.secret, 'abcdef12'],
        code: 'signature_malformed',
        failure: { check: 'wrong_length', header: 'x-flowport-signature' },
      },
      {
        name: 'hmac: no timestamp',
        endpoint: hmac.endpoint.id,
        body: b,
        headers: { 'x-flowport-signature': good },
        hidden: [hmac.secret, good.slice(7)],
        code: 'timestamp_missing',
        failure: { check: 'timestamp_missing', header: 'x-ts' },
      },
      {
        name: 'hmac: timestamp not seconds',
        endpoint: hmac.endpoint.id,
        body: b,
        headers: { 'x-ts': 'yesterday', 'x-flowport-signature': good },
        hidden: [hmac.secret, good.slice(7)],
        code: 'timestamp_invalid',
        failure: { check: 'timestamp_malformed', header: 'x-ts' },
      },
      {
        name: 'hmac: an hour old',
        endpoint: hmac.endpoint.id,
        body: b,
        headers: { 'x-ts': old, 'x-flowport-signature': oldSig },
        hidden: [hmac.secret, oldSig.slice(7)],
        code: 'timestamp_outside_tolerance',
        failure: { check: 'timestamp_outside_tolerance', header: 'x-ts', tolerance_sec: 300 },
      },
      {
        name: 'hmac: value mismatch, one secret',
        endpoint: hmac.endpoint.id,
        body: b,
        headers: { 'x-ts': ts, 'x-flowport-signature': wrongSig },
        hidden: [hmac.secret],
        code: 'signature_mismatch',
        failure: { check: 'value_mismatch', header: 'x-flowport-signature', active_secrets: 1 },
      },
      {
        name: 'hmac: value mismatch during a rotation overlap',
        endpoint: rotated.endpoint.id,
        body: b,
        headers: { 'x-flowport-signature': wrongSig },
        hidden: [rotated.secret, next.secret],
        code: 'signature_mismatch',
        failure: { check: 'value_mismatch', active_secrets: 2 },
      },
      {
        name: 'static header: missing',
        endpoint: stat.endpoint.id,
        body: b,
        headers: {},
        hidden: [stat.secret],
        code: 'credentials_missing',
        failure: { check: 'header_missing', header: staticHeader },
      },
      {
        name: 'static header: wrong value',
        endpoint: stat.endpoint.id,
        body: b,
        headers: { [staticHeader]: 'fptok_not-the-token-at-all' },
        hidden: [stat.secret, 'fptok_not-the-token-at-all'],
        code: 'credentials_invalid',
        failure: { check: 'value_mismatch', header: staticHeader, active_secrets: 1 },
      },
      {
        name: 'basic: not the Basic scheme',
        endpoint: basic.endpoint.id,
        body: b,
        headers: { authorization: 'Bearer not-basic-token-xyz' },
        hidden: [basic.secret, 'not-basic-token-xyz'],
        code: 'credentials_missing',
        failure: { check: 'wrong_prefix', header: 'authorization' },
      },
      {
        name: 'basic: wrong password',
        endpoint: basic.endpoint.id,
        body: b,
        headers: { authorization: `Basic ${Buffer.from(`${basicUser}:wrong-password-xyz`).toString('base64')}` },
        hidden: [basic.secret, 'wrong-password-xyz'],
        code: 'credentials_invalid',
        failure: { check: 'value_mismatch', header: 'authorization', active_secrets: 1 },
      },
      {
        name: 'stripe: no v1 signature',
        endpoint: stripe.endpoint.id,
        body: b,
        headers: { 'stripe-signature': `t=${ts},v0=abc` },
        hidden: [stripe.secret],
        code: 'signature_malformed',
        failure: { check: 'header_malformed', header: 'stripe-signature' },
      },
      {
        name: 'stripe: v1 signature too short',
        endpoint: stripe.endpoint.id,
        body: b,
        headers: { 'stripe-signature': `t=${ts},v1=abcdef` },
        hidden: [stripe.secret],
        code: 'signature_malformed',
        failure: { check: 'wrong_length', header: 'stripe-signature' },
      },
      {
        name: 'standard webhooks: no webhook-id',
        endpoint: sw.endpoint.id,
        body: b,
        headers: { 'webhook-timestamp': ts, 'webhook-signature': `v1,${hmacB64('k', b)}` },
        hidden: [sw.secret],
        code: 'signature_malformed',
        failure: { check: 'header_missing', header: 'webhook-id' },
      },
      {
        name: 'slack: wrong prefix',
        endpoint: slack.endpoint.id,
        body: b,
        headers: { 'x-slack-request-timestamp': ts, 'x-slack-signature': `v1=${'b'.repeat(64)}` },
        hidden: [slack.secret, 'b'.repeat(64)],
        code: 'signature_malformed',
        failure: { check: 'wrong_prefix', header: 'x-slack-signature' },
      },
    ];
    const token = await tokenFor(shop.id);
    for (const c of cases) {
      const res = await post(`${server.url}/in/${c.endpoint}`, c.body, c.headers);
      expect(res.json.code, c.name).toBe(c.code);
      const receipt = await api(token, `/receipts/${res.json.receipt_id}`);
      expect(receipt.status, c.name).toBe(200);
      // The body was read: its hash is kept (never the body).
      expect(receipt.json.body_sha256, c.name).toBe(sha256(c.body));
      expect(receipt.json.failure, c.name).toMatchObject(c.failure);
      expect(typeof receipt.json.failure.detail, c.name).toBe('string');
      expect(receipt.json.failure.detail.length, c.name).toBeGreaterThan(10);
      const text = JSON.stringify(receipt.json);
      for (const secret of [...c.hidden, 'MARKER-hmac'])
        expect(text, `${c.name} shows ${secret}`).not.toContain(secret);
    }
    // How far off an old timestamp was, beside the tolerance.
    const late = await post(`${server.url}/in/${hmac.endpoint.id}`, b, { 'x-ts': old, 'x-flowport-signature': oldSig });
    const lateReceipt = await api(token, `/receipts/${late.json.receipt_id}`);
    expect(lateReceipt.json.failure.timestamp_offset_sec).toBeLessThanOrEqual(-3599);
    expect(lateReceipt.json.failure.timestamp_offset_sec).toBeGreaterThanOrEqual(-3700);
    expect(lateReceipt.json.failure.detail).toMatch(/300 s/);

    // A base64 signature where hex is expected: the detail says the sender encodes differently.
    const b64 = await post(`${server.url}/in/${hmac.endpoint.id}`, b, {
      'x-ts': ts,
      'x-flowport-signature': `sha256=${hmacB64(hmac.secret, `${ts}.${b}`)}`,
    });
    const b64Receipt = await api(token, `/receipts/${b64.json.receipt_id}`);
    expect(b64Receipt.json.failure.check).toBe('wrong_encoding');
    expect(b64Receipt.json.failure.detail).toMatch(/base64 HMAC-SHA256/);

    // An accepted receipt has no failure.
    const ok = await post(`${server.url}/in/${hmac.endpoint.id}`, b, { 'x-ts': ts, 'x-flowport-signature': good });
    expect(ok.status).toBe(202);
    const okReceipt = await api(token, `/receipts/${ok.json.receipt_id}`);
    expect(okReceipt.json.failure).toBeNull();
  });
});

describe('listReceipts', () => {
  it('lists accepted, duplicate and refused receipts newest first, with filters and cursor paging', async () => {
    const services = server.runtime.services;
    const shop = await newShop(services);
    const a = await newEndpoint(services, shop.id, {
      authMode: 'hmac_sha256',
      mapping: { externalId: { kind: 'json', path: 'id' } },
    });
    const other = await newEndpoint(services, shop.id, { authMode: 'hmac_sha256' });
    const send = (ep: { endpoint: { id: string }; secret: string }, body: string, sig?: string) =>
      post(`${server.url}/in/${ep.endpoint.id}`, body, {
        'x-flowport-signature': sig ?? `sha256=${hmacHex(ep.secret, body)}`,
      });
    const body = bodyWith('list');
    const sent = [
      await send(a, body), // accepted
      await send(a, body), // duplicate
      await send(a, bodyWith('x'), `sha256=${'0'.repeat(64)}`), // refused: mismatch
      await send(a, bodyWith('y'), 'sha256=abc'), // refused: malformed
      await send(other, bodyWith('z')), // accepted, other endpoint
      await send(other, bodyWith('w'), `sha256=${'1'.repeat(64)}`), // refused, other endpoint
      await send(a, bodyWith('v')), // accepted
    ];
    expect(sent.map((s) => s.status)).toEqual([202, 200, 401, 401, 202, 401, 202]);
    const ids = sent.map((s) => String(s.json.receipt_id));
    const newestFirst = [...ids].reverse();
    const token = await tokenFor(shop.id);

    const all = await api(token, '/receipts');
    expect(all.status).toBe(200);
    expect(all.json.data.map((r: { id: string }) => r.id)).toEqual(newestFirst);
    expect(all.json.page).toEqual({ next_cursor: null, has_more: false, limit: 50 });
    // The list shows the same receipt the single read does.
    const single = await api(token, `/receipts/${ids[2]}`);
    expect(all.json.data.find((r: { id: string }) => r.id === ids[2])).toEqual(single.json);

    const q = async (query: string) =>
      (await api(token, `/receipts?${query}`)).json.data.map((r: { id: string }) => r.id);
    expect(await q(`endpoint_id=${a.endpoint.id}`)).toEqual([ids[6], ids[3], ids[2], ids[1], ids[0]]);
    expect(await q('result=refused')).toEqual([ids[5], ids[3], ids[2]]);
    expect(await q('result=accepted')).toEqual([ids[6], ids[4], ids[1], ids[0]]);
    expect(await q(`result=refused&endpoint_id=${other.endpoint.id}`)).toEqual([ids[5]]);
    expect(await q('error_code=signature_malformed')).toEqual([ids[3]]);
    expect(await q('result=accepted&error_code=signature_malformed')).toEqual([]);
    expect(await q(`received_after=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).toEqual([]);
    expect(await q(`received_before=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).toEqual(
      newestFirst,
    );

    // Pages of 2: every receipt exactly once, in order, whatever kind it is.
    const paged: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 10; i++) {
      const page = await api(token, `/receipts?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.json.page.limit).toBe(2);
      paged.push(...page.json.data.map((r: { id: string }) => r.id));
      cursor = page.json.page.next_cursor;
      expect(page.json.page.has_more).toBe(cursor !== null);
      if (!cursor) break;
    }
    expect(paged).toEqual(newestFirst);

    // Bad input: a clear 400 with the field named.
    const badResult = await api(token, '/receipts?result=rejected');
    expect(badResult.status).toBe(400);
    expect(badResult.json.code).toBe('invalid_request');
    const badCursor = await api(token, '/receipts?cursor=bm90LWEtY3Vyc29y');
    expect(badCursor.status).toBe(400);
    // An events-list cursor does not page receipts.
    const events = await api(token, '/events?limit=1');
    const eventsCursor = events.json.page.next_cursor as string;
    expect(eventsCursor).toBeTruthy();
    expect((await api(token, `/receipts?cursor=${encodeURIComponent(eventsCursor)}`)).status).toBe(400);

    // Another shop's grant lists none of them.
    const stranger = await tokenFor((await newShop(services)).id);
    expect((await api(stranger, '/receipts')).json.data).toEqual([]);
    expect((await api(stranger, `/receipts?endpoint_id=${a.endpoint.id}`)).json.data).toEqual([]);
  });
});

describe('refusals are counted beside accepted states', () => {
  it('an endpoint refusing 4 of 5 requests shows it in endpoint reads, setup and diagnostics', async () => {
    const services = server.runtime.services;
    const shop = await newShop(services);
    const ep = await newEndpoint(services, shop.id, { authMode: 'hmac_sha256' });
    const body = bodyWith('counts');
    const ok = await post(`${server.url}/in/${ep.endpoint.id}`, body, {
      'x-flowport-signature': `sha256=${hmacHex(ep.secret, body)}`,
    });
    expect(ok.status).toBe(202);
    for (const sig of [`sha256=${'0'.repeat(64)}`, `sha256=${'1'.repeat(64)}`, `sha256=${'2'.repeat(64)}`])
      expect((await post(`${server.url}/in/${ep.endpoint.id}`, body, { 'x-flowport-signature': sig })).status).toBe(
        401,
      );
    expect((await post(`${server.url}/in/${ep.endpoint.id}`, body, {})).status).toBe(401);
    const token = await tokenFor(shop.id);
    const expected = {
      total: 4,
      by_error_code: { signature_mismatch: 3, signature_missing: 1 },
      operation: 'listReceipts',
    };

    // The endpoint reads add the newest refusal: the request without a signature, sent last.
    const withLatest = {
      ...expected,
      latest: expect.objectContaining({ http_status: 401, error_code: 'signature_missing' }),
    };
    const one = await api(token, `/endpoints/${ep.endpoint.id}`);
    expect(one.json.recent.by_state).toEqual({ queued: 1 });
    expect(one.json.recent.refused).toEqual(withLatest);
    const list = await api(token, '/endpoints');
    expect(list.json.data.find((e: { id: string }) => e.id === ep.endpoint.id).recent.refused).toEqual(withLatest);

    const setup = await api(token, '/setup');
    expect(setup.json.refused_24h).toEqual({ window_hours: 24, ...expected });
    // Setup points at the operation that lists them, not at a field only diagnostics has.
    const rejections = setup.json.checks.find((c: { check: string }) => c.check === 'sender_rejections');
    expect(rejections.detail).toContain('listReceipts');
    expect(rejections.detail).not.toContain('recent_receipts');

    const diag = await api(token, `/diagnostics?endpoint_id=${ep.endpoint.id}`);
    expect(diag.json.refused_24h).toEqual({ window_hours: 24, ...expected });
  });
});
