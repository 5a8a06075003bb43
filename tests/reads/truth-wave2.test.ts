// Issue 42, wave 2: the contradictions agent trials still found, each a read that said one thing
// while another read (or the docs) said another. A test event's preview, event and receipt agree;
// setup's recent deliveries leave test events out, as plan usage counts them apart; an endpoint
// without a dedupe id says so; diagnostics filtered to one endpoint says how many the shop has;
// setup names the endpoints refusing requests; a receipt's Flow readiness says what it was when
// the request came in. Real HTTP and worker (the sandbox plays Flow), both stores.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { INTAKE_SUPPORT_CODES } from '../../api/src/errors/codes/intake.ts';
import { ERROR_CATALOG } from '../../api/src/errors/catalog.ts';
import { NO_WORKFLOW_CAUSES, SUPPORT_CODES } from '../../api/src/handoff/outcomes.ts';
import { NEW_EVENT_ID } from '../../api/src/intents/kinds/common.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { newEndpoint } from '../intake/helpers.ts';
import { api, confirm, sendSigned, triggerFor, waitDelivered, waitFor } from '../intents/helpers.ts';
import { setWorkflow } from '../shopify/helpers.ts';

vi.setConfig({ testTimeout: 120_000 });

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startTestServer();
  token = server.sandbox?.grant_token as string;
});
afterAll(async () => {
  await server?.close();
});

const sb = () => server.sandbox as NonNullable<TestServer['sandbox']>;
type Check = { check: string; status: string; detail: string; severity: string | null };
const checkOf = (checks: Check[], name: string) => checks.find((c) => c.check === name) as Check;

describe('a test event (the first traffic of the shop)', () => {
  it('its preview, event, receipt, setup and plan usage agree', async () => {
    const preview = await api(server, token, 'POST', `/agent/v1/endpoints/${sb().endpoint_id}/test-event-intents`, {});
    expect(preview.status, preview.text).toBe(201);
    expect(preview.json.preview.details.flow_payload['External event id']).toBe(NEW_EVENT_ID);
    const done = await confirm(server, token, preview.json.id);
    expect(done.status, done.text).toBe(200);
    const eventId = done.json.result.event_id as string;
    await waitDelivered(server, eventId);

    // 4. The external event id the preview announced is the one the event carries, and Flow got.
    const event = await api(server, token, 'GET', `/agent/v1/events/${eventId}`);
    expect(event.json.external_event_id).toBe(eventId);
    const sent = await triggerFor(server, sb().shop_domain, eventId);
    expect(sent.payload['External event id']).toBe(event.json.external_event_id);

    // 5. Every receipt carries an intake code: a test event's too.
    const receipt = await api(server, token, 'GET', `/agent/v1/receipts/${done.json.result.receipt_id}`);
    expect(receipt.status, receipt.text).toBe(200);
    expect(receipt.json.support_code).toBe(INTAKE_SUPPORT_CODES.accepted.code);

    // 7. Setup's recent deliveries leave the test event out (it says so), as plan usage counts it apart.
    const setup = await api(server, token, 'GET', '/agent/v1/setup');
    const recent = checkOf(setup.json.checks, 'recent_deliveries');
    expect(recent.detail).not.toMatch(/1 of 1/);
    expect(recent.detail).toMatch(/1 test event/);
    const usage = await api(server, token, 'GET', '/agent/v1/plan-usage');
    expect(usage.json.events.test_events).toBe(1);
    expect(usage.json.events.accepted).toBe(0);
  });
});

describe('an hmac_sha256 endpoint with no external id configured', () => {
  it('reports external_id kind none, and its read and setup warn that nothing dedupes', async () => {
    const services = server.runtime.services;
    const created = await newEndpoint(services, sb().shop_id, { authMode: 'hmac_sha256', name: 'No dedupe ERP' });
    const read = await api(server, token, 'GET', `/agent/v1/endpoints/${created.endpoint.id}`);
    expect(read.status, read.text).toBe(200);
    expect(read.json.config.mapping.external_id).toEqual({ kind: 'none' });
    expect(read.json.warnings).toEqual([
      expect.objectContaining({ code: 'no_dedupe_id', severity: 'advisory', detail: expect.stringMatching(/twice/) }),
    ]);
    // The sandbox endpoint dedupes on the body's `id`: no warning.
    const sandbox = await api(server, token, 'GET', `/agent/v1/endpoints/${sb().endpoint_id}`);
    expect(sandbox.json.warnings).toEqual([]);
    const setup = await api(server, token, 'GET', '/agent/v1/setup');
    const dedupe = checkOf(setup.json.checks, 'dedupe_ids');
    expect(dedupe).toMatchObject({ status: 'warn', severity: 'advisory' });
    expect(dedupe.detail).toContain(created.endpoint.id);
    expect(dedupe.detail).not.toContain(sb().endpoint_id);
  });
});

describe('diagnostics filtered to one endpoint', () => {
  it('says this endpoint is active and how many the shop has', async () => {
    const services = server.runtime.services;
    const shop = sb().shop_id;
    const active = (
      await services.db.all<{ id: string }>(
        "SELECT id FROM endpoints WHERE shop_id = ? AND status = 'active' AND deleted_at IS NULL",
        [shop],
      )
    ).length;
    expect(active).toBeGreaterThan(1);
    const diag = await api(server, token, 'GET', `/agent/v1/diagnostics?endpoint_id=${sb().endpoint_id}`);
    expect(diag.status, diag.text).toBe(200);
    const configured = checkOf(diag.json.checks, 'endpoints_configured');
    expect(configured.detail).toMatch(/this endpoint is active/i);
    expect(configured.detail).toContain(`the shop has ${active} active endpoints`);
  });
});

describe('setup names the endpoints refusing requests', () => {
  it('sender_rejections lists each refusing endpoint with its count', async () => {
    const services = server.runtime.services;
    const ep = await newEndpoint(services, sb().shop_id, {
      authMode: 'hmac_sha256',
      name: 'ShipFast 3PL',
      hmac: { timestampHeader: 'x-shipfast-timestamp' },
    });
    for (const n of [1, 2]) {
      const res = await fetch(`${server.url}/in/${ep.endpoint.id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-flowport-signature': `sha256=${'0'.repeat(64)}` },
        body: JSON.stringify({ n }),
      });
      expect(res.status).toBe(401);
    }
    const setup = await api(server, token, 'GET', '/agent/v1/setup');
    const rejections = checkOf(setup.json.checks, 'sender_rejections');
    expect(rejections.detail).toContain(`"ShipFast 3PL" (${ep.endpoint.id}): 2`);
  });
});

describe('the no_workflow texts', () => {
  it('point to a bulk replay over the window, and to recovered=false for what is left', () => {
    const disabled = ERROR_CATALOG.flow_workflow_disabled;
    for (const text of [disabled.fix, NO_WORKFLOW_CAUSES[SUPPORT_CODES.workflow_disabled.code]?.next ?? '']) {
      expect(text).toContain('no_workflow_since');
      expect(text).toContain('no_workflow_until');
      expect(text).toContain('recovered=false');
    }
  });
});

describe("a receipt's Flow readiness", () => {
  it('says when it was read (as_of) and what it was when the request came in (at_receipt)', async () => {
    const domain = sb().shop_domain;
    const off = new Date(Date.now() - 60_000).toISOString();
    await setWorkflow(server, domain, 'external-event', false, off);
    const sent = await sendSigned(server, sb().endpoint_id, sb().signing_secret, { type: 'order.paid', id: 'ro-1' });
    expect(sent.status).toBe(202);
    await waitFor(async () =>
      (await api(server, token, 'GET', `/agent/v1/events/${sent.json.event_id}`)).json.state === 'no_workflow'
        ? true
        : undefined,
    );
    const on = new Date().toISOString();
    await setWorkflow(server, domain, 'external-event', true, on);
    const receipt = await api(server, token, 'GET', `/agent/v1/receipts/${sent.json.receipt_id}`);
    expect(receipt.status, receipt.text).toBe(200);
    const readiness = receipt.json.handoff.flow_readiness;
    expect(readiness).toMatchObject({ trigger: 'external-event', enabled_workflow: 'yes', since: on });
    expect(Date.parse(readiness.as_of)).toBeGreaterThanOrEqual(Date.parse(on));
    expect(readiness.at_receipt).toEqual({ enabled_workflow: 'no', since: off });
    // A page of receipts reads each one's readiness at its own receipt (one read per trigger, ADR 0330).
    const later = await sendSigned(server, sb().endpoint_id, sb().signing_secret, { type: 'order.paid', id: 'ro-2' });
    expect(later.status).toBe(202);
    const page = await api(server, token, 'GET', '/agent/v1/receipts?limit=200');
    expect(page.status, page.text).toBe(200);
    const atReceipt = (id: string) =>
      page.json.data.find((r: { id: string }) => r.id === id)?.handoff?.flow_readiness?.at_receipt;
    expect(atReceipt(sent.json.receipt_id)).toEqual({ enabled_workflow: 'no', since: off });
    expect(atReceipt(later.json.receipt_id)).toEqual({ enabled_workflow: 'yes', since: on });
  });
});
