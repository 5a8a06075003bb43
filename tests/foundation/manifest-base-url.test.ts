// Issue 43 item 8 (ADR 0016): the manifest's `api.base_url` is the spec's `{base_url}`, the
// service's base address, so `{base_url}/agent/v1/…` (the spec's paths, the OpenAPI paths and
// every capability `path`) is a URL that answers, never `/agent/v1/agent/v1/…`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';

let server: TestServer;
type Manifest = {
  api: { base_url: string; openapi_url: string };
  capabilities: { path: string; url: string; method: string }[];
};
let manifest: Manifest;

beforeAll(async () => {
  server = await startTestServer({ worker: false });
  manifest = (await (await fetch(`${server.url}/agent/v1/manifest`)).json()) as Manifest;
});
afterAll(async () => {
  await server?.close();
});

describe('api.base_url joins with the spec paths', () => {
  it('is the origin the server answers on', () => {
    expect(manifest.api.base_url).toBe(server.url);
  });

  it('{base_url}/agent/v1/manifest answers 200', async () => {
    const res = await fetch(`${manifest.api.base_url}/agent/v1/manifest`);
    expect(res.status).toBe(200);
  });

  it('every capability url is {base_url} + its path', () => {
    for (const c of manifest.capabilities) {
      expect(c.path.startsWith('/agent/v1/'), c.path).toBe(true);
      expect(c.url).toBe(`${manifest.api.base_url}${c.path}`);
    }
  });

  it('a grant-scoped path joined with it reaches the API (401 without a token, not 404)', async () => {
    const res = await fetch(`${manifest.api.base_url}/agent/v1/events`);
    expect(res.status).toBe(401);
  });
});
