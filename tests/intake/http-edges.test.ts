// Intake at the HTTP level as senders and attackers reach it, beyond bad-input.test.ts:
// raw sockets for chunked framing, pipelined requests on one keep-alive connection and
// senders that go away mid-body; compressed bodies; numeric external ids past 2^53.
// `/in/<id>` is answered by the Node fast path, `/in/<id>?via=hono` by the Hono route:
// both must answer the same.
import { createHmac } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { newEndpoint, newShop, post } from './helpers.ts';

let server: TestServer;
let shopId: string;
let ep: { id: string; secret: string };

beforeAll(async () => {
  server = await startTestServer({ worker: false });
  shopId = (await newShop(server.runtime.services)).id;
  const created = await newEndpoint(server.runtime.services, shopId, {
    authMode: 'hmac_sha256',
    mapping: { externalId: { kind: 'json', path: 'id' } },
  });
  ep = { id: created.endpoint.id, secret: created.secret };
});
afterAll(async () => {
  await server?.close();
});

const PATHS = { 'fast path': (id: string) => `/in/${id}`, 'hono route': (id: string) => `/in/${id}?via=hono` };
const sign = (body: string | Uint8Array) => `sha256=${createHmac('sha256', ep.secret).update(body).digest('hex')}`;
const uniqueBody = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ type: 'order.paid', id: `e_${Math.random().toString(36).slice(2)}`, ...extra });

async function storedFor(requestIds: (string | undefined)[]) {
  const ids = requestIds.filter((x): x is string => typeof x === 'string');
  const db = server.runtime.services.db;
  const marks = ids.map(() => '?').join(', ');
  const events = await db.all<{ request_id: string }>(
    `SELECT request_id FROM events WHERE request_id IN (${marks})`,
    ids,
  );
  const receipts = await db.all<{ request_id: string; error_code: string }>(
    `SELECT request_id, error_code FROM receipts WHERE request_id IN (${marks})`,
    ids,
  );
  return { events: events.length, receipts: receipts.map((r) => r.error_code) };
}

describe.each(Object.entries(PATHS))('%s', (_name, path) => {
  it('a compressed body is refused with 415 unsupported_media_type and a receipt; identity passes', async () => {
    const body = uniqueBody();
    const gz = gzipSync(body);
    const url = `${server.url}${path(ep.id)}`;
    const requestIds: (string | undefined)[] = [];
    for (const [encoding, sent, signedOver] of [
      ['gzip', gz, gz],
      ['gzip', gz, Buffer.from(body)],
      ['GZIP', gz, gz],
      // A plain body labelled as compressed is refused too: the label says the bytes are not JSON.
      ['br', Buffer.from(uniqueBody()), null],
      ['gzip, identity', gz, gz],
    ] as const) {
      const res = await post(url, sent, {
        'content-encoding': encoding,
        'x-flowport-signature': sign(signedOver ?? sent),
      });
      expect([encoding, res.status, res.json.code]).toEqual([encoding, 415, 'unsupported_media_type']);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(String(res.json.detail)).toContain('uncompressed');
      expect(res.json).toMatchObject({ support_code: 'FP-I-MEDIA', receipt_id: expect.stringMatching(/^rcpt_/) });
      requestIds.push(res.headers.get('x-request-id') ?? undefined);
    }
    expect(await storedFor(requestIds)).toEqual({ events: 0, receipts: Array(5).fill('unsupported_media_type') });
    for (const encoding of ['identity', 'Identity', '']) {
      const plain = uniqueBody();
      const ok = await post(url, plain, { 'content-encoding': encoding, 'x-flowport-signature': sign(plain) });
      expect([encoding, ok.status, ok.json.status]).toEqual([encoding, 202, 'queued']);
    }
  });

  it('numeric external ids past 2^53 keep their digits: two different ids are two events, the same id is a duplicate', async () => {
    const url = `${server.url}${path(ep.id)}`;
    // Both parse to the same double (12345678901234567000), and so would their dedupe keys if read as numbers.
    const suffix = String(Math.floor(Math.random() * 1e6)).padStart(6, '0');
    const a = `{"type":"order.paid","id":9${suffix}234567891234}`;
    const b = `{"type":"order.paid","id":9${suffix}234567891235}`;
    const first = await post(url, a, { 'x-flowport-signature': sign(a) });
    const second = await post(url, b, { 'x-flowport-signature': sign(b) });
    const again = await post(url, a, { 'x-flowport-signature': sign(a) });
    expect([first.status, second.status, again.status]).toEqual([202, 202, 200]);
    expect(again.json.duplicate_of).toBe(first.json.event_id);
    const ext = await server.runtime.services.db.all<{ external_event_id: string }>(
      'SELECT external_event_id FROM events WHERE id IN (?, ?) ORDER BY received_at, id',
      [first.json.event_id as string, second.json.event_id as string],
    );
    expect(ext.map((r) => r.external_event_id).sort()).toEqual(
      [`9${suffix}234567891234`, `9${suffix}234567891235`].sort(),
    );
  });
});
