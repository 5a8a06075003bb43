// The spine: manifest, health, problem+json for API misses (in-process through the app), and what
// the Node listener answers in front of it (sender intake, oversized bodies, the docs site) over HTTP.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SITE_STAMP_FILE } from '../../api/src/docs-paths.ts';
import { ERROR_CATALOG } from '../../api/src/errors/catalog.ts';
import { AGENT_API_MAX_BODY_BYTES, operationErrorCodes } from '../../api/src/http/agent-router.ts';
import { buildOpenApiDocument } from '../../api/src/http/openapi.ts';
import { OPERATIONS } from '../../api/src/operations/registry.ts';
import { INTENT_KINDS } from '../../api/src/intents/kinds/index.ts';
import { sendExpectingEarlyAnswer } from '../helpers/early-answer.ts';
import { startTestServer, tempDir, type TestServer } from '../helpers/runtime.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ worker: false });
});
afterAll(async () => {
  await server?.close();
});

/**
 * A route-level check, in-process through the app (no socket): status, headers and the problem
 * body are the app's. Sender intake (/in/…) and oversized bodies stay on the socket: the Node
 * listener in front of the app answers those.
 */
function request(path: string, init?: RequestInit): Promise<Response> {
  return Promise.resolve(server.runtime.app.request(`${server.url}${path}`, init));
}

describe('GET /agent/v1/manifest', () => {
  it('is public and describes the edition, contract, docs and every operation', async () => {
    const res = await request(`/agent/v1/manifest`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-z]{26}$/);
    const m = (await res.json()) as any;
    expect(m.product).toBe('Flowport');
    expect(m.edition).toBe('Shopify Flow');
    expect(m.api.openapi_url).toBe(`${server.url}/reference/openapi/agent-operations.openapi.json`);
    expect(m.docs.index).toBe(`${server.url}/llms.txt`);
    expect(m.docs.mcp_reference).toBe(`${server.url}/reference/mcp/`);
    expect(m.docs.cli_reference).toBe(`${server.url}/reference/cli/`);
    expect(m.capabilities.map((c: { operation_id: string }) => c.operation_id)).toEqual(
      OPERATIONS.map((o) => o.operationId),
    );
    expect(m.safety_boundaries.length).toBeGreaterThan(3);
    expect(JSON.stringify(m)).not.toMatch(/fpg_[0-9A-Za-z]{20,}/);
  });
});

describe('the manifest states what the product does (issue 43, item 2)', () => {
  it('its safety boundaries name every side effect and every way a grant is made; its commands run as printed', async () => {
    const m = (await (await request(`/agent/v1/manifest`)).json()) as any;
    const boundaries = (m.safety_boundaries as string[]).join('\n');
    // Every intent kind is a side effect an agent can cause; the boundary lists each.
    const sideEffects = (m.safety_boundaries as string[]).find((b) => b.startsWith('Every side effect'));
    for (const kind of Object.keys(INTENT_KINDS)) expect(sideEffects, kind).toContain(kind.replace(/_/g, ' '));
    expect(sideEffects).toContain('bulk replay');
    expect(sideEffects).toContain('alert subscribe');
    // Grants: the merchant page, the OAuth consent page and the operator CLI, as printed in a checkout.
    expect(boundaries).toContain('merchant page (`/merchant`');
    expect(boundaries).toContain('OAuth consent page');
    expect(boundaries).toContain('`npx flowport grants create`');
    expect(boundaries).not.toContain('only by a human through the operator CLI');
    expect(m.api.auth.how_to_get_a_grant).toContain('merchant page');
    expect(m.api.auth.how_to_get_a_grant).not.toContain('grants create');
    expect(m.cli.command).toBe('npx flowport');
    for (const c of m.capabilities) if (c.cli_command) expect(c.cli_command).toMatch(/^npx flowport [a-z]/);
  });
});

describe('health', () => {
  it('answers /healthz and /readyz', async () => {
    expect((await request(`/healthz`)).status).toBe(200);
    const ready = await request(`/readyz`);
    // The body says which check failed.
    expect(ready.status, await ready.clone().text()).toBe(200);
    expect(((await ready.json()) as any).checks.store).toBe(true);
  });
});

describe('API misses are problem+json, never HTML', () => {
  it('unknown route → route_not_found with a docs URL under /reference/errors/', async () => {
    const res = await request(`/agent/v1/no-such-thing/../really-not`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    const p = (await res.json()) as any;
    expect(p.code).toBe('route_not_found');
    expect(p.type).toBe(p.docs_url);
    expect(new URL(p.docs_url).pathname).toBe('/reference/errors/route_not_found/');
    expect(p.request_id).toBe(res.headers.get('x-request-id'));
    expect(p.status).toBe(ERROR_CATALOG.route_not_found.status);
  });

  it('a body that is not sent as JSON → 415 unsupported_media_type (curl --data without a Content-Type)', async () => {
    const token = server.sandbox?.grant_token as string;
    const res = await request(`/agent/v1/diagnostics/share-intents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: '{}',
    });
    expect(res.status).toBe(415);
    const p = (await res.json()) as any;
    expect(p.code).toBe('unsupported_media_type');
    expect(new URL(p.docs_url).pathname).toBe('/reference/errors/unsupported_media_type/');
    const op = OPERATIONS.find((o) => o.operationId === 'previewDiagnosticsShare');
    expect(operationErrorCodes(op as (typeof OPERATIONS)[number])).toContain('unsupported_media_type');
    // Malformed JSON with the right type is invalid_json, also listed for the operation.
    const bad = await request(`/agent/v1/diagnostics/share-intents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{',
    });
    expect([bad.status, ((await bad.json()) as any).code]).toEqual([400, 'invalid_json']);
    expect(operationErrorCodes(op as (typeof OPERATIONS)[number])).toContain('invalid_json');
  });

  it('wrong method on a known path → 405 method_not_allowed with the Allow header (RFC 9110 §15.5.6)', async () => {
    const res = await request(`/agent/v1/manifest`, { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(((await res.json()) as any).code).toBe('method_not_allowed');
    expect(res.headers.get('allow')).toBe('GET');
    const confirm = await request(`/agent/v1/action-intents/int_x/confirm`);
    expect(confirm.status).toBe(405);
    expect(confirm.headers.get('allow')).toBe('POST');
    // Sender intake answers the same way.
    const intake = await fetch(`${server.url}/in/${server.sandbox?.endpoint_id ?? 'ep_x'}`);
    expect(intake.status).toBe(405);
    expect(intake.headers.get('allow')).toBe('POST');
  });

  it('a request body over the Agent Operations limit → 413 payload_too_large, before authentication, streamed or not', async () => {
    const url = `${server.url}/agent/v1/events/evt_00000000000000000000000000/replay-intents`;
    const headers = { 'content-type': 'application/json' };
    const big = JSON.stringify({ note: 'a'.repeat(AGENT_API_MAX_BODY_BYTES) });
    const sized = await sendExpectingEarlyAnswer(url, { headers, body: big });
    expect(sized.status).toBe(413);
    expect(sized.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(sized.text).code).toBe('payload_too_large');
    // Without Content-Length (chunked), the limit applies as the body streams in.
    const streamed = await sendExpectingEarlyAnswer(url, {
      headers,
      body: '{"note":"',
      chunked: { total: 8 * AGENT_API_MAX_BODY_BYTES },
    });
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.text).code).toBe('payload_too_large');
    // The contract declares it for every operation that takes a body.
    const contract = buildOpenApiDocument(OPERATIONS) as any;
    for (const op of OPERATIONS.filter((o) => o.request.body)) {
      expect(contract.paths[op.path][op.method]['x-flowport-error-codes'], op.operationId).toContain(
        'payload_too_large',
      );
    }
  });

  it('without a valid grant a scoped call answers 401 whatever its input, as over MCP; with one, bad input is 400', async () => {
    const bad = [
      { path: '/agent/v1/events?limit=0' },
      { path: '/agent/v1/events/evt_x/replay-intents', method: 'POST', body: '{"note": 5}' },
      { path: `/agent/v1/events/${'e'.repeat(100)}` },
    ];
    for (const [auth, code] of [
      [undefined, 'missing_token'],
      ['Bearer fpg_not-a-real-token', 'invalid_token'],
    ] as const) {
      for (const b of bad) {
        const res = await request(`${b.path}`, {
          method: b.method ?? 'GET',
          headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) },
          body: b.body,
        });
        expect(res.status, `${b.path} ${auth}`).toBe(401);
        expect(((await res.json()) as any).code).toBe(code);
      }
    }
    const token = server.sandbox?.grant_token;
    if (token) {
      const res = await request(`/agent/v1/events?limit=0`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).code).toBe('invalid_request');
    }
  });

  it('the bare prefix is an API miss too', async () => {
    const res = await request(`/agent/v1`);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
  });
});

describe('docs site not built yet (npm start builds it in the background)', () => {
  it('answers 503 with Retry-After until the site exists, then serves it without a restart', async () => {
    const siteDir = join(tempDir(), 'site-dist');
    const s = await startTestServer({ worker: false, env: { FLOWPORT_SITE_DIR: siteDir } });
    try {
      const before = await fetch(`${s.url}/guides/`);
      expect([before.status, before.headers.get('retry-after')]).toEqual([503, '30']);
      expect(await before.text()).toMatch(/not built yet/);
      // The API does not wait for the docs.
      expect((await fetch(`${s.url}/agent/v1/manifest`)).status).toBe(200);
      mkdirSync(join(siteDir, 'guides'), { recursive: true });
      writeFileSync(join(siteDir, 'guides', 'index.html'), '<!doctype html><title>Guides</title>');
      // Pages without the stamp are not a complete build yet (docs-paths.ts): still 503.
      expect((await fetch(`${s.url}/guides/`)).status).toBe(503);
      writeFileSync(join(siteDir, SITE_STAMP_FILE), '{"inputs":"x"}');
      const after = await fetch(`${s.url}/guides/`);
      expect([after.status, await after.text()]).toEqual([200, '<!doctype html><title>Guides</title>']);
    } finally {
      await s.close();
    }
  });
});

it('build bookkeeping in the site directory (dot files such as .build-stamp.json) is not served', async () => {
  const siteDir = join(tempDir(), 'site-dist');
  mkdirSync(siteDir, { recursive: true });
  writeFileSync(join(siteDir, 'index.html'), '<!doctype html><title>Docs</title>');
  writeFileSync(join(siteDir, SITE_STAMP_FILE), '{"inputs":"x"}');
  const s = await startTestServer({ worker: false, env: { FLOWPORT_SITE_DIR: siteDir } });
  try {
    expect((await fetch(`${s.url}/`)).status).toBe(200);
    expect((await fetch(`${s.url}/${SITE_STAMP_FILE}`)).status).toBe(404);
    expect((await fetch(`${s.url}/%2ebuild-stamp.json`)).status).toBe(404);
  } finally {
    await s.close();
  }
});
