// Intake at the HTTP level as senders and attackers reach it, beyond bad-input.test.ts:
// raw sockets for chunked framing, pipelined requests on one keep-alive connection and
// senders that go away mid-body; compressed bodies; numeric external ids past 2^53.
// `/in/<id>` is answered by the Node fast path, `/in/<id>?via=hono` by the Hono route:
// both must answer the same.
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { getRequestListener } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installClientErrorHandler } from '../../api/src/http/client-error.ts';
import { Intake, type IntakeRequest, SenderGoneError } from '../../api/src/intake/intake.ts';
import { readNodeBody, withIntakeFastPath } from '../../api/src/http/node-intake.ts';
import { readBodyCapped } from '../../api/src/http/intake-routes.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { newEndpoint, newShop, post, rawHttp } from './helpers.ts';

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
/** One HTTP/1.1 request with a Content-Length, signed for `ep` unless the headers say otherwise. */
function request(path: string, body: string | Uint8Array, headers: Record<string, string> = {}, method = 'POST') {
  const bytes = Buffer.from(body);
  const all: Record<string, string> = {
    Host: '127.0.0.1',
    'Content-Type': 'application/json',
    'X-Flowport-Signature': sign(bytes),
    'Content-Length': String(bytes.byteLength),
    ...headers,
  };
  const head = Object.entries(all)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return Buffer.concat([Buffer.from(`${method} ${path} HTTP/1.1\r\n${head}\r\n`), bytes]);
}
const chunk = (data: string) => `${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`;

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

it('a refused malformed request does not keep its socket when the client never closes its side', async () => {
  const http = createServer((_req, res) => res.end());
  installClientErrorHandler(http, server.url);
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
  const connections = () => new Promise<number>((r) => http.getConnections((_e, n) => r(n)));
  // allowHalfOpen: this client reads the answer and never sends its FIN, as a stuck or hostile one would.
  const socket = connect({ port: (http.address() as AddressInfo).port, host: '127.0.0.1', allowHalfOpen: true });
  let answer = '';
  const answered = new Promise<void>((resolve) => socket.on('end', () => resolve()));
  socket.on('data', (d: Buffer) => {
    answer += d.toString('latin1');
  });
  socket.write('POST /in/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n');
  await answered;
  expect(answer).toMatch(/^HTTP\/1\.1 400 /);
  expect(await connections()).toBe(1); // lingering so the client can read the answer
  // Destroyed after the linger (5 s); the bound only keeps a broken build from hanging.
  for (let i = 0; i < 100 && (await connections()) > 0; i++) await new Promise((r) => setTimeout(r, 100));
  expect(await connections()).toBe(0);
  socket.destroy();
  await new Promise<void>((r) => http.close(() => r()));
}, 20_000);

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

  it('a compressed transfer coding (gzip, chunked) is refused with 415 like a compressed body; chunked alone passes', async () => {
    const body = uniqueBody();
    const gz = gzipSync(body);
    const head = (te: string, sig: string) =>
      `POST ${path(ep.id)} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Flowport-Signature: ${sig}\r\nTransfer-Encoding: ${te}\r\n\r\n`;
    const gzChunk = Buffer.concat([Buffer.from(`${gz.byteLength.toString(16)}\r\n`), gz, Buffer.from('\r\n0\r\n\r\n')]);
    const refused = await rawHttp(server.port, [head('gzip, chunked', sign(gz)), gzChunk]);
    expect(refused.responses.map((r) => [r.status, JSON.parse(r.body).code])).toEqual([
      [415, 'unsupported_media_type'],
    ]);
    expect(JSON.parse(refused.responses[0]?.body ?? '{}').detail).toContain('Transfer-Encoding');
    const plain = uniqueBody();
    const ok = await rawHttp(server.port, [head('Chunked', sign(plain)), chunk(plain), '0\r\n\r\n']);
    expect(ok.responses.map((r) => r.status)).toEqual([202]);
  });

  it('chunked bodies: accepted whole; past the limit only after several chunks → 413 with a receipt, connection closed', async () => {
    const body = uniqueBody({ pad: 'x'.repeat(3000) });
    const head = (sig: string) =>
      `POST ${path(ep.id)} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Flowport-Signature: ${sig}\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const pieces: string[] = [];
    for (let i = 0; i < body.length; i += 700) pieces.push(chunk(body.slice(i, i + 700)));
    const ok = await rawHttp(server.port, [head(sign(body)), ...pieces, '0\r\n\r\n']);
    expect(ok.responses.map((r) => [r.status, JSON.parse(r.body).status])).toEqual([[202, 'queued']]);

    const max = server.runtime.services.config.intake.maxBodyBytes;
    const piece = chunk('x'.repeat(64 * 1024));
    const n = Math.ceil(max / (64 * 1024)) + 2;
    const big = await rawHttp(
      server.port,
      [
        head(`sha256=${'0'.repeat(64)}`),
        ...Array<string>(n).fill(piece),
        '0\r\n\r\n',
        request(path(ep.id), uniqueBody()),
      ],
      { responses: 2 },
    );
    expect(big.responses.map((r) => [r.status, JSON.parse(r.body).code])).toEqual([[413, 'payload_too_large']]);
    expect(JSON.parse(big.responses[0]?.body ?? '{}').receipt_id).toMatch(/^rcpt_/);
    // The connection closes: the request behind the oversized body gets no answer.
    expect(big.closed).toBe(true);
    expect(await storedFor([big.responses[0]?.headers['x-request-id']])).toEqual({
      events: 0,
      receipts: ['payload_too_large'],
    });
  });

  it('after each kind of rejection the next request on the same connection is read correctly', async () => {
    const good = uniqueBody();
    const { responses, closed } = await rawHttp(
      server.port,
      [
        request(path('ep_00000000000000000000000000'), uniqueBody()),
        request(path(ep.id), uniqueBody(), { 'X-Flowport-Signature': `sha256=${'0'.repeat(64)}` }),
        request(path(ep.id), uniqueBody(), { 'Content-Type': 'text/plain' }),
        request(path(ep.id), '{"type":', {}),
        request(path(ep.id), 'hello', {}, 'PUT'),
        // A body whose own bytes look like a request: it must stay a body.
        request(path(ep.id), `GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`),
        request(path(ep.id), good),
      ],
      { responses: 7 },
    );
    expect(closed).toBe(false);
    expect(responses.map((r) => [r.status, r.headers['content-type'], JSON.parse(r.body).code ?? 'ok'])).toEqual([
      [404, 'application/problem+json', 'not_found'],
      [401, 'application/problem+json', 'signature_mismatch'],
      [415, 'application/problem+json', 'unsupported_media_type'],
      [400, 'application/problem+json', 'invalid_json'],
      [405, 'application/problem+json', 'method_not_allowed'],
      [400, 'application/problem+json', 'invalid_json'],
      [202, 'application/json', 'ok'],
    ]);
    for (const r of responses) expect(r.headers['x-request-id']).toMatch(/^req_/);
    expect(responses[4]?.headers.allow).toBe('POST');
    const ev = await server.runtime.services.db.get<{ body: string }>('SELECT body FROM events WHERE id = ?', [
      JSON.parse(responses[6]?.body ?? '{}').event_id,
    ]);
    expect(ev?.body).toBe(good);
  });

  it('a repeated Content-Type or Authorization is read whole (as web Headers reads it), never just its first value', async () => {
    const basic = await newEndpoint(server.runtime.services, shopId, { authMode: 'basic' });
    const user = basic.config.basic?.username ?? '';
    const auth = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
    const body = uniqueBody();
    const twoTypes = `POST ${path(ep.id)} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\ncontent-type: text/plain\r\nX-Flowport-Signature: ${sign(body)}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const twoAuths = `POST ${path(basic.endpoint.id)} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: ${auth(user, basic.secret)}\r\nAuthorization: ${auth('someone', 'else')}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const { responses } = await rawHttp(server.port, [twoTypes, twoAuths], { responses: 2 });
    expect(responses.map((r) => [r.status, JSON.parse(r.body).code])).toEqual([
      [415, 'unsupported_media_type'],
      [401, 'credentials_invalid'],
    ]);
  });

  it('Transfer-Encoding with Content-Length (a smuggling shape) is refused and nothing is stored', async () => {
    const body = uniqueBody();
    const res = await rawHttp(
      server.port,
      [
        `POST ${path(ep.id)} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Flowport-Signature: ${sign(body)}\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n`,
        chunk(body),
        '0\r\n\r\n',
        request(path(ep.id), uniqueBody()),
      ],
      { responses: 2 },
    );
    // Refused before any route, and the connection closes: nothing behind it is read as a request.
    // Node's parser refuses it; Flowport still answers problem+json with a catalog code.
    expect(res.responses.map((r) => r.status)).toEqual([400]);
    const refused = res.responses[0];
    expect(refused?.headers['content-type']).toBe('application/problem+json');
    const problem = JSON.parse(refused?.body ?? '{}') as { code?: string; docs_url?: string; status?: number };
    expect([problem.code, problem.status]).toEqual(['malformed_http', 400]);
    expect(problem.docs_url).toBe(`http://127.0.0.1:${server.port}/reference/errors/malformed_http/`);
    expect(res.closed).toBe(true);
    const n = await server.runtime.services.db.get<{ n: number }>(
      'SELECT COUNT(*) AS n FROM events WHERE endpoint_id = ? AND body = ?',
      [ep.id, body],
    );
    expect(Number(n?.n)).toBe(0);
  });

  // The Hono route's adapter (@hono/node-server) drains such a body for at most 500 ms or 64 MiB, then closes.
  it.runIf(path === PATHS['fast path'])(
    'a refusal sent before a long body is read (unknown endpoint) closes the connection instead of reading the rest',
    async () => {
      const unknown = 'ep_00000000000000000000000000';
      // Declares 50 MB and sends 1 KiB: the answer must not wait for (or read) the other 49.9 MB.
      const res = await rawHttp(
        server.port,
        [
          `POST ${path(unknown)} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 50000000\r\n\r\n`,
          'x'.repeat(1024),
        ],
        { responses: 2 },
      );
      expect(res.responses.map((r) => [r.status, r.headers.connection])).toEqual([[404, 'close']]);
      expect(res.closed).toBe(true);
    },
  );

  it('headers over the parser limit get 431 headers_too_large as problem+json, and the connection closes', async () => {
    // A valid request follows on the same connection: it is never read.
    const res = await rawHttp(
      server.port,
      [request(path(ep.id), uniqueBody(), { 'X-Padding': 'a'.repeat(20_000) }), request(path(ep.id), uniqueBody())],
      { responses: 2 },
    );
    expect(res.responses.map((r) => r.status)).toEqual([431]);
    const problem = JSON.parse(res.responses[0]?.body ?? '{}') as { code?: string };
    expect(problem.code).toBe('headers_too_large');
    expect(res.closed).toBe(true);
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

describe('a sender that goes away mid-body', () => {
  /** A server on the fast path with a real Intake whose handle() calls are observable. */
  async function fastPathServer(gate: (req: IntakeRequest) => Promise<void>) {
    const intake = new Intake(server.runtime.services);
    const logs: string[] = [];
    const handled: Promise<unknown>[] = [];
    const observed = {
      handle: (req: IntakeRequest) => {
        const p = gate(req).then(() => intake.handle(req));
        handled.push(
          p.then(
            () => 'answered',
            (err: unknown) => err,
          ),
        );
        return p;
      },
    } as unknown as Intake;
    const http = createServer(
      withIntakeFastPath(
        () => observed,
        server.url,
        (_req, res) => res.end(),
        (line) => logs.push(line),
      ),
    );
    const sockets: Socket[] = [];
    http.on('connection', (s: Socket) => sockets.push(s));
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
    return { http, logs, handled, sockets, port: (http.address() as AddressInfo).port, intake };
  }
  const close = (http: Server) =>
    new Promise<void>((r) => {
      http.close(() => r());
      http.closeAllConnections();
    });
  /** Sends the head and part of a body of `length` bytes, then resolves when the server called handle(). */
  function halfRequest(port: number, urlPath: string, seen: () => boolean) {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    socket.write(
      `POST ${urlPath} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Flowport-Signature: sha256=${'0'.repeat(64)}\r\nContent-Length: 1000\r\n\r\n{"type":"a",`,
    );
    return new Promise<Socket>((resolve) => {
      const poll = () => (seen() ? resolve(socket) : setImmediate(poll));
      poll();
    });
  }

  it('fast path: the read ends with SenderGoneError and nothing is logged as unexpected', async () => {
    const s = await fastPathServer(async () => {});
    try {
      const client = await halfRequest(s.port, `/in/${ep.id}`, () => s.handled.length === 1);
      client.destroy();
      const outcome = await s.handled[0];
      expect(outcome).toBeInstanceOf(SenderGoneError);
      expect(s.logs).toEqual([]);
      // Closed before intake even began to read (the lookup is async): the read ends the same way.
      let serverSocketClosed: Promise<void> = Promise.resolve();
      const late = await fastPathServer(async () => {
        await serverSocketClosed;
      });
      try {
        late.http.on('connection', (sock: Socket) => {
          serverSocketClosed = new Promise((r) => sock.once('close', () => r()));
        });
        const c2 = await halfRequest(late.port, `/in/${ep.id}`, () => late.handled.length === 1);
        c2.destroy();
        expect(await late.handled[0]).toBeInstanceOf(SenderGoneError);
        expect(late.logs).toEqual([]);
      } finally {
        await close(late.http);
      }
    } finally {
      await close(s.http);
    }
  });

  it('both body readers report SenderGoneError (not a raw stream error to be logged as unexpected)', async () => {
    const outcomes: unknown[] = [];
    const settled: (() => void)[] = [];
    const wait = () => new Promise<void>((r) => settled.push(r));
    const record = (p: Promise<unknown>) =>
      p
        .then(
          () => outcomes.push('read'),
          (err: unknown) => outcomes.push(err),
        )
        .finally(() => settled.shift()?.());
    let seen = 0;
    const nodeServer = createServer((req: IncomingMessage, res) => {
      seen++;
      void record(readNodeBody(req, 1 << 20)).finally(() => res.end());
    });
    const honoServer = createServer(
      getRequestListener(async (req) => {
        seen++;
        await record(readBodyCapped(req, 1 << 20));
        return new Response(null, { status: 204 });
      }),
    );
    try {
      for (const srv of [nodeServer, honoServer]) {
        await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
        const before = seen;
        const done = wait();
        const client = await halfRequest((srv.address() as AddressInfo).port, '/x', () => seen > before);
        client.destroy();
        await done;
      }
      expect(outcomes.map((o) => o instanceof SenderGoneError)).toEqual([true, true]);
    } finally {
      await close(nodeServer);
      await close(honoServer);
    }
  });
});
