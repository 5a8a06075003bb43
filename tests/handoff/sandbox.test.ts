// The Shopify sandbox over real HTTP: Shopify's exact answers, the throttle
// status on every GraphQL answer, the record of received triggers, and the
// per-shop fault injection control API. The sandbox runs alone on port 0.
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callFlowTriggerReceive, FLOW_TRIGGER_MUTATION, graphqlUrl } from '../../api/src/handoff/flow-client.ts';
import { buildFlowPayload } from '../../api/src/handoff/payload.ts';
import { createSandboxState, RECORDED_TRIGGERS, SANDBOX_MOUNT_PATH, sandboxApp } from '../../api/src/sandbox/app.ts';
import { type SandboxServer, startSandboxServer } from '../../api/src/sandbox/server.ts';
import { uniqueDomain } from './helpers.ts';

let sb: SandboxServer;
beforeAll(async () => {
  sb = await startSandboxServer();
});
afterAll(async () => {
  await sb.close();
});

const TOKEN = 'shpat_sandbox_test_token';
const ev = {
  id: 'evt_1',
  event_type: 't',
  sender: 's',
  external_event_id: null,
  received_at: 0,
  body: '{}',
  resource_id: null,
};

async function gql(shop: string, variables: unknown, token: string | null = TOKEN) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers['x-shopify-access-token'] = token;
  const res = await fetch(graphqlUrl(sb.adminBaseUrl(shop), '2026-10'), {
    method: 'POST',
    headers,
    body: JSON.stringify({ query: FLOW_TRIGGER_MUTATION, variables }),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

function payloadOfSize(bytes: number) {
  const p = buildFlowPayload('external_event', { ...ev, body: '' });
  const base = Buffer.byteLength(JSON.stringify(p));
  return { ...p, Body: 'x'.repeat(bytes - base) };
}

describe('flowTriggerReceive answers as Shopify does', () => {
  it('success: empty userErrors and a throttle status', async () => {
    const shop = uniqueDomain();
    const r = await gql(shop, { handle: 'external-event', payload: buildFlowPayload('external_event', ev) });
    expect(r.status).toBe(200);
    const body = JSON.parse(r.text);
    expect(body.data).toEqual({ flowTriggerReceive: { userErrors: [] } });
    expect(body.extensions.cost.throttleStatus).toEqual({
      maximumAvailable: 2000,
      currentlyAvailable: 1999,
      restoreRate: 100,
    });
    const rec = (await (await fetch(`${sb.url}${SANDBOX_MOUNT_PATH}/triggers?shop=${shop}`)).json()) as {
      triggers: Record<string, unknown>[];
    };
    expect(rec.triggers).toHaveLength(1);
    expect(rec.triggers[0]).toMatchObject({
      shop,
      handle: 'external-event',
      apiVersion: '2026-10',
      payload: { 'Flowport event id': 'evt_1' },
    });
    expect(JSON.stringify(rec)).not.toContain(TOKEN);
  });

  it('unknown handle, missing arguments, and the exact messages', async () => {
    const shop = uniqueDomain();
    const unknown = JSON.parse((await gql(shop, { handle: 'nope', payload: { a: 'b' } })).text);
    expect(unknown.data.flowTriggerReceive.userErrors).toEqual([
      { field: ['body'], message: "Errors validating schema:\n  Invalid handle 'nope'.\n" },
    ]);
    expect(unknown.extensions.cost.throttleStatus).toBeDefined();
    for (const variables of [
      { payload: { a: 'b' } },
      { handle: '', payload: { a: 'b' } },
      { handle: 'external-event' },
      { handle: 'external-event', payload: {} },
    ]) {
      const r = JSON.parse((await gql(shop, variables)).text);
      expect(r.data.flowTriggerReceive.userErrors).toEqual([
        { field: ['handle'], message: '`handle` and `payload` arguments are required' },
      ]);
    }
    expect(sb.state.triggers.filter((t) => t.shop === shop)).toHaveLength(0);
  });

  it('payload size: exactly 50,000 bytes passes, 50,001 fails, and the size check runs before the handle check', async () => {
    const shop = uniqueDomain();
    const exact = payloadOfSize(50_000);
    expect(Buffer.byteLength(JSON.stringify(exact))).toBe(50_000);
    expect(
      JSON.parse((await gql(shop, { handle: 'external-event', payload: exact })).text).data.flowTriggerReceive
        .userErrors,
    ).toEqual([]);
    const tooBig = payloadOfSize(50_001);
    const msg = 'Errors validating schema:\n  Properties size exceeds the limit of 50000 bytes.\n';
    expect(
      JSON.parse((await gql(shop, { handle: 'external-event', payload: tooBig })).text).data.flowTriggerReceive
        .userErrors,
    ).toEqual([{ field: ['body'], message: msg }]);
    expect(
      JSON.parse((await gql(shop, { handle: 'no-such-handle', payload: tooBig })).text).data.flowTriggerReceive
        .userErrors,
    ).toEqual([{ field: ['body'], message: msg }]);
  });

  it('validates the payload against the trigger definition', async () => {
    const shop = uniqueDomain();
    const p = buildFlowPayload('external_order_event', { ...ev, resource_id: '5' });
    const missing = { ...p } as Record<string, unknown>;
    delete missing.order_id;
    const r = JSON.parse((await gql(shop, { handle: 'external-order-event', payload: missing })).text);
    expect(r.data.flowTriggerReceive.userErrors[0].message).toMatch(/order_id/);
    const ok = JSON.parse((await gql(shop, { handle: 'external-order-event', payload: p })).text);
    expect(ok.data.flowTriggerReceive.userErrors).toEqual([]);
  });

  it('no token, or a revoked one: HTTP 401 with the exact body', async () => {
    const shop = uniqueDomain();
    const exact = '{"errors":"[API] Invalid API key or access token (unrecognized login or wrong password)"}';
    const none = await gql(shop, { handle: 'external-event', payload: { a: 'b' } }, null);
    expect(none.status).toBe(401);
    expect(none.text).toBe(exact);
    await control(shop, { mode: 'revoked' });
    const revoked = await gql(shop, { handle: 'external-event', payload: buildFlowPayload('external_event', ev) });
    expect(revoked.status).toBe(401);
    expect(revoked.text).toBe(exact);
  });

  it('throttling both ways: HTTP 200 and HTTP 429 with Retry-After, no data, THROTTLED', async () => {
    const shop = uniqueDomain();
    await control(shop, { mode: 'throttled_200', count: 1 });
    const a = await gql(shop, { handle: 'external-event', payload: buildFlowPayload('external_event', ev) });
    expect(a.status).toBe(200);
    const ab = JSON.parse(a.text);
    expect(ab.data).toBeUndefined();
    expect(ab.errors[0]).toMatchObject({ message: 'Throttled', extensions: { code: 'THROTTLED' } });
    expect(ab.extensions.cost.throttleStatus.currentlyAvailable).toBe(0);
    await control(shop, { mode: 'throttled_429', count: 1, retry_after_s: 2 });
    const b = await gql(shop, { handle: 'external-event', payload: buildFlowPayload('external_event', ev) });
    expect(b.status).toBe(429);
    expect(b.headers.get('retry-after')).toBe('2');
    // count: 1 → the next call is healthy again
    const c = await gql(shop, { handle: 'external-event', payload: buildFlowPayload('external_event', ev) });
    expect(JSON.parse(c.text).data.flowTriggerReceive.userErrors).toEqual([]);
  });

  it('the leaky bucket runs dry like Shopify: THROTTLED once the points are spent', async () => {
    const small = await startSandboxServer({ bucket: { maximumAvailable: 3, restoreRate: 0.001 } });
    try {
      const shop = uniqueDomain();
      const url = graphqlUrl(small.adminBaseUrl(shop), '2026-10');
      const call = () =>
        callFlowTriggerReceive({
          url,
          accessToken: TOKEN,
          handle: 'external-event',
          payload: buildFlowPayload('external_event', ev),
          timeoutMs: 5000,
        });
      const results = [];
      for (let i = 0; i < 4; i++) results.push(await call());
      expect(results.map((r) => r.throttled)).toEqual([false, false, false, true]);
      expect(results[2]?.throttleStatus?.currentlyAvailable).toBe(0);
      expect(results[3]?.throttleWaitMs).toBeGreaterThan(0);
    } finally {
      await small.close();
    }
  });
});

async function control(shop: string, spec: Record<string, unknown>) {
  const r = await fetch(`${sb.url}${SANDBOX_MOUNT_PATH}/_faults/${shop}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(spec),
  });
  expect(r.status).toBe(200);
}

describe('fault injection (the client sees what the worker would)', () => {
  const call = (shop: string, timeoutMs = 5000) =>
    callFlowTriggerReceive({
      url: graphqlUrl(sb.adminBaseUrl(shop), '2026-10'),
      accessToken: TOKEN,
      handle: 'external-event',
      payload: buildFlowPayload('external_event', ev),
      timeoutMs,
    });

  it('5xx, timeout, connection reset, latency; DELETE clears', async () => {
    const shop = uniqueDomain();
    await control(shop, { mode: 'http_503' });
    expect((await call(shop)).httpStatus).toBe(503);
    await control(shop, { mode: 'timeout', hang_ms: 1000 });
    expect((await call(shop, 150)).transportError).toBe('timeout');
    await control(shop, { mode: 'reset' });
    expect((await call(shop)).transportError).toBe('connection_error');
    await control(shop, { mode: 'none', latency_ms: 120 });
    const slow = await call(shop);
    expect(slow.userErrors).toEqual([]);
    expect(slow.durationMs).toBeGreaterThanOrEqual(100);
    const del = await fetch(`${sb.url}${SANDBOX_MOUNT_PATH}/_faults/${shop}`, { method: 'DELETE' });
    expect(del.status).toBe(204);
    expect((await call(shop)).httpStatus).toBe(200);
  });

  it('a failure rate applies to about that share of calls; bad control input is refused', async () => {
    const shop = uniqueDomain();
    await control(shop, { mode: 'http_500', rate: 0.5 });
    let failed = 0;
    for (let i = 0; i < 60; i++) if ((await call(shop)).httpStatus === 500) failed++;
    expect(failed).toBeGreaterThan(5);
    expect(failed).toBeLessThan(55);
    const bad = await fetch(`${sb.url}${SANDBOX_MOUNT_PATH}/_faults/${shop}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"mode":"explode"}',
    });
    expect(bad.status).toBe(400);
    // Not JSON by its Content-Type (a cross-site text/plain POST looks like this): refused (issue 24).
    const plain = await fetch(`${sb.url}${SANDBOX_MOUNT_PATH}/_faults/${shop}`, {
      method: 'POST',
      body: '{"mode":"http_500"}',
    });
    expect(plain.status).toBe(415);
    const list = (await (await fetch(`${sb.url}${SANDBOX_MOUNT_PATH}/_faults`)).json()) as {
      faults: Record<string, unknown>;
    };
    expect(list.faults[shop]).toMatchObject({ mode: 'http_500', rate: 0.5 });
  });
});

describe('a keep-alive connection serving many calls', () => {
  it('collects no listener per call (delays included), so a long-lived sandbox does not leak', async () => {
    const app = new Hono();
    app.route(SANDBOX_MOUNT_PATH, sandboxApp(createSandboxState()));
    const server = createServer(getRequestListener(app.fetch));
    const sockets: Socket[] = [];
    server.on('connection', (s) => sockets.push(s));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port,
            path,
            method: 'POST',
            agent,
            headers: { 'content-type': 'application/json', ...headers },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify(body));
      });
    const shop = uniqueDomain();
    const gqlPath = `${SANDBOX_MOUNT_PATH}/${shop}/admin/api/2026-10/graphql.json`;
    const trigger = {
      query: FLOW_TRIGGER_MUTATION,
      variables: { handle: 'external-event', payload: buildFlowPayload('external_event', ev) },
    };
    try {
      expect(await post(`${SANDBOX_MOUNT_PATH}/_faults/${shop}`, { mode: 'none', latency_ms: 5 })).toBe(200);
      expect(await post(gqlPath, trigger, { 'x-shopify-access-token': TOKEN })).toBe(200);
      const socket = sockets[0] as Socket;
      const after1 = socket.listenerCount('close');
      for (let i = 0; i < 15; i++) {
        expect(await post(gqlPath, trigger, { 'x-shopify-access-token': TOKEN })).toBe(200);
        expect(await post(gqlPath, trigger)).toBe(401);
      }
      // One connection served all 32 calls, and it holds no more listeners than after the first.
      expect(sockets).toHaveLength(1);
      expect(socket.listenerCount('close')).toBe(after1);
    } finally {
      agent.destroy();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    }
  });
});

describe('the record of received triggers', () => {
  it('keeps at most its size, dropping the oldest first, and the stand-in in Flowport keeps RECORDED_TRIGGERS', async () => {
    expect(createSandboxState().maxRecorded).toBe(RECORDED_TRIGGERS);
    const small = await startSandboxServer({ maxRecorded: 10 });
    try {
      const shop = uniqueDomain();
      for (let i = 0; i < 25; i++) {
        const res = await fetch(graphqlUrl(small.adminBaseUrl(shop), '2026-10'), {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-shopify-access-token': TOKEN },
          body: JSON.stringify({
            query: FLOW_TRIGGER_MUTATION,
            variables: {
              handle: 'external-event',
              payload: buildFlowPayload('external_event', { ...ev, id: `evt_${i}` }),
            },
          }),
        });
        expect(res.status).toBe(200);
      }
      const ids = small.state.triggers.map((t) => t.payload['Flowport event id']);
      expect(ids.length).toBeGreaterThan(0);
      expect(ids.length).toBeLessThanOrEqual(10);
      // The newest are kept, in order.
      expect(ids).toEqual(Array.from({ length: ids.length }, (_, k) => `evt_${25 - ids.length + k}`));
      expect(small.state.calls.get(shop)).toBe(25);
    } finally {
      await small.close();
    }
  });
});
