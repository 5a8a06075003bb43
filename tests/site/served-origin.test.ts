// Examples run where they are read (issue 43, point 1): on a server started on another port
// than the docs' local default, nothing it serves names that default. Every page, twin,
// llms.txt, the OpenAPI document and its recorded examples (as a file and through the API), the
// Scalar page and the manifest are fetched over real HTTP and scanned for `8787` and for the
// build's placeholder origin; the commands printed in code blocks name the server's own origin.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PORT } from '../../api/src/config.ts';
import { DOCS_BUILD_ORIGIN, DOCS_PATHS } from '../../api/src/docs-paths.ts';
import { readRecordings } from '../../api/src/http/openapi-examples.ts';
import { SEARCH_INDEX_FILE } from '../../api/src/lib/docs-search.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { DIST_DIR, distFiles, ensureSiteBuilt } from './helpers/site.ts';

const DEFAULT = String(DEFAULT_PORT);
let server: TestServer;

beforeAll(async () => {
  await ensureSiteBuilt();
  server = await startTestServer({
    worker: false,
    bootstrapSandbox: false,
    store: 'sqlite',
    env: { FLOWPORT_SITE_DIR: DIST_DIR },
  });
  expect(server.port).not.toBe(DEFAULT_PORT);
}, 900_000);

afterAll(async () => {
  await server?.close();
});

/**
 * Where `text` names the default port. The one kind of mention allowed is the statement of the
 * default itself (`PORT` … `8787` in the configuration table and the `--port` option): a fact
 * about the product, not an address to copy. A host:port (`:8787`) is never allowed.
 */
function defaultPortMentions(text: string): string[] {
  const found: string[] = [];
  for (let i = text.indexOf(DEFAULT); i !== -1; i = text.indexOf(DEFAULT, i + 1)) {
    const before = text.slice(Math.max(0, i - 80), i);
    const plain = before.replace(/<[^>]*>/g, ' ');
    const statesTheDefault = /\bPORT\b[^\n|]{0,40}\|?\s*[`\s]*$|\bPORT or\s*$/.test(plain) && !/[:\d]$/.test(before);
    if (!statesTheDefault) found.push(text.slice(Math.max(0, i - 60), i + 20).replace(/\s+/g, ' '));
  }
  return found;
}

async function get(path: string, accept?: string): Promise<string> {
  const res = await fetch(`${server.url}${path}`, accept ? { headers: { accept } } : {});
  expect(res.status, path).toBe(200);
  return res.text();
}

describe('nothing a server on another port serves names port 8787', () => {
  it('in every page, twin, llms.txt, sitemap and the OpenAPI document', async () => {
    const files = distFiles().filter(
      (f) =>
        /\.(html|md|txt|xml|json)$/.test(f) &&
        !/\/\./.test(f) &&
        !f.startsWith('/_astro/') &&
        // The search index holds the pages' words, not text anyone reads (the pages are scanned).
        f !== `/${SEARCH_INDEX_FILE}`,
    );
    expect(files.length).toBeGreaterThan(300);
    expect(files).toContain(DOCS_PATHS.openapiJson);
    const problems: string[] = [];
    for (const f of files) {
      const text = await get(f);
      for (const m of defaultPortMentions(text)) problems.push(`${f}: …${m}…`);
      if (text.includes(DOCS_BUILD_ORIGIN))
        problems.push(`${f}: the build origin ${DOCS_BUILD_ORIGIN} was not replaced`);
    }
    expect(problems).toEqual([]);
  }, 300_000);

  it('in the commands the pages print: they name this server', async () => {
    const home = await get('/');
    expect(home).toContain(`${server.url}/in/`);
    const quickstart = await get('/start/quickstart.md');
    expect(quickstart).toContain(`curl -sS ${server.url}/agent/v1/events`);
    const replay = await get('/recover/replay/', 'text/markdown');
    expect(replay).toContain(`${server.url}/agent/v1/events/<EVENT_ID>/replay-intents`);
    const scalar = await get('/reference/openapi/');
    expect(defaultPortMentions(scalar)).toEqual([]);
  });

  it('in the recorded examples the API serves (the contract per operation, the manifest)', async () => {
    const recordings = readRecordings();
    const ids = Object.keys(recordings).filter((id) => id !== 'intake');
    expect(ids.length).toBeGreaterThan(20);
    const problems: string[] = [];
    for (const id of ids) {
      const text = await get(`/agent/v1/openapi/operations/${id}`);
      for (const m of defaultPortMentions(text)) problems.push(`${id}: …${m}…`);
      if (text.includes(DOCS_BUILD_ORIGIN)) problems.push(`${id}: the build origin was not replaced`);
    }
    expect(problems).toEqual([]);
    const manifest = JSON.parse(await get('/agent/v1/openapi/operations/getManifest')) as {
      operation: unknown;
    };
    expect(JSON.stringify(manifest.operation)).toContain(`${server.url}/agent/v1`);
    for (const path of [
      '/agent/v1/manifest',
      '/agent/v1/docs/search?q=replay',
      '/agent/v1/docs/page?path=/recover/replay/',
    ]) {
      const text = await get(path);
      expect(defaultPortMentions(text), path).toEqual([]);
      expect(text, path).not.toContain(DOCS_BUILD_ORIGIN);
    }
  });
});
