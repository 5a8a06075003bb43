// Issue 42, one truth per fact: an action's cost is stated once by its kind and every surface
// shows that number (the intent's meter_cost, a bulk replay's details.meter); a bulk replay
// preview's filter is only the filter, and its warning speaks of what the selection holds. The
// grant read names its shop's domain, and its use_count counts each request once. Both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushUsage } from '../../api/src/usage/ledger.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api, failedEvents, grant } from '../intents/helpers.ts';

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startTestServer({ worker: false });
  token = (await grant(server, 'recovery_operator', 'one-truth-agent')).token;
});
afterAll(async () => {
  await server?.close();
});

const sb = () => server.sandbox as NonNullable<TestServer['sandbox']>;

describe('an action costs what its kind states, on every surface', () => {
  it("a bulk replay's meter_cost and details.meter are the same numbers; the note is not part of the filter", async () => {
    const services = server.runtime.services;
    await failedEvents(services, sb().shop_id, sb().endpoint_id, 2, { errorCode: 'cost_test' });
    const r = await api(server, token, 'POST', '/agent/v1/bulk-replay-intents', {
      state: 'failed',
      error_code: 'cost_test',
      note: 'workflow was off',
    });
    expect(r.status, r.text).toBe(201);
    const { meter_cost: cost, preview } = r.json;
    const meter = preview.details.meter;
    // The confirmation's execution and one per replay; one replay per event.
    expect(meter.executions.cost).toBe(3);
    expect(meter.replays.cost).toBe(2);
    expect(cost.execution).toBe(meter.executions.cost);
    expect(cost.replays).toBe(meter.replays.cost);
    expect(preview.details.filter).toEqual({ state: 'failed', error_code: 'cost_test' });
    expect(r.json.parameters.note).toBe('workflow was off');
    // Flow never received these events: nothing of a first run can happen again.
    const warnings = preview.warnings.join(' ');
    expect(warnings).not.toMatch(/can happen again/);
    expect(warnings).toMatch(/never received/);
    // The same numbers on the read of the intent.
    const read = await api(server, token, 'GET', `/agent/v1/action-intents/${r.json.id}`);
    expect(read.json.meter_cost).toEqual(cost);
  });

  it('a bulk replay over events Flow may have run warns that their actions can happen again', async () => {
    const services = server.runtime.services;
    const [maybe] = await failedEvents(services, sb().shop_id, sb().endpoint_id, 2, { errorCode: 'maybe_ran' });
    await services.db.run('UPDATE events SET possible_duplicate_deliveries = 1 WHERE id = ?', [maybe as string]);
    const r = await api(server, token, 'POST', '/agent/v1/bulk-replay-intents', {
      state: 'failed',
      error_code: 'maybe_ran',
    });
    expect(r.status, r.text).toBe(201);
    const warnings = r.json.preview.warnings.join(' ');
    expect(warnings).toMatch(/1 of the 2 events/);
    expect(warnings).toMatch(/can happen again/);
  });

  it("a single replay's meter_cost says 1 replay and 1 execution, as its effects do", async () => {
    const services = server.runtime.services;
    const [ev] = await failedEvents(services, sb().shop_id, sb().endpoint_id, 1, { errorCode: 'single_cost' });
    const r = await api(server, token, 'POST', `/agent/v1/events/${ev}/replay-intents`, {});
    expect(r.status, r.text).toBe(201);
    expect(r.json.meter_cost).toMatchObject({ preview: 1, execution: 1, replays: 1 });
    expect(r.json.meter_cost.cap).toMatchObject({ meter: 'replays', cost: 1 });
    expect(r.json.preview.effects.join(' ')).toMatch(/Counts 1 replay and 1 execution/);
  });
});

describe('the grant read', () => {
  it("names its shop's domain and counts each request once", async () => {
    const fresh = await grant(server, 'observer', 'count-me');
    const shop = await server.runtime.services.db.get<{ domain: string }>('SELECT domain FROM shops WHERE id = ?', [
      sb().shop_id,
    ]);
    const counts: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await api(server, fresh.token, 'GET', '/agent/v1/grant');
      expect(r.status, r.text).toBe(200);
      expect(r.json.shop_id).toBe(sb().shop_id);
      expect(r.json.shop_domain).toBe(shop?.domain);
      counts.push(r.json.use_count);
    }
    // Each answer counts the request it answers, once.
    expect(counts).toEqual([1, 2, 3]);
    // In the store once the process's usage ledger flushes (ADR 0310).
    await flushUsage(server.runtime.services.db);
    const row = await server.runtime.services.db.get<{ use_count: number }>(
      'SELECT use_count FROM grants WHERE id = ?',
      [fresh.id],
    );
    expect(Number(row?.use_count)).toBe(3);
  });

  it("over MCP, the protocol's own messages are not calls: the first tool call reports use_count 1", async () => {
    const fresh = await grant(server, 'observer', 'mcp-count-me');
    const mcp = async (body: unknown) => {
      const res = await fetch(`${server.url}/agent/v1/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${fresh.token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify(body),
      });
      return res.text();
    };
    await mcp({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'count-test', version: '1' } },
    });
    await mcp({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await mcp({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const uses: number[] = [];
    for (let i = 0; i < 2; i++) {
      const text = await mcp({
        jsonrpc: '2.0',
        id: 2 + i,
        method: 'tools/call',
        params: { name: 'get_grant', arguments: {} },
      });
      const m = /"use_count\\?":\s*(\d+)/.exec(text);
      uses.push(Number(m?.[1]));
    }
    expect(uses).toEqual([1, 2]);
  });
});
