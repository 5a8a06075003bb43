// Issue 42 item 8: a secret rotation preview warns when the endpoint's recent refusals say the
// sender signs other bytes or uses another secret (a rotation does not fix that), and always says
// the new secret is shown once, to whoever confirms. Real HTTP, both stores.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createEndpoint } from '../../api/src/services/endpoints.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api, sendSigned } from './helpers.ts';

vi.setConfig({ testTimeout: 60_000 });

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startTestServer({ worker: false });
  token = server.sandbox?.grant_token as string;
});
afterAll(async () => {
  await server?.close();
});

async function endpoint(name: string) {
  const { endpoint, secret } = await createEndpoint(server.runtime.services, {
    shopId: server.sandbox?.shop_id as string,
    name,
    triggerVariant: 'external_event',
    authMode: 'hmac_sha256',
    mapping: { externalId: { kind: 'json', path: 'id' } },
  });
  return { id: endpoint.id, secret };
}

const rotate = (id: string) => api(server, token, 'POST', `/agent/v1/endpoints/${id}/rotate-secret-intents`, {});

describe('secret rotation preview warnings', () => {
  it('always: the new secret is shown once, to whoever confirms', async () => {
    const ep = await endpoint('quiet sender');
    const r = await rotate(ep.id);
    expect(r.status, r.text).toBe(201);
    const warnings = r.json.preview.warnings as string[];
    expect(warnings.some((w) => /shown once/.test(w) && /whoever confirms/.test(w))).toBe(true);
    expect(warnings.some((w) => /signature_mismatch/.test(w))).toBe(false);
  });

  it('recent signature mismatches: the sender may sign other bytes or use another secret', async () => {
    const ep = await endpoint('mismatched sender');
    for (let i = 0; i < 3; i++) {
      const bad = await sendSigned(server, ep.id, 'fpsec_not_the_secret', { id: `m-${i}` });
      expect(bad.status).toBe(401);
      expect(bad.json.code).toBe('signature_mismatch');
    }
    expect((await sendSigned(server, ep.id, ep.secret, { id: 'ok' })).status).toBe(202);
    const r = await rotate(ep.id);
    expect(r.status, r.text).toBe(201);
    const warning = (r.json.preview.warnings as string[]).find((w) => /signature_mismatch/.test(w));
    expect(warning).toMatch(/3 request\(s\)/);
    expect(warning).toMatch(/other bytes/);
    expect(warning).toMatch(/another secret/);
    expect(r.json.preview.details.recent_refusals).toEqual({ window_hours: 24, signature_mismatch: 3 });
  });
});
