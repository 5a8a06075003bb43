// Issue 23 point 6: an Idempotency-Key belongs to the grant that sent it. A second grant in
// the same shop that replays another grant's confirmation key never gets the stored
// response — which can carry a secret shown once (a rotated signing secret, a new
// endpoint's secret, a diagnostics share link) — and the stored responses are sealed with
// the data key at rest. Real HTTP, real store (both stores).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api, confirm, grant } from './helpers.ts';

vi.setConfig({ testTimeout: 60_000 });

let server: TestServer;
let first: { id: string; token: string };
let second: { id: string; token: string };
beforeAll(async () => {
  server = await startTestServer({ worker: false });
  first = await grant(server, 'admin_assistant', 'first-agent');
  second = await grant(server, 'admin_assistant', 'second-agent');
});
afterAll(async () => {
  await server?.close();
});

const endpoint = () => server.sandbox?.endpoint_id as string;

const CASES: { kind: string; secretField: string; preview: () => Promise<{ status: number; json: any }> }[] = [
  {
    kind: 'secret rotation',
    secretField: 'secret',
    preview: () => api(server, first.token, 'POST', `/agent/v1/endpoints/${endpoint()}/rotate-secret-intents`, {}),
  },
  {
    kind: 'endpoint create',
    secretField: 'secret',
    preview: () =>
      api(server, first.token, 'POST', '/agent/v1/endpoints/intents', {
        name: `idem-${randomUUID().slice(0, 8)}`,
        trigger_variant: 'external_event',
        auth_mode: 'hmac_sha256',
      }),
  },
  {
    kind: 'diagnostics share',
    secretField: 'share_url',
    preview: () => api(server, first.token, 'POST', '/agent/v1/diagnostics/share-intents', {}),
  },
];

describe('a key is the grant’s own', () => {
  for (const c of CASES) {
    it(`${c.kind}: another grant sending the same key never receives the secret`, async () => {
      const preview = await c.preview();
      expect(preview.status, JSON.stringify(preview.json)).toBe(201);
      const key = randomUUID();
      const done = await confirm(server, first.token, preview.json.id, key);
      expect(done.status, done.text).toBe(200);
      const secret = done.json.result[c.secretField] as string;
      expect(typeof secret).toBe('string');
      expect(secret.length).toBeGreaterThan(8);

      // The grant that made the request gets its stored response again, byte for byte.
      const again = await confirm(server, first.token, preview.json.id, key);
      expect(again.status).toBe(200);
      expect(again.text).toBe(done.text);

      // Another grant of the same shop, same key: its own claim, so the confirmation runs for
      // it and is refused (the intent already ran); the secret is nowhere in the answer.
      const other = await confirm(server, second.token, preview.json.id, key);
      expect(other.status, other.text).toBe(409);
      expect(other.json.code).toBe('intent_not_confirmable');
      expect(other.text).not.toContain(secret);
      // Its refusal is now stored under its own key; the first grant's response is untouched.
      const otherAgain = await confirm(server, second.token, preview.json.id, key);
      expect(otherAgain.text).not.toContain(secret);
      const firstAgain = await confirm(server, first.token, preview.json.id, key);
      expect(firstAgain.text).toBe(done.text);

      // Stored sealed with the data key: the plaintext secret is not in the store.
      const rows = await server.runtime.services.db.all<{ grant_id: string; response_body: string }>(
        'SELECT grant_id, response_body FROM idempotency_keys WHERE idem_key = ?',
        [key],
      );
      expect(rows.map((r) => r.grant_id).sort()).toEqual([first.id, second.id].sort());
      for (const r of rows) {
        expect(r.response_body).not.toContain(secret);
        expect(r.response_body).not.toContain(c.secretField);
      }
    });
  }
});
