// How Flowport serves the built docs site to agents (api/src/http/static-site.ts), through the
// real server on loopback: Markdown by content negotiation, plain-text 404s for missing twins,
// robots.txt, and cache validators.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMMUTABLE, prefersMarkdown, REVALIDATE } from '../../api/src/http/static-site.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { DIST_DIR, distFiles, ensureSiteBuilt } from './helpers/site.ts';

let server: TestServer;

beforeAll(async () => {
  await ensureSiteBuilt();
  server = await startTestServer({
    worker: false,
    bootstrapSandbox: false,
    store: 'sqlite',
    env: { FLOWPORT_SITE_DIR: DIST_DIR },
  });
}, 900_000);

afterAll(async () => {
  await server?.close();
});

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${server.url}${path}`, { headers });

describe('Accept: text/markdown', () => {
  it('answers any page with its Markdown twin, byte for byte, with Vary: Accept', async () => {
    for (const [page, twin] of [
      ['/', '/index.md'],
      ['/start/quickstart/', '/start/quickstart.md'],
      ['/reference/errors/missing_scope/', '/reference/errors/missing_scope.md'],
    ]) {
      const negotiated = await get(page as string, { Accept: 'text/markdown' });
      expect(negotiated.status, page).toBe(200);
      expect(negotiated.headers.get('content-type'), page).toBe('text/markdown; charset=utf-8');
      expect(negotiated.headers.get('vary'), page).toBe('Accept');
      expect(negotiated.headers.get('content-location'), page).toBe(twin);
      const direct = await get(twin as string);
      expect(await negotiated.text(), page).toBe(await direct.text());
      const html = await get(page as string, { Accept: 'text/html,application/xhtml+xml,*/*;q=0.8' });
      expect(html.headers.get('content-type'), page).toBe('text/html; charset=utf-8');
      expect(html.headers.get('vary'), page).toBe('Accept');
    }
  });

  it('ranks Markdown against HTML by q-value; a browser keeps HTML', () => {
    expect(prefersMarkdown('text/markdown')).toBe(true);
    expect(prefersMarkdown('text/markdown, text/html;q=0.9')).toBe(true);
    expect(prefersMarkdown('text/html, text/markdown;q=0.5')).toBe(false);
    expect(prefersMarkdown('text/markdown;q=0')).toBe(false);
    expect(prefersMarkdown('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')).toBe(false);
    expect(prefersMarkdown(undefined)).toBe(false);
  });
});

describe('misses', () => {
  it('a missing twin answers a plain-text 404 that points at llms.txt, not the HTML 404 page', async () => {
    for (const [path, accept] of [
      ['/start/no-such-page.md', '*/*'],
      ['/start/no-such-page/', 'text/markdown'],
    ]) {
      const res = await get(path as string, { Accept: accept as string });
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toBe('text/plain; charset=utf-8');
      expect(await res.text(), path).toMatch(/^No Markdown page at .*\/llms\.txt/);
    }
    const html = await get('/start/no-such-page/');
    expect(html.status).toBe(404);
    expect(html.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('paths that climb out of the site or name dot files are not served', async () => {
    for (const path of ['/%2e%2e/package.json', '/.build-stamp.json', '/%2ebuild-stamp.json', '/..%2fpackage.json']) {
      expect((await get(path)).status, path).toBe(404);
    }
  });
});

describe('robots.txt', () => {
  it('allows everything and names the sitemap and llms.txt', async () => {
    const res = await get('/robots.txt');
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const text = await res.text();
    expect(text).toMatch(/^User-agent: \*$/m);
    expect(text).toMatch(/^Allow: \/$/m);
    expect(text).toContain(`Sitemap: ${server.url}/sitemap-index.xml`);
    expect(text).toContain(`${server.url}/llms.txt`);
  });
});

describe('cache validators', () => {
  it('pages, twins and indexes revalidate with an ETag; a matching If-None-Match answers 304', async () => {
    for (const path of ['/', '/start/quickstart/', '/start/quickstart.md', '/llms.txt', '/robots.txt']) {
      const res = await get(path);
      const etag = res.headers.get('etag');
      expect(etag, path).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
      expect(res.headers.get('cache-control'), path).toBe(REVALIDATE);
      const again = await get(path, { 'If-None-Match': etag as string });
      expect(again.status, path).toBe(304);
      expect(await again.text(), path).toBe('');
    }
  });

  it("Astro's content-hashed assets are immutable", async () => {
    const asset = distFiles().find((f) => f.startsWith('/_astro/') && f.endsWith('.css')) as string;
    const res = await get(asset);
    expect([res.status, res.headers.get('cache-control')]).toEqual([200, IMMUTABLE]);
    expect(res.headers.get('content-type')).toBe('text/css; charset=utf-8');
  });
});
