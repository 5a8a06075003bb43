// Issue 23 point 4: the document says what the server does. Bearer challenges per RFC 6750
// §3.1, absolute capability URLs in the manifest, the scopes confirm and cancel really need
// (OpenAPI security alternatives, manifest, refusal), the Idempotency-Key header marked
// required with its length, and the `capability` refusal layer produced where it applies.
// Real server, real HTTP.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ACTIONS, executeScope } from '../../api/src/auth/scopes.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api, confirm, grant } from '../intents/helpers.ts';

vi.setConfig({ testTimeout: 60_000 });

type Json = Record<string, any>;
const doc = JSON.parse(
  readFileSync(join(import.meta.dirname, '../../openapi/agent-operations.openapi.json'), 'utf8'),
) as Json;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ worker: false });
});
afterAll(async () => {
  await server?.close();
});

describe('WWW-Authenticate (RFC 6750 §3.1)', () => {
  it('no credentials: `Bearer` without an error attribute, naming the metadata and the read-only tier', async () => {
    const res = await fetch(`${server.url}/agent/v1/grant`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${server.url}/.well-known/oauth-protected-resource/agent/v1", scope="observer"`,
    );
    expect(((await res.json()) as Json).code).toBe('missing_token');
  });

  it('an invalid token: error="invalid_token"', async () => {
    const res = await fetch(`${server.url}/agent/v1/grant`, { headers: { authorization: 'Bearer fpg_nope' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${server.url}/.well-known/oauth-protected-resource/agent/v1", error="invalid_token", error_description="The token is malformed or its checksum is wrong."`,
    );
  });
});

describe('the manifest', () => {
  it('gives every capability an absolute URL on this origin (never /agent/v1/agent/v1)', async () => {
    const m = (await (await fetch(`${server.url}/agent/v1/manifest`)).json()) as Json;
    expect(m.capabilities.length).toBeGreaterThan(20);
    for (const c of m.capabilities) {
      expect(c.url).toBe(`${server.url}${c.path}`);
      expect(c.url).not.toContain('/agent/v1/agent/v1');
    }
    // A capability URL with its parameters filled is the operation.
    const grantCap = m.capabilities.find((c: Json) => c.operation_id === 'getGrant');
    const res = await fetch(grantCap.url, { headers: { authorization: `Bearer ${server.sandbox?.grant_token}` } });
    expect(res.status).toBe(200);
  });

  it('says confirm needs an execute scope besides intents:read, and cancel a preview or execute scope', async () => {
    const m = (await (await fetch(`${server.url}/agent/v1/manifest`)).json()) as Json;
    const confirmCap = m.capabilities.find((c: Json) => c.operation_id === 'confirmActionIntent');
    expect(confirmCap.scope).toBe('intents:read');
    expect(confirmCap.scope_any_of).toEqual(ACTIONS.map(executeScope));
    const cancelCap = m.capabilities.find((c: Json) => c.operation_id === 'cancelActionIntent');
    expect(cancelCap.scope_any_of).toContain('replay:preview');
    const listCap = m.capabilities.find((c: Json) => c.operation_id === 'listEvents');
    expect(listCap.scope_any_of).toBeNull();
  });
});

describe('the OpenAPI document', () => {
  const confirmOp = () => doc.paths['/agent/v1/action-intents/{intent_id}/confirm'].post;

  it('lists confirm’s security as intents:read plus one execute scope, as the server decides', async () => {
    expect(confirmOp().security).toEqual(ACTIONS.map((a) => ({ grantToken: ['intents:read', executeScope(a)] })));
    // An observer holds intents:read but no execute scope: it is refused.
    const observer = await grant(server, 'observer', 'contract-observer');
    const admin = server.sandbox?.grant_token as string;
    const preview = await api(
      server,
      admin,
      'POST',
      `/agent/v1/endpoints/${server.sandbox?.endpoint_id}/test-event-intents`,
      {},
    );
    expect(preview.status).toBe(201);
    const refused = await confirm(server, observer.token, preview.json.id);
    expect(refused.status).toBe(403);
    expect(refused.json.code, refused.text).toBe('missing_scope');
    expect(refused.json.detail).toContain('execute scope');
  });

  it('marks Idempotency-Key required, with its length', () => {
    const header = confirmOp().parameters.find((p: Json) => p.in === 'header');
    expect(header.name).toBe('idempotency-key');
    expect(header.required).toBe(true);
    expect(header.schema.maxLength).toBe(255);
    expect(header.schema.minLength).toBe(1);
  });

  it('documents 405 (with Allow) and X-Request-Id on every operation, 413 on every POST, WWW-Authenticate on 401', () => {
    for (const [, methods] of Object.entries(doc.paths as Json))
      for (const [method, op] of Object.entries(methods as Json)) {
        const r = (op as Json).responses as Json;
        expect(Object.keys(r['405'].headers)).toContain('Allow');
        for (const [, resp] of Object.entries(r)) expect(Object.keys((resp as Json).headers)).toContain('X-Request-Id');
        if (method === 'post') expect(r['413']).toBeDefined();
        if (r['401']) expect(Object.keys(r['401'].headers)).toContain('WWW-Authenticate');
      }
  });
});

describe('the capability refusal layer', () => {
  it('an operation this edition does not offer is refused at the capability layer', async () => {
    const res = await fetch(`${server.url}/agent/v1/webhooks/subscriptions`);
    expect(res.status).toBe(404);
    const p = (await res.json()) as Json;
    expect(p.code).toBe('route_not_found');
    expect(p.refusal.layer).toBe('capability');
  });
});
