// Issue 42 (agent trial): setup's recent_deliveries told an agent to "deploy the trigger and turn on
// a workflow" for events whose trigger Flow said was enabled again, because another trigger in use
// (with no workflow yet) was not. The next step and the severity now follow the triggers of the
// unrecovered no_workflow events themselves. Real HTTP through the sandbox's Flow, both stores.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { hmacHex, newEndpoint, post } from '../intake/helpers.ts';
import { api, eventState, waitFor } from '../intents/helpers.ts';
import { setWorkflow } from '../shopify/helpers.ts';

vi.setConfig({ testTimeout: 120_000 });

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe("setup's recent_deliveries follows the triggers of the events it counts", () => {
  it('warns (advisory) with the bulk replay step once their trigger is enabled, whatever other triggers say', async () => {
    const creds = server.sandbox!;
    const token = creds.grant_token;
    const orders = await newEndpoint(server.runtime.services, creds.shop_id, {
      authMode: 'hmac_sha256',
      triggerVariant: 'external_order_event',
      mapping: { resourceIdPath: 'order.id' },
    });
    let clock = Date.now();
    const flow = async (enabled: boolean) => {
      clock += 1_000;
      await setWorkflow(server, creds.shop_domain, 'external-order-event', enabled, new Date(clock).toISOString());
    };
    // The sandbox endpoint's trigger (external-event) never gets a workflow: Flow said nothing of it.
    await flow(false);
    const body = JSON.stringify({ type: 'order.shipped', id: randomUUID(), order: { id: 2101 } });
    const sent = await post(`${server.url}/in/${orders.endpoint.id}`, body, {
      'x-flowport-signature': `sha256=${hmacHex(orders.secret, body)}`,
    });
    expect(sent.status).toBe(202);
    const id = String(sent.json.event_id);
    await waitFor(async () => ((await eventState(server, id)) === 'no_workflow' ? true : undefined));
    await flow(true);

    const setup = await api(server, token, 'GET', '/agent/v1/setup');
    expect(setup.status, setup.text).toBe(200);
    const checks = setup.json.checks as { check: string; status: string; severity: string | null; detail: string }[];
    const check = (name: string) => checks.find((c) => c.check === name);
    expect(check('flow_workflow_enabled:external-order-event')?.status).toBe('pass');
    expect(check('flow_workflow_enabled:external-event')?.status).not.toBe('pass');
    const recent = check('recent_deliveries');
    expect(recent).toMatchObject({ status: 'warn', severity: 'advisory' });
    expect(recent?.detail).toMatch(/external-order-event/);
    expect(recent?.detail).toMatch(/bulk replay/);
    expect(recent?.detail).not.toMatch(/Deploy the trigger/);
    // Nothing is in flight: the no_workflow event is not counted as on its way too.
    expect(recent?.detail).not.toMatch(/still on the way/);
    expect(recent?.detail).toMatch(/1 sender event\(s\) in 24 h ended no_workflow/);
  });
});
