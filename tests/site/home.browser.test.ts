// The home page shows the product: a code-first hero (the signed curl, the receipt, the delivered
// event), the flow as an inline SVG (sender → intake → receipt → Flow), and top navigation to
// Docs, API, MCP and CLI, at desktop and phone width, with nothing fetched from elsewhere and
// nothing wider than the screen. Screenshots go to test-results/screenshots/ (gitignored) for a
// person to look at; tests/site/a11y covers axe.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../scripts/docs/lib/site-paths.ts';
import { launchBrowser } from './helpers/browser.ts';
import { DIST_DIR, ensureSiteBuilt } from './helpers/site.ts';
import { type StaticServer, startStaticServer } from './helpers/static-server.ts';

const SCREENSHOTS = join(REPO_ROOT, 'test-results/screenshots');
let server: StaticServer;
let browser: Browser;

beforeAll(async () => {
  await ensureSiteBuilt();
  mkdirSync(SCREENSHOTS, { recursive: true });
  server = await startStaticServer(DIST_DIR);
  browser = await launchBrowser();
}, 900_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('home page', () => {
  for (const width of [1280, 390]) {
    it(`at ${width}px: code-first hero, flow diagram, top navigation; no overflow, nothing external`, async () => {
      const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme: 'dark' });
      const external: string[] = [];
      context.on('request', (req) => {
        if (!req.url().startsWith(server.url) && !req.url().startsWith('data:')) external.push(req.url());
      });
      const page = await context.newPage();
      await page.goto(`${server.url}/`, { waitUntil: 'load', timeout: 60_000 });
      const hero = page.locator('.fp-hero-code');
      // The three steps are the recorded ones (openapi/examples/intake.json, getEvent.json).
      await expect.poll(() => hero.innerText()).toContain('x-flowport-signature: sha256=<SIGNATURE>');
      const code = await hero.innerText();
      expect(code).toContain('202 Accepted');
      expect(code).toContain('"receipt_id": "rcpt_00000000000000000000000001"');
      expect(code).toContain('"state": "delivered"');
      // One drawing shows at a time, inline (no <img>, no external file), with the four steps.
      const svg = page.locator('figure.fp-flow svg:visible');
      expect(await svg.count()).toBe(1);
      const steps = await svg.locator('.fp-flow-title').allTextContents();
      expect(steps).toEqual(['Sender', 'Intake', 'Receipt', 'Shopify Flow']);
      expect(await svg.getAttribute('role')).toBe('img');
      // Top navigation (in the header, at every width).
      const nav = page.getByRole('navigation', { name: 'Product' });
      for (const [name, href] of [
        ['Docs', '/start/quickstart/'],
        ['API', '/reference/api/'],
        ['MCP', '/reference/mcp/'],
        ['CLI', '/reference/cli/'],
      ]) {
        const link = nav.getByRole('link', { name, exact: true });
        await expect.poll(() => link.isVisible()).toBe(true);
        expect(await link.getAttribute('href')).toBe(href);
      }
      const overflow = await page.evaluate(() => {
        const w = globalThis as unknown as {
          innerWidth: number;
          document: { documentElement: { scrollWidth: number } };
        };
        return w.document.documentElement.scrollWidth - w.innerWidth;
      });
      expect(overflow).toBeLessThanOrEqual(0);
      await page.screenshot({ path: join(SCREENSHOTS, `home-${width}.png`), fullPage: true });
      expect(external).toEqual([]);
      await context.close();
    }, 120_000);
  }
});
