// One build of the docs site serves any origin: its absolute links (llms.txt, the twins'
// Canonical/Markdown lines, canonical tags, sitemap, robots.txt) are built with a placeholder
// origin, and the server writes the origin of its configured public URL in its place as it
// serves them. Nothing is rebuilt per FLOWPORT_PUBLIC_URL or PORT.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCS_BUILD_ORIGIN } from '../../api/src/docs-paths.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { DIST_DIR, ensureSiteBuilt, readDist, siteOrigin } from './helpers/site.ts';

const PUBLIC_ORIGIN = 'https://flows.example.com';
let byPort: TestServer;
let byPublicUrl: TestServer;

beforeAll(async () => {
  await ensureSiteBuilt();
  const env = { FLOWPORT_SITE_DIR: DIST_DIR };
  const opts = { worker: false, bootstrapSandbox: false, store: 'sqlite' } as const;
  byPort = await startTestServer({ ...opts, env });
  byPublicUrl = await startTestServer({ ...opts, env: { ...env, FLOWPORT_PUBLIC_URL: `${PUBLIC_ORIGIN}/` } });
}, 900_000);

afterAll(async () => {
  await byPort?.close();
  await byPublicUrl?.close();
});

function llmsLinks(text: string): string[] {
  return [...text.matchAll(/^- \[[^\]]+\]\(([^)]+)\)/gm)].map((m) => m[1] as string);
}

describe('the origin in the docs site', () => {
  it('is a placeholder in the build, whatever FLOWPORT_PUBLIC_URL or PORT says', () => {
    expect(siteOrigin()).toBe(DOCS_BUILD_ORIGIN);
    const links = llmsLinks(readDist('/llms.txt'));
    expect(links.length).toBeGreaterThan(20);
    expect(links.filter((l) => !l.startsWith(`${DOCS_BUILD_ORIGIN}/`))).toEqual([]);
  });

  it("is the server's public URL origin in everything it serves, for two servers of one build", async () => {
    for (const [server, origin] of [
      [byPort, byPort.url],
      [byPublicUrl, PUBLIC_ORIGIN],
    ] as const) {
      const llms = await (await fetch(`${server.url}/llms.txt`)).text();
      const links = llmsLinks(llms);
      expect(links.length).toBeGreaterThan(20);
      expect(links.filter((l) => !l.startsWith(`${origin}/`))).toEqual([]);
      const twin = await (await fetch(`${server.url}/start/quickstart.md`)).text();
      expect(twin.split('\n').slice(2, 4)).toEqual([
        `Canonical: ${origin}/start/quickstart/`,
        `Markdown: ${origin}/start/quickstart.md`,
      ]);
      const html = await (await fetch(`${server.url}/start/quickstart/`)).text();
      expect(html).toContain(`<link rel="canonical" href="${origin}/start/quickstart/"`);
      const robots = await (await fetch(`${server.url}/robots.txt`)).text();
      expect(robots).toContain(`Sitemap: ${origin}/sitemap-index.xml`);
      const sitemap = await (await fetch(`${server.url}/sitemap-0.xml`)).text();
      expect(sitemap).toContain(`<loc>${origin}/start/quickstart/</loc>`);
      for (const text of [llms, twin, html, robots, sitemap]) expect(text).not.toContain(DOCS_BUILD_ORIGIN);
    }
  });
});
