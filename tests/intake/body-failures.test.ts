// Requests whose connection fails while intake reads the body, over real HTTP on loopback. The
// request timeout (FLOWPORT_HTTP_REQUEST_TIMEOUT_MS): a client that stalls mid-body or mid-headers
// gets 408 request_timeout as problem+json and its connection closes; a request that arrives in
// pieces inside the limit is accepted. Framing that breaks mid-body gets 400 malformed_http. At an
// ingest URL nothing is stored and the refusal has a receipt. Both intake paths (the Node fast
// path and the Hono route) answer alike.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrant } from '../../api/src/auth/grants.ts';
import { ENV, loadConfig } from '../../api/src/config.ts';
import { INTAKE_SUPPORT_CODES } from '../../api/src/errors/codes/intake.ts';
import { getShopReceipt, receiptIdForEvent } from '../../api/src/reads/receipts.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { newEndpoint, newShop, rawHttp } from './helpers.ts';

const TIMEOUT_MS = 400;
let server: TestServer;
let shopId: string;
let ep: { id: string; secret: string };

beforeAll(async () => {
  server = await startTestServer({ worker: false, env: { [ENV.httpRequestTimeoutMs]: String(TIMEOUT_MS) } });
  shopId = (await newShop(server.runtime.services)).id;
  const created = await newEndpoint(server.runtime.services, shopId, { authMode: 'hmac_sha256' });
  ep = { id: created.endpoint.id, secret: created.secret };
});
afterAll(async () => {
  await server?.close();
});

const PATHS = { 'fast path': (id: string) => `/in/${id}`, 'hono route': (id: string) => `/in/${id}?via=hono` };
const body = () => JSON.stringify({ type: 'order.paid', id: `e_${Math.random().toString(36).slice(2)}`, n: 1 });
/** The head of a signed request for `bytes` (the body follows separately, whole or in part). */
function head(path: string, bytes: Buffer, extra: Record<string, string> = {}): string {
  const sig = `sha256=${createHmac('sha256', ep.secret).update(bytes).digest('hex')}`;
  const headers = {
    Host: '127.0.0.1',
    'Content-Type': 'application/json',
    'X-Flowport-Signature': sig,
    'Content-Length': String(bytes.byteLength),
    ...extra,
  };
  return `POST ${path} HTTP/1.1\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;
}
/** The head of a signed chunked request for `bytes`. */
function chunkedHead(path: string, bytes: Buffer): string {
  return head(path, bytes, { 'Transfer-Encoding': 'chunked' }).replace(/Content-Length: \d+\r\n/, '');
}

interface Problem {
  code?: string;
  detail?: string;
  status?: number;
  type?: string;
  support_code?: string;
  receipt_id?: string;
}

async function eventsOf(requestId: string): Promise<number> {
  const row = await server.runtime.services.db.get<{ n: number | string }>(
    'SELECT COUNT(*) AS n FROM events WHERE request_id = ?',
    [requestId],
  );
  return Number(row?.n ?? 0);
}

describe.each(Object.entries(PATHS))('%s', (_name, path) => {
  it('a body that stalls gets 408 request_timeout with a receipt, nothing is stored, the connection closes', async () => {
    const bytes = Buffer.from(body());
    const started = Date.now();
    // Headers and a third of the body, then nothing: a stalled sender or one that lied about its length.
    const res = await rawHttp(server.port, [head(path(ep.id), bytes), bytes.subarray(0, 10)], { responses: 2 });
    const waited = Date.now() - started;
    expect(res.responses.map((r) => r.status)).toEqual([408]);
    expect(res.closed).toBe(true);
    expect(waited).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    const answer = res.responses[0];
    expect(answer?.headers['content-type']).toBe('application/problem+json');
    expect(answer?.headers.connection).toBe('close');
    const problem = JSON.parse(answer?.body ?? '{}') as Problem;
    expect(problem).toMatchObject({
      code: 'request_timeout',
      status: 408,
      support_code: INTAKE_SUPPORT_CODES.timeout.code,
    });
    expect(problem.type).toMatch(/\/reference\/errors\/request_timeout\/$/);
    expect(problem.detail).toContain(`within ${TIMEOUT_MS} ms`);
    // The receipt, read as the API reads it.
    const receipt = await getShopReceipt(server.runtime.services.db, shopId, problem.receipt_id as string);
    expect(receipt).toMatchObject({
      endpoint_id: ep.id,
      event_id: null,
      http_status: 408,
      error_code: 'request_timeout',
      support_code: INTAKE_SUPPORT_CODES.timeout.code,
      auth_result: 'not_checked',
      validation_result: 'not_checked',
    });
    const requestId = answer?.headers['x-request-id'] as string;
    expect(receipt?.request_id).toBe(requestId);
    expect(await eventsOf(requestId)).toBe(0);
  });

  it('on a keep-alive connection: the first request is accepted, the stalled second one gets 408 after it', async () => {
    const first = Buffer.from(body());
    const second = Buffer.from(body());
    const res = await rawHttp(
      server.port,
      [head(path(ep.id), first), first, head(path(ep.id), second), second.subarray(0, 5)],
      { responses: 3 },
    );
    expect(res.responses.map((r) => r.status)).toEqual([202, 408]);
    expect(res.closed).toBe(true);
    expect((JSON.parse(res.responses[1]?.body ?? '{}') as Problem).code).toBe('request_timeout');
    const accepted = JSON.parse(res.responses[0]?.body ?? '{}') as { event_id: string; receipt_id: string };
    expect(accepted.receipt_id).toBe(receiptIdForEvent(accepted.event_id));
  });

  it('pipelined in one write: the complete request is accepted, the stalled one after it gets 408 with a receipt', async () => {
    const first = Buffer.from(body());
    const second = Buffer.from(body());
    // One segment: the second request's body read starts before the first read's end is handled.
    const res = await rawHttp(
      server.port,
      [
        Buffer.concat([
          Buffer.from(head(path(ep.id), first)),
          first,
          Buffer.from(head(path(ep.id), second)),
          second.subarray(0, 5),
        ]),
      ],
      { responses: 3 },
    );
    expect(res.responses.map((r) => r.status)).toEqual([202, 408]);
    expect(res.closed).toBe(true);
    const problem = JSON.parse(res.responses[1]?.body ?? '{}') as Problem;
    expect(problem.code).toBe('request_timeout');
    expect(await getShopReceipt(server.runtime.services.db, shopId, problem.receipt_id as string)).toMatchObject({
      error_code: 'request_timeout',
    });
  });

  it('chunked framing that breaks mid-body gets 400 malformed_http with a receipt, nothing is stored', async () => {
    const bytes = Buffer.from(body());
    // A good chunk, then a chunk size that is not hex.
    const res = await rawHttp(server.port, [chunkedHead(path(ep.id), bytes), '5\r\n{"a":\r\nzz\r\n'], {
      responses: 2,
    });
    expect(res.responses.map((r) => r.status)).toEqual([400]);
    expect(res.closed).toBe(true);
    const answer = res.responses[0];
    expect(answer?.headers['content-type']).toBe('application/problem+json');
    const problem = JSON.parse(answer?.body ?? '{}') as Problem;
    expect(problem).toMatchObject({ code: 'malformed_http', support_code: INTAKE_SUPPORT_CODES.media.code });
    const receipt = await getShopReceipt(server.runtime.services.db, shopId, problem.receipt_id as string);
    expect(receipt).toMatchObject({
      http_status: 400,
      error_code: 'malformed_http',
      auth_result: 'not_checked',
      validation_result: 'not_checked',
    });
    expect(await eventsOf(answer?.headers['x-request-id'] as string)).toBe(0);
  });

  it('framing that breaks before the body read starts (the endpoint still being looked up) gets the same answer', async () => {
    // A fresh endpoint is not cached: intake looks it up in the store before it reads the body,
    // and the bad chunk arrives in the same segment as the headers. On PostgreSQL the lookup waits
    // on the network, so Node reports the break first (on SQLite the lookup settles before).
    const fresh = await newEndpoint(server.runtime.services, shopId, { authMode: 'hmac_sha256' });
    const bytes = Buffer.from(body());
    const res = await rawHttp(server.port, [`${chunkedHead(path(fresh.endpoint.id), bytes)}5\r\n{"a":\r\nzz\r\n`], {
      responses: 2,
    });
    expect(res.responses.map((r) => r.status)).toEqual([400]);
    expect(res.closed).toBe(true);
    const problem = JSON.parse(res.responses[0]?.body ?? '{}') as Problem;
    expect(problem).toMatchObject({ code: 'malformed_http', support_code: INTAKE_SUPPORT_CODES.media.code });
    expect(await getShopReceipt(server.runtime.services.db, shopId, problem.receipt_id as string)).toMatchObject({
      endpoint_id: fresh.endpoint.id,
      error_code: 'malformed_http',
    });
  });

  it('bytes that arrive after the framing broke, before the answer, get no second answer', async () => {
    // The parser reports each later chunk as another error; the receipt's commit takes a few ms.
    for (const gapMs of [0, 1, 2, 4]) {
      const bytes = Buffer.from(body());
      const res = await rawHttp(
        server.port,
        [chunkedHead(path(ep.id), bytes), '5\r\n{"a":\r\nzz\r\n', 'yy\r\nmore\r\n', 'zz\r\n'],
        { responses: 2, gapMs },
      );
      expect(res.responses.map((r) => r.status)).toEqual([400]);
      expect(JSON.parse(res.responses[0]?.body ?? '{}')).toMatchObject({
        code: 'malformed_http',
        receipt_id: expect.stringMatching(/^rcpt_/),
      });
    }
  });

  it('a body sent in pieces that ends inside the timeout is accepted', async () => {
    const bytes = Buffer.from(body());
    const third = Math.ceil(bytes.byteLength / 3);
    const started = Date.now();
    const parts = [bytes.subarray(0, third), bytes.subarray(third, 2 * third), bytes.subarray(2 * third)];
    const res = await rawHttp(server.port, [head(path(ep.id), bytes), ...parts], { gapMs: TIMEOUT_MS / 16 });
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS);
    expect(res.responses.map((r) => r.status)).toEqual([202]);
  });
});

it('headers that never end get 408 request_timeout as problem+json, and the connection closes', async () => {
  const res = await rawHttp(server.port, [`POST /in/${ep.id} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl`], {
    responses: 2,
  });
  expect(res.responses.map((r) => r.status)).toEqual([408]);
  expect(res.closed).toBe(true);
  const problem = JSON.parse(res.responses[0]?.body ?? '{}') as Problem;
  expect(problem).toMatchObject({ code: 'request_timeout', status: 408 });
  expect(problem.detail).toContain(`within ${TIMEOUT_MS} ms`);
  expect(problem.type).toMatch(/\/reference\/errors\/request_timeout\/$/);
});

it('an Agent Operations request whose body stalls gets the same 408 request_timeout', async () => {
  const { token } = await createGrant(server.runtime.services, {
    shopId,
    tier: 'admin_assistant',
    actorKind: 'agent',
    actorName: 'slow client',
    expiresInMs: 3_600_000,
  });
  // Authenticated, so the route goes on to read the body, which never completes.
  const res = await rawHttp(
    server.port,
    [
      'POST /agent/v1/events/evt_00000000000000000000000000/replay-intents HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
        `Authorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"rea`,
    ],
    { responses: 2 },
  );
  expect(res.responses.map((r) => r.status)).toEqual([408]);
  expect(res.closed).toBe(true);
  expect((JSON.parse(res.responses[0]?.body ?? '{}') as Problem).code).toBe('request_timeout');
});

it('the timeout is configured once: too short or not a number is refused at start, naming the variable', () => {
  expect(() => loadConfig({ [ENV.httpRequestTimeoutMs]: '50' })).toThrow(ENV.httpRequestTimeoutMs);
  expect(() => loadConfig({ [ENV.httpRequestTimeoutMs]: 'soon' })).toThrow(ENV.httpRequestTimeoutMs);
  expect(loadConfig({}).http.requestTimeoutMs).toBe(30_000);
});
