// Issue 42: one event's reads tell one truth. An event in no_workflow says in its plain-words
// state what its handoff block says (Flow's answer vs Flow's lifecycle callback, told apart by
// its support code); a suppressed duplicate's timeline says what happened to it and names the
// sender by the endpoint's sender label, never by the auth mode. Real HTTP, both stores.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createEndpoint } from '../../api/src/services/endpoints.ts';
import { EVENT_STATE_DESCRIPTIONS, EVENT_STATES, SUPPORT_CODES } from '../../api/src/handoff/outcomes.ts';
import { OPERATIONS } from '../../api/src/operations/registry.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api, deliveredEvent, sendSigned } from '../intents/helpers.ts';

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

/** A delivered sandbox event rewritten to have ended no_workflow the way `key` says. */
async function noWorkflowEvent(key: 'no_workflow' | 'workflow_disabled'): Promise<string> {
  const id = await deliveredEvent(server);
  const def = SUPPORT_CODES[key];
  await server.runtime.services.db.run(
    "UPDATE events SET state = 'no_workflow', support_code = ?, error_code = ?, delivered_at = NULL WHERE id = ?",
    [def.code, def.errorCode, id],
  );
  return id;
}

describe('an event in no_workflow', () => {
  it('ended by the lifecycle callback: state_description and handoff both say Shopify was not called', async () => {
    const id = await noWorkflowEvent('workflow_disabled');
    const ev = await api(server, token, 'GET', `/agent/v1/events/${id}`);
    expect(ev.status, ev.text).toBe(200);
    expect(ev.json.support_code).toBe('FP-H-NOFL');
    expect(ev.json.state_description).not.toMatch(/unknown/i);
    expect(ev.json.state_description).toMatch(/not call Shopify/);
    expect(ev.json.handoff.explanation).toMatch(/not call Shopify/);
    expect(ev.json.handoff.explanation.startsWith(ev.json.state_description)).toBe(true);
  });

  it("ended by Flow's answer: both say Flow does not know the trigger handle", async () => {
    const id = await noWorkflowEvent('no_workflow');
    const ev = await api(server, token, 'GET', `/agent/v1/events/${id}`);
    expect(ev.status, ev.text).toBe(200);
    expect(ev.json.support_code).toBe('FP-H-NOWF');
    expect(ev.json.state_description).toMatch(/trigger handle/);
    expect(ev.json.state_description).not.toMatch(/not call Shopify/);
    expect(ev.json.handoff.explanation.startsWith(ev.json.state_description)).toBe(true);
  });
});

describe('what the contract documents', () => {
  it("no_workflow's plain words name both support codes it is reached by", () => {
    const codes = Object.values(SUPPORT_CODES).filter((c) => c.state === 'no_workflow');
    expect(codes.map((c) => c.code).sort()).toEqual(['FP-H-NOFL', 'FP-H-NOWF']);
    for (const c of codes) expect(EVENT_STATE_DESCRIPTIONS.no_workflow).toContain(c.code);
  });

  it('no event state is documented that no event takes: a refused request is a receipt, not a rejected event', async () => {
    expect(EVENT_STATES as readonly string[]).not.toContain('rejected');
    const services = server.runtime.services;
    const before = await services.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM events');
    const refused = await sendSigned(server, server.sandbox?.endpoint_id as string, 'fpsec_wrong_secret', { id: 'x' });
    expect(refused.status).toBe(401);
    const after = await services.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM events');
    expect(Number(after?.n)).toBe(Number(before?.n));
    const receipt = await api(server, token, 'GET', `/agent/v1/receipts/${refused.json.receipt_id}`);
    expect(receipt.status, receipt.text).toBe(200);
    expect(receipt.json.event_id).toBeNull();
    const listed = await api(server, token, 'GET', '/agent/v1/events?state=rejected');
    expect(listed.status).toBe(400);
  });

  it('recovery_options[].operation is an operationId', async () => {
    const ids = new Set(OPERATIONS.map((o) => o.operationId));
    const id = await noWorkflowEvent('no_workflow');
    const ev = await api(server, token, 'GET', `/agent/v1/events/${id}`);
    const ops = (ev.json.recovery_options as { action: string; operation: string | null }[]).filter(
      (o) => o.operation !== null,
    );
    expect(ops.map((o) => o.action)).toContain('replay');
    for (const o of ops) expect(ids, `${o.action}: ${o.operation}`).toContain(o.operation);
  });
});

describe("a suppressed duplicate's timeline", () => {
  async function endpointWith(senderLabel: string | undefined) {
    const services = server.runtime.services;
    const sandbox = await services.db.get<{ shop_id: string }>('SELECT shop_id FROM endpoints WHERE id = ?', [
      server.sandbox?.endpoint_id as string,
    ]);
    const { endpoint, secret } = await createEndpoint(services, {
      shopId: sandbox?.shop_id as string,
      name: `one truth ${senderLabel ?? 'unlabelled'}`,
      ...(senderLabel === undefined ? {} : { senderLabel }),
      triggerVariant: 'external_event',
      authMode: 'hmac_sha256',
      mapping: { externalId: { kind: 'json', path: 'id' } },
    });
    return { id: endpoint.id, secret };
  }

  async function pair(senderLabel: string | undefined) {
    const ep = await endpointWith(senderLabel);
    const body = { type: 'order.paid', id: `dup-${Math.random()}` };
    const first = await sendSigned(server, ep.id, ep.secret, body);
    const second = await sendSigned(server, ep.id, ep.secret, body);
    expect(first.status, JSON.stringify(first.json)).toBe(202);
    expect([200, 202], JSON.stringify(second.json)).toContain(second.status);
    // The duplicate's acknowledgement names the first event; its own row links to it.
    expect(second.json.duplicate_of).toBe(first.json.event_id);
    const dup = await server.runtime.services.db.get<{ id: string }>('SELECT id FROM events WHERE duplicate_of = ?', [
      first.json.event_id,
    ]);
    return { first: first.json.event_id as string, second: dup?.id as string };
  }

  it('says it was suppressed as a duplicate of the first, naming the sender label', async () => {
    const { first, second } = await pair('Acme 3PL');
    const ev = await api(server, token, 'GET', `/agent/v1/events/${second}`);
    expect(ev.status, ev.text).toBe(200);
    expect(ev.json.state).toBe('duplicate_suppressed');
    expect(ev.json.timeline[0].kind).toBe('received');
    expect(ev.json.timeline[0].summary).toBe(`Suppressed as a duplicate of ${first} (from Acme 3PL).`);
    const inspect = ev.json.recovery_options.find((o: { action: string }) => o.action === 'inspect_original');
    expect(inspect.operation).toBe('getEvent');
    const orig = await api(server, token, 'GET', `/agent/v1/events/${first}`);
    expect(orig.json.timeline[0].summary).toBe('Accepted from Acme 3PL.');
    expect(orig.json.sender).toBe('Acme 3PL');
  });

  it('an endpoint created without a sender label: never names the auth mode as the sender', async () => {
    const { first, second } = await pair(undefined);
    for (const id of [first, second]) {
      const ev = await api(server, token, 'GET', `/agent/v1/events/${id}`);
      expect(ev.status, ev.text).toBe(200);
      expect(ev.json.sender).toBeNull();
      expect(JSON.stringify(ev.json.timeline)).not.toContain('hmac_sha256');
    }
    const dup = await api(server, token, 'GET', `/agent/v1/events/${second}`);
    expect(dup.json.timeline[0].summary).toBe(`Suppressed as a duplicate of ${first}.`);
    const orig = await api(server, token, 'GET', `/agent/v1/events/${first}`);
    expect(orig.json.timeline[0].summary).toBe('Accepted.');
  });
});
