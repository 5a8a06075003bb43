// Every docs URL the product can emit (API problem+json, MCP refusals, CLI
// hints, the manifest) resolves to a page of the built site.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCS_PATHS, errorDocsPath } from '../../api/src/docs-paths.ts';
import { ERROR_CODES } from '../../api/src/errors/catalog.ts';
import { readRecordings } from '../../api/src/http/openapi-examples.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { ensureSiteBuilt, readDist, resolveInDist, siteOrigin, twinOf } from './helpers/site.ts';

let server: TestServer | undefined;

beforeAll(ensureSiteBuilt, 900_000);
afterAll(async () => {
  await server?.close();
});

/** The JSON of an error page's "Example response" block. */
function exampleResponse(code: string): Record<string, unknown> {
  const twin = readDist(twinOf(errorDocsPath(code)));
  const block = /## Example response[\s\S]*?```json\n([\s\S]*?)\n```/.exec(twin);
  expect(block, code).not.toBeNull();
  return JSON.parse(block?.[1] as string) as Record<string, unknown>;
}

/** DOCS_PATHS entries served by the API, not by the static site. */
const API_PATHS = new Set<string>([DOCS_PATHS.manifestApi]);

describe('docs URLs the product emits', () => {
  it('every DOCS_PATHS entry resolves in site/dist', () => {
    const missing = Object.entries(DOCS_PATHS)
      .filter(([, p]) => !API_PATHS.has(p))
      .filter(([, p]) => resolveInDist(p) === null)
      .map(([k, p]) => `${k}: ${p}`);
    expect(missing).toEqual([]);
  });

  it('every error code in the catalog has a page and a Markdown twin', () => {
    expect(ERROR_CODES.length).toBeGreaterThan(0);
    const missing = ERROR_CODES.flatMap((code) => {
      const page = errorDocsPath(code);
      const out: string[] = [];
      if (!resolveInDist(page)) out.push(page);
      if (!resolveInDist(twinOf(page))) out.push(twinOf(page));
      return out;
    });
    expect(missing).toEqual([]);
  });

  it('each error page names its code, status and fix from the catalog', async () => {
    const { ERROR_CATALOG, errorAnswers } = await import('../../api/src/errors/catalog.ts');
    for (const code of ERROR_CODES) {
      const def = ERROR_CATALOG[code];
      const twin = readDist(twinOf(errorDocsPath(code)));
      expect(twin.startsWith(`# ${code}\n`), code).toBe(true);
      expect(twin).toContain(def.fix.split('`')[0]?.trim().slice(0, 40) ?? '');
      // A state of an event is no HTTP answer and no refusal of a request (issue 43): the page says so.
      if (errorAnswers(code).every((a) => a === 'event')) {
        expect(twin, code).toContain('a state of an event, not an HTTP answer');
        continue;
      }
      expect(twin).toContain(`\`${def.status}\``);
      if ('layer' in def && def.layer) expect(twin).toContain(def.layer);
    }
  });

  it('the OpenAPI contract is served at its documented path and matches the committed file', async () => {
    const { readFileSync } = await import('node:fs');
    const { OPENAPI_FILE } = await import('../../scripts/docs/lib/site-paths.ts');
    expect(readDist(DOCS_PATHS.openapiJson)).toBe(readFileSync(OPENAPI_FILE, 'utf8'));
  });

  it("an error page's example response is what the running product answers, values aside", async () => {
    server = await startTestServer({ worker: false, bootstrapSandbox: false });
    const asDocumented = (body: Record<string, unknown>) => {
      const text = JSON.stringify(body).replaceAll(server?.url as string, siteOrigin());
      const p = JSON.parse(text) as Record<string, unknown> & { refusal?: Record<string, unknown> };
      Object.assign(p, { detail: '<DETAIL>', request_id: '<REQUEST_ID>', instance: '<REQUEST_PATH>' });
      if (p.refusal) p.refusal.reason = '<REASON>';
      return p;
    };
    // A refusal with a recording (openapi/examples/, ADR 0009) shows the recorded answer, which
    // tests/site/recorded-examples keeps equal to the product's; here, the same fields as a live one.
    const refused = await fetch(`${server.url}/agent/v1/events`);
    expect(refused.status).toBe(401);
    const recorded = Object.values(readRecordings())
      .flat()
      .find((e) => (e.response.body as { code?: string } | null)?.code === 'missing_token');
    expect(exampleResponse('missing_token')).toEqual(recorded?.response.body);
    expect(Object.keys(exampleResponse('missing_token')).sort()).toEqual(
      Object.keys((await refused.json()) as Record<string, unknown>).sort(),
    );
    // A plain error without a recording: the catalog's problem, values aside.
    const missing = await fetch(`${server.url}/agent/v1/no-such-operation`);
    expect(missing.status).toBe(404);
    expect(asDocumented((await missing.json()) as Record<string, unknown>)).toEqual(exampleResponse('route_not_found'));
  });
});
