// Issue 42 item 8: humans in the loop. The preview lifetime is stated in the manifest; a preview
// may ask for a longer one (up to 24 h) so an agent can prepare an action and wait for the
// merchant, with one shared body field on every preview kind; out of range is refused with a
// stable code. Real HTTP, both stores.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { OPERATIONS } from '../../api/src/operations/registry.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api, deliveredEvent } from './helpers.ts';

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

const lifetimeOf = (intent: { created_at: string; expires_at: string }) =>
  (Date.parse(intent.expires_at) - Date.parse(intent.created_at)) / 1000;

describe('preview lifetime', () => {
  it('the manifest states the default and the longest lifetime, and the field that asks for it', async () => {
    const m = await api(server, token, 'GET', '/agent/v1/manifest');
    expect(m.json.action_intents).toMatchObject({
      preview_lifetime_seconds: 900,
      max_preview_lifetime_seconds: 86_400,
      min_preview_lifetime_seconds: 60,
      request_field: 'expires_in_seconds',
    });
    expect(m.json.action_intents.docs_url).toMatch(/\/agent-access\/action-intents\/$/);
  });

  it('every preview operation takes expires_in_seconds', () => {
    const previews = OPERATIONS.filter((op) => op.kind === 'preview');
    expect(previews.length).toBeGreaterThan(5);
    for (const op of previews) {
      const shape = (op.request.body as { shape: Record<string, unknown> } | undefined)?.shape ?? {};
      expect(Object.keys(shape), op.operationId).toContain('expires_in_seconds');
    }
  });

  it('default 15 minutes; a longer lifetime on request, for a replay and a test event', async () => {
    const ep = server.sandbox?.endpoint_id as string;
    const plain = await api(server, token, 'POST', `/agent/v1/endpoints/${ep}/test-event-intents`, {});
    expect(plain.status, plain.text).toBe(201);
    expect(lifetimeOf(plain.json)).toBe(900);
    const long = await api(server, token, 'POST', `/agent/v1/endpoints/${ep}/test-event-intents`, {
      expires_in_seconds: 6 * 3600,
    });
    expect(long.status, long.text).toBe(201);
    expect(lifetimeOf(long.json)).toBe(6 * 3600);
    // The lifetime is not one of the kind's parameters (a retry with another lifetime is the same action).
    expect(long.json.parameters).not.toHaveProperty('expires_in_seconds');
    const event = await deliveredEvent(server);
    const replay = await api(server, token, 'POST', `/agent/v1/events/${event}/replay-intents`, {
      acknowledge_recent_delivery: true,
      expires_in_seconds: 86_400,
    });
    expect(replay.status, replay.text).toBe(201);
    expect(lifetimeOf(replay.json)).toBe(86_400);
  });

  it('out of range is refused with preview_lifetime_out_of_range', async () => {
    const ep = server.sandbox?.endpoint_id as string;
    for (const bad of [86_401, 59, 0, -5]) {
      const r = await api(server, token, 'POST', `/agent/v1/endpoints/${ep}/test-event-intents`, {
        expires_in_seconds: bad,
      });
      expect(r.status, `${bad}: ${r.text}`).toBe(400);
      expect(r.json.code).toBe('preview_lifetime_out_of_range');
      expect(r.json.docs_url ?? r.json.type).toMatch(/preview_lifetime_out_of_range/);
    }
  });
});
