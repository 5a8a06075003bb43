// Shopify answers the sandbox does not script, played by a real local HTTP
// server: a call Shopify accepted whose answer never came back in time, and
// other edges of the wire (see REFERENCE-FACTS.md, "Shopify Flow").
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createGrant } from '../../api/src/auth/grants.ts';
import { MAY_HAVE_REACHED_FLOW_NOTE } from '../../api/src/handoff/flow-client.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import {
  attemptsOf,
  eventRow,
  insertEvent,
  makeShop,
  postSigned,
  TERMINAL,
  waitFor,
  workerSettings,
} from './helpers.ts';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const REQUEST_TIMEOUT_MS = 1_000;
const MAX_ATTEMPTS = 4;

interface Call {
  url: string;
  headers: IncomingMessage['headers'];
  body: { query?: string; variables?: { handle?: string; payload?: Record<string, unknown> } };
}

/** A scripted Shopify: every call is recorded, then answered by the script of its shop path. */
class FakeShopify {
  readonly calls: Call[] = [];
  private readonly scripts = new Map<string, (call: Call, n: number, res: ServerResponse) => void>();
  private readonly open = new Set<ServerResponse>();
  private server: Server | null = null;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let raw = '';
      req.on('data', (d: Buffer) => {
        raw += d.toString();
      });
      req.on('end', () => {
        const call: Call = { url: req.url ?? '', headers: req.headers, body: JSON.parse(raw || '{}') };
        this.calls.push(call);
        const shop = call.url.split('/')[1] ?? '';
        const script = this.scripts.get(shop);
        const n = this.calls.filter((c) => c.url.startsWith(`/${shop}/`)).length;
        this.open.add(res);
        res.on('close', () => this.open.delete(res));
        if (script) script(call, n, res);
        else accept(res);
      });
    });
    this.server.listen(0, '127.0.0.1');
    await new Promise<void>((r) => this.server?.once('listening', () => r()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  script(shop: string, fn: (call: Call, n: number, res: ServerResponse) => void): string {
    this.scripts.set(shop, fn);
    return `${this.url}/${shop}`;
  }

  callsFor(shop: string): Call[] {
    return this.calls.filter((c) => c.url.startsWith(`/${shop}/`));
  }

  async close(): Promise<void> {
    for (const res of this.open) res.destroy();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

const THROTTLE = { maximumAvailable: 2000, currentlyAvailable: 1999, restoreRate: 100 };

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function accept(res: ServerResponse): void {
  json(res, 200, {
    data: { flowTriggerReceive: { userErrors: [] } },
    extensions: { cost: { requestedQueryCost: 1, actualQueryCost: 1, throttleStatus: THROTTLE } },
  });
}

let server: TestServer;
const shopify = new FakeShopify();

beforeAll(async () => {
  await shopify.start();
  server = await startTestServer({
    configure: workerSettings({
      retryBaseMs: 10,
      retryCapMs: 50,
      maxAttempts: MAX_ATTEMPTS,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      leaseMs: 30_000,
    }),
  });
});
afterAll(async () => {
  await server?.close();
  await shopify.close();
});

const services = () => server.runtime.services;
const terminal = async (id: string) => {
  const row = await eventRow(services(), id);
  return TERMINAL.has(row.state) ? row : null;
};

describe('Shopify edges', () => {
  it('Shopify takes the call but its answer comes after the timeout: the retry is counted as a possible duplicate', async () => {
    const name = 'late-answer';
    // The first call reaches Shopify (Flow would start a run) but the answer never comes in time.
    const base = shopify.script(name, (_call, n, res) => {
      if (n === 1) setTimeout(() => accept(res), REQUEST_TIMEOUT_MS * 5).unref();
      else accept(res);
    });
    const { shop, endpointId } = await makeShop(services(), { adminBaseUrl: base });
    const id = await insertEvent(services(), shop.id, endpointId);
    const row = await waitFor(() => terminal(id), 'delivered after a timeout');
    expect(row.state).toBe('delivered');
    const attempts = await attemptsOf(services(), id);
    expect(attempts[0]?.outcome).toBe('timeout');
    // Flow saw the event more than once; the event says so.
    const seen = shopify.callsFor(name).filter((c) => c.body.variables?.payload?.['Flowport event id'] === id);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    const timeouts = attempts.filter((a) => a.outcome === 'timeout').length;
    expect(row.possible_duplicate_deliveries).toBe(timeouts);
    expect(row.possible_duplicate_deliveries).toBeGreaterThanOrEqual(1);
  });

  it('a Shopify that never answers: every attempt times out, the event fails exhausted and says Flow may have run it', async () => {
    const name = 'hung';
    const base = shopify.script(name, () => {
      // never answers
    });
    const { shop, endpointId } = await makeShop(services(), { adminBaseUrl: base });
    const id = await insertEvent(services(), shop.id, endpointId);
    const row = await waitFor(() => terminal(id), 'exhausted');
    expect(row).toMatchObject({ state: 'failed', support_code: 'FP-H-EXH', attempt_count: MAX_ATTEMPTS });
    const attempts = await attemptsOf(services(), id);
    expect(attempts.map((a) => a.outcome)).toEqual(Array(MAX_ATTEMPTS).fill('timeout'));
    expect(row.possible_duplicate_deliveries).toBe(MAX_ATTEMPTS);
    expect(attempts[0]?.flow_response).toContain(MAY_HAVE_REACHED_FLOW_NOTE);

    // A replay preview must not read as if Flow never saw the event.
    const grant = await createGrant(services(), {
      shopId: shop.id,
      tier: 'operator',
      actorKind: 'agent',
      actorName: 'edge-test',
      expiresInMs: 3_600_000,
    });
    const res = await fetch(`${server.url}/agent/v1/events/${id}/replay-intents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${grant.token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(201);
    const preview = ((await res.json()) as { preview: { warnings: string[]; details: Record<string, any> } }).preview;
    expect(preview.details.duplicate_side_effects).toMatchObject({
      last_delivered_at: null,
      possible_unconfirmed_deliveries: MAX_ATTEMPTS,
    });
    expect(preview.warnings.join('\n')).toContain(`Flow may already have run this event: ${MAX_ATTEMPTS} of its calls`);
  });

  it('the connection breaks after Shopify read the call: counted as a possible duplicate; a refused connection is not', async () => {
    const name = 'reset-after-read';
    const base = shopify.script(name, (_call, n, res) => {
      if (n === 1) res.socket?.destroy();
      else accept(res);
    });
    const { shop, endpointId } = await makeShop(services(), { adminBaseUrl: base });
    const id = await insertEvent(services(), shop.id, endpointId);
    const row = await waitFor(() => terminal(id), 'delivered after a reset');
    expect(row.state).toBe('delivered');
    const attempts = await attemptsOf(services(), id);
    expect(attempts[0]?.outcome).toBe('connection_error');
    expect(shopify.callsFor(name).filter((c) => c.body.variables?.payload?.['Flowport event id'] === id).length).toBe(
      attempts.length,
    );
    expect(row.possible_duplicate_deliveries).toBe(attempts.length - 1);

    // Nothing listens on this port: every call is refused before Shopify could see it.
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const refused = await makeShop(services(), { adminBaseUrl: `http://127.0.0.1:${port}/refused` });
    const rid = await insertEvent(services(), refused.shop.id, refused.endpointId);
    const rrow = await waitFor(() => terminal(rid), 'exhausted while refused');
    expect(rrow).toMatchObject({ state: 'failed', support_code: 'FP-H-EXH', possible_duplicate_deliveries: 0 });
    expect((await attemptsOf(services(), rid)).map((a) => a.outcome)).toEqual(
      Array(MAX_ATTEMPTS).fill('connection_error'),
    );
  });

  it('a redirect is not followed: the access token and the payload never reach the Location', async () => {
    const elsewhere = new FakeShopify();
    await elsewhere.start();
    try {
      const name = 'redirecting';
      const base = shopify.script(name, (_call, _n, res) => {
        res.writeHead(307, { location: `${elsewhere.url}/stolen/admin/api/x/graphql.json` }).end();
      });
      const { shop, endpointId } = await makeShop(services(), { adminBaseUrl: base });
      const id = await insertEvent(services(), shop.id, endpointId);
      const row = await waitFor(() => terminal(id), 'exhausted on redirects');
      expect(row).toMatchObject({ state: 'failed', support_code: 'FP-H-EXH' });
      const attempts = await attemptsOf(services(), id);
      expect(attempts.map((a) => [a.outcome, a.http_status])).toEqual(
        Array(MAX_ATTEMPTS).fill(['upstream_error', 307]),
      );
      expect(attempts[0]?.flow_response).toContain('redirect; not followed');
      expect(shopify.callsFor(name)).toHaveLength(MAX_ATTEMPTS);
      expect(elsewhere.calls).toEqual([]);
    } finally {
      await elsewhere.close();
    }
  });

  it('a 200 that is not JSON (a proxy page) is retried, and the attempt says what came back without the body', async () => {
    const name = 'html-page';
    const base = shopify.script(name, (_call, n, res) => {
      if (n === 1) res.writeHead(200, { 'content-type': 'text/html' }).end('<html>Bad gateway, try later</html>');
      else accept(res);
    });
    const { shop, endpointId } = await makeShop(services(), { adminBaseUrl: base });
    const id = await insertEvent(services(), shop.id, endpointId);
    const row = await waitFor(() => terminal(id), 'delivered after a non-JSON answer');
    expect(row.state).toBe('delivered');
    const [first] = await attemptsOf(services(), id);
    expect(first).toMatchObject({ outcome: 'upstream_error', http_status: 200 });
    expect(first?.flow_response).toContain('the response was not JSON');
    expect(first?.flow_response).toContain('text/html');
    expect(first?.flow_response).not.toContain('Bad gateway');
  });

  it('the in-process stand-in does not serve its record or fault switches through a proxy or tunnel', async () => {
    const sandbox = `${server.url}/sandbox/shopify`;
    const creds = server.sandbox!;
    const sent = await postSigned(creds.ingest_url, creds.signing_secret, JSON.stringify({ type: 'order.paid' }));
    const { event_id } = (await sent.json()) as { event_id: string };
    await waitFor(async () => (await eventRow(services(), event_id)).state === 'delivered', 'sandbox delivery');
    const local = await fetch(`${sandbox}/triggers`);
    expect(local.status).toBe(200);
    expect(((await local.json()) as { triggers: unknown[] }).triggers.length).toBeGreaterThan(0);
    for (const via of [
      { 'x-forwarded-for': '203.0.113.7' },
      { forwarded: 'for=203.0.113.7' },
      { 'x-real-ip': '203.0.113.7' },
    ]) {
      const read = await fetch(`${sandbox}/triggers`, { headers: via });
      expect(read.status).toBe(404);
      const text = await read.text();
      expect(text).toContain('not_found');
      expect(text).not.toContain('Flowport event id');
      const fault = await fetch(`${sandbox}/_faults/*`, {
        method: 'POST',
        headers: { ...via, 'content-type': 'application/json' },
        body: JSON.stringify({ mode: 'http_500' }),
      });
      expect(fault.status).toBe(404);
      const call = await fetch(`${sandbox}/anyshop.myshopify.com/admin/api/2026-10/graphql.json`, {
        method: 'POST',
        headers: { ...via, 'content-type': 'application/json', 'x-shopify-access-token': 'shpat_x' },
        body: JSON.stringify({ query: 'mutation flowTriggerReceive', variables: { handle: 'x', payload: { a: 1 } } }),
      });
      expect(call.status).toBe(404);
    }
    expect(server.runtime.sandbox?.faults.size).toBe(0);
    expect(server.runtime.sandbox?.calls.get('anyshop.myshopify.com')).toBeUndefined();
  });

  it('THROTTLED with HTTP 200: the retry waits until the bucket, at its restoreRate, holds a point again', async () => {
    const name = 'slow-bucket';
    const base = shopify.script(name, (_call, n, res) => {
      if (n === 1)
        json(res, 200, {
          errors: [{ message: 'Throttled', extensions: { code: 'THROTTLED' } }],
          extensions: { cost: { throttleStatus: { maximumAvailable: 10, currentlyAvailable: 0, restoreRate: 0.5 } } },
        });
      else accept(res);
    });
    const { shop, endpointId } = await makeShop(services(), { adminBaseUrl: base });
    const id = await insertEvent(services(), shop.id, endpointId);
    const scheduled = await waitFor(async () => {
      const [first] = await attemptsOf(services(), id);
      const row = await services().db.get<{ state: string; next_attempt_at: number | null }>(
        'SELECT state, next_attempt_at FROM events WHERE id = ?',
        [id],
      );
      return first?.finished_at && row?.state === 'queued' ? { first, row } : null;
    }, 'the throttled attempt recorded');
    expect(scheduled.first.outcome).toBe('throttled');
    // 1 point at 0.5 points/s: 2 s, whatever the (much shorter) retry schedule says.
    expect(Number(scheduled.row.next_attempt_at) - Number(scheduled.first.finished_at)).toBeGreaterThanOrEqual(2_000);
    const row = await waitFor(() => terminal(id), 'delivered after the throttle');
    expect(row.state).toBe('delivered');
  });
});
