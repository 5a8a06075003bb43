// Issue 42 item 3: Flow's trigger lifecycle is readable as a history, so an agent finds an outage
// window (disabled at T1, enabled at T2) without parsing attempt payloads. Every signal Flow sent
// is kept as Flow dated it, whatever the order it arrived in, and listed newest first with the
// events list's paging. Real HTTP (the sandbox plays Flow's callback), both stores.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createGrant } from '../../api/src/auth/grants.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api } from '../intents/helpers.ts';
import { setWorkflow } from '../shopify/helpers.ts';

vi.setConfig({ testTimeout: 60_000 });

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startTestServer();
  const sb = server.sandbox as NonNullable<TestServer['sandbox']>;
  // The narrowest grant that reads setup reads the history too.
  token = (
    await createGrant(server.runtime.services, {
      shopId: sb.shop_id,
      tier: 'observer',
      actorKind: 'agent',
      actorName: 'history reader',
      expiresInMs: 3_600_000,
    })
  ).token;
});
afterAll(async () => {
  await server?.close();
});

const PATH = '/agent/v1/flow/readiness/history';

describe('Flow readiness history', () => {
  it('lists every lifecycle change as Flow dated it, newest first, with cursor paging and a trigger filter', async () => {
    const domain = server.sandbox?.shop_domain as string;
    const t0 = Date.now() - 3_600_000;
    const at = (min: number) => new Date(t0 + min * 60_000).toISOString();
    // Disabled at T1, enabled at T2; the product trigger changes once; a late, older signal arrives last.
    await setWorkflow(server, domain, 'external-event', true, at(0));
    await setWorkflow(server, domain, 'external-event', false, at(10));
    await setWorkflow(server, domain, 'external-product-event', false, at(15));
    await setWorkflow(server, domain, 'external-event', true, at(40));
    await setWorkflow(server, domain, 'external-event', false, at(5));
    // Flow retrying the same callback adds nothing.
    await setWorkflow(server, domain, 'external-event', true, at(40));

    const all = await api(server, token, 'GET', PATH);
    expect(all.status, all.text).toBe(200);
    expect(all.json.page).toEqual({ next_cursor: null, has_more: false, limit: 50 });
    const rows = all.json.data as {
      trigger: string;
      enabled_workflow: boolean;
      at: string;
      received_at: string;
      applied: boolean;
    }[];
    expect(rows.map((r) => [r.trigger, r.enabled_workflow, r.at])).toEqual([
      ['external-event', true, at(40)],
      ['external-product-event', false, at(15)],
      ['external-event', false, at(10)],
      ['external-event', false, at(5)],
      ['external-event', true, at(0)],
    ]);
    // The late signal was kept as history but never became the trigger's readiness.
    expect(rows.find((r) => r.at === at(5))?.applied).toBe(false);
    expect(rows.find((r) => r.at === at(40))?.applied).toBe(true);
    for (const r of rows) expect(Date.parse(r.received_at)).toBeGreaterThan(Date.parse(r.at));

    // The outage window of one trigger, oldest first, one per page.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = `?trigger=external-event&order=asc&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = await api(server, token, 'GET', `${PATH}${q}`);
      expect(page.status, page.text).toBe(200);
      expect(page.json.page.limit).toBe(1);
      expect(page.json.data.length).toBe(1);
      seen.push(`${page.json.data[0].enabled_workflow ? 'on' : 'off'}@${page.json.data[0].at}`);
      cursor = page.json.page.next_cursor;
      expect(page.json.page.has_more).toBe(cursor !== null);
    } while (cursor);
    expect(seen).toEqual([`on@${at(0)}`, `off@${at(5)}`, `off@${at(10)}`, `on@${at(40)}`]);

    // A time window, and bad input with a stable code.
    const since = await api(server, token, 'GET', `${PATH}?since=${encodeURIComponent(at(10))}`);
    expect(since.json.data.map((r: { at: string }) => r.at)).toEqual([at(40), at(15), at(10)]);
    expect((await api(server, token, 'GET', `${PATH}?cursor=nope`)).json.code).toBe('invalid_request');
    expect((await api(server, token, 'GET', `${PATH}?limit=0`)).status).toBe(400);
  });

  it("shows only the caller's shop", async () => {
    const services = server.runtime.services;
    const other = await services.db.get<{ id: string }>('SELECT id FROM shops WHERE domain <> ? AND sandbox = 1', [
      server.sandbox?.shop_domain as string,
    ]);
    // No second shop exists in this store: a grant of the sandbox shop sees only its own domain.
    expect(other).toBeUndefined();
    const rows = (await api(server, token, 'GET', PATH)).json.data as unknown[];
    expect(rows.length).toBeGreaterThan(0);
    const foreign = await setWorkflow(server, 'someone-else.myshopify.com', 'external-event', false);
    expect(foreign.flowport_status).toBe(200);
    expect(((await api(server, token, 'GET', PATH)).json.data as unknown[]).length).toBe(rows.length);
  });
});
