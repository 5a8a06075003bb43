// Issue 42 item 7 (found by an agent trial): the audit log and the reads tell who acted and when,
// once. The sandbox's grant is used by an agent and recorded as one; each step of an action
// intent (preview, confirm, execute, cancel) is one audit entry, not one per layer; a bulk
// replay's execution carries the request id of the confirmation that started it; an attempt's
// duration_ms is finished_at − started_at. Real HTTP, the worker, both stores.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { waitFor } from '../handoff/helpers.ts';
import { api, confirm, deliveredEvent, failedEvents } from './helpers.ts';

vi.setConfig({ testTimeout: 60_000 });

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startTestServer();
  token = server.sandbox?.grant_token as string;
});
afterAll(async () => {
  await server?.close();
});

interface Entry {
  action: string;
  actor: { kind: string; grant_id: string | null };
  request_id: string | null;
  target: { id: string | null };
}
const audit = async (query: string) =>
  (await api(server, token, 'GET', `/agent/v1/audit?limit=200&${query}`)).json.data as Entry[];
/** Every audit entry one request wrote, oldest first, whatever its target. */
const byRequest = async (requestId: string | null) =>
  (
    await server.runtime.services.db.all<{ action: string }>(
      'SELECT action FROM audit_log WHERE request_id = ? ORDER BY seq',
      [requestId],
    )
  ).map((r) => r.action);

describe('audit and actor truths', () => {
  it("the sandbox's grant (handed to an agent) is an agent on the grant read and in the audit log", async () => {
    const grant = await api(server, token, 'GET', '/agent/v1/grant');
    expect(grant.status, grant.text).toBe(200);
    expect(grant.json.actor.kind).toBe('agent');
    const ep = server.sandbox?.endpoint_id as string;
    const p = await api(server, token, 'POST', `/agent/v1/endpoints/${ep}/test-event-intents`, {});
    expect(p.status, p.text).toBe(201);
    expect(p.json.created_by.actor_kind).toBe('agent');
    const entries = await audit(`target_id=${p.json.id}`);
    expect(entries.length).toBeGreaterThan(0);
    for (const e of entries) expect(e.actor.kind).toBe('agent');
  });

  it('each step of an intent is one audit entry: preview, confirm, execute, cancel', async () => {
    // A refused preview too: one entry.
    const refused = await api(
      server,
      token,
      'POST',
      '/agent/v1/events/evt_01m00000000000000000000000/replay-intents',
      {},
    );
    expect(refused.status).toBe(404);
    expect(await byRequest(refused.headers.get('x-request-id'))).toEqual(['replay.preview']);
    const event = await deliveredEvent(server);
    const p = await api(server, token, 'POST', `/agent/v1/events/${event}/replay-intents`, {
      acknowledge_recent_delivery: true,
    });
    expect(p.status, p.text).toBe(201);
    const previewRequest = p.headers.get('x-request-id') as string;
    expect(await byRequest(previewRequest)).toEqual(['replay.preview']);
    const c = await confirm(server, token, p.json.id);
    expect(c.status, c.text).toBe(200);
    const confirmRequest = c.headers.get('x-request-id') as string;
    expect(await byRequest(confirmRequest)).toEqual(['replay.confirm', 'replay.execute']);
    const entries = (await audit(`target_id=${p.json.id}`)).reverse();
    expect(entries.map((e) => [e.action, e.request_id])).toEqual([
      ['replay.preview', previewRequest],
      ['replay.confirm', confirmRequest],
      ['replay.execute', confirmRequest],
    ]);
    const ep = server.sandbox?.endpoint_id as string;
    const t = await api(server, token, 'POST', `/agent/v1/endpoints/${ep}/test-event-intents`, {});
    const cancelled = await api(server, token, 'POST', `/agent/v1/action-intents/${t.json.id}/cancel`);
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(await byRequest(cancelled.headers.get('x-request-id'))).toEqual(['test_event.cancel']);
    expect((await audit(`target_id=${t.json.id}`)).map((e) => e.action).reverse()).toEqual([
      'test_event.preview',
      'test_event.cancel',
    ]);
  });

  it("a bulk replay is audited once per step, and its execution carries the confirmation's request id", async () => {
    const sb = server.sandbox as NonNullable<TestServer['sandbox']>;
    await failedEvents(server.runtime.services, sb.shop_id, sb.endpoint_id, 2, { errorCode: 'audit_truths' });
    const p = await api(server, token, 'POST', '/agent/v1/bulk-replay-intents', {
      state: 'failed',
      error_code: 'audit_truths',
    });
    expect(p.status, p.text).toBe(201);
    expect(await byRequest(p.headers.get('x-request-id'))).toEqual(['bulk_replay.preview']);
    const c = await confirm(server, token, p.json.id);
    expect(c.status, c.text).toBe(200);
    const confirmRequest = c.headers.get('x-request-id');
    expect((await byRequest(confirmRequest))[0]).toBe('bulk_replay.confirm');
    const executed = await waitFor(async () => {
      const e = (await audit(`target_id=${p.json.id}&action=bulk_replay.execute`))[0];
      return e ?? null;
    }, 'bulk_replay.execute audited');
    expect(executed.request_id).toBe(confirmRequest);
    expect((await audit(`target_id=${p.json.id}`)).map((e) => e.action).reverse()).toEqual([
      'bulk_replay.preview',
      'bulk_replay.confirm',
      'bulk_replay.execute',
    ]);
  });

  it("an attempt's duration_ms is finished_at − started_at", async () => {
    const id = await deliveredEvent(server);
    const ev = await api(server, token, 'GET', `/agent/v1/events/${id}`);
    const attempts = (
      ev.json.timeline as { attempt?: { started_at: string; finished_at: string; duration_ms: number } }[]
    )
      .map((t) => t.attempt)
      .filter((a) => a !== undefined);
    expect(attempts.length).toBeGreaterThan(0);
    for (const a of attempts) expect(a.duration_ms).toBe(Date.parse(a.finished_at) - Date.parse(a.started_at));
  });
});
