// Find by what the merchant knows (issue 42): the events list filters by the Shopify resource id
// the endpoint's mapping extracted, given as the number or as the GID, whichever form the sender
// used. On a real server and store (both stores in `npm test`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrant } from '../../api/src/auth/grants.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { hmacHex, newEndpoint, newShop, post } from '../intake/helpers.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ worker: false, bootstrapSandbox: false });
});
afterAll(async () => {
  await server?.close();
});

async function api(token: string, path: string) {
  const res = await fetch(`${server.url}/agent/v1${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}

describe('listEvents resource_id', () => {
  it('matches the mapped resource id as a number or a GID, and nothing else', async () => {
    const services = server.runtime.services;
    const shop = await newShop(services);
    const orders = await newEndpoint(services, shop.id, {
      authMode: 'hmac_sha256',
      triggerVariant: 'external_order_event',
      mapping: { resourceIdPath: 'order.id', relatedResourceIdPath: 'customer_id' },
    });
    const send = async (order: unknown, customer?: unknown) => {
      const body = JSON.stringify({ type: 'shipment.created', order: { id: order }, customer_id: customer });
      const res = await post(`${server.url}/in/${orders.endpoint.id}`, body, {
        'x-flowport-signature': `sha256=${hmacHex(orders.secret, body)}`,
      });
      expect(res.status).toBe(202);
      return String(res.json.event_id);
    };
    const asNumber = await send(5_623_452_345);
    const asGid = await send('gid://shopify/Order/5623452345');
    const otherOrder = await send(5_623_452_346);
    // 5623452345 is this event's customer, not its order: not a match for the order filter.
    const related = await send(777, 5_623_452_345);

    const { token } = await createGrant(services, {
      shopId: shop.id,
      tier: 'observer',
      actorKind: 'agent',
      actorName: 'resource id test',
      expiresInMs: 3_600_000,
    });
    const ids = async (value: string) => {
      const r = await api(token, `/events?resource_id=${encodeURIComponent(value)}`);
      expect(r.status, value).toBe(200);
      return r.json.data.map((e: { id: string }) => e.id);
    };
    expect(await ids('5623452345')).toEqual([asGid, asNumber]);
    expect(await ids('gid://shopify/Order/5623452345')).toEqual([asGid, asNumber]);
    expect(await ids('gid://shopify/Customer/5623452345')).toEqual([asNumber]);
    expect(await ids('5623452346')).toEqual([otherOrder]);
    expect(await ids('777')).toEqual([related]);
    expect(await ids('2002')).toEqual([]);
    // Paging works with the filter.
    const first = await api(token, '/events?resource_id=5623452345&limit=1');
    expect(first.json.data.map((e: { id: string }) => e.id)).toEqual([asGid]);
    const second = await api(
      token,
      `/events?resource_id=5623452345&limit=1&cursor=${encodeURIComponent(first.json.page.next_cursor)}`,
    );
    expect(second.json.data.map((e: { id: string }) => e.id)).toEqual([asNumber]);

    // An order NUMBER (#2002) or any other text is not a resource id: a clear 400.
    for (const bad of ['#2002', 'order 2002', 'gid://shopify/Order/abc', '0']) {
      const r = await api(token, `/events?resource_id=${encodeURIComponent(bad)}`);
      expect(r.status, bad).toBe(400);
      expect(r.json.code, bad).toBe('invalid_request');
      expect(r.json.errors?.[0]?.path, bad).toBe('resource_id');
    }

    // Another shop's grant finds none.
    const other = await newShop(services);
    const stranger = await createGrant(services, {
      shopId: other.id,
      tier: 'observer',
      actorKind: 'agent',
      actorName: 'stranger',
      expiresInMs: 3_600_000,
    });
    expect((await api(stranger.token, '/events?resource_id=5623452345')).json.data).toEqual([]);
  });
});
