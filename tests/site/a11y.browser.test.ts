// Accessibility sweep: axe-core (WCAG 2.1 A/AA rules) on every page of the
// built site, in Debian Chromium. Zero serious or critical violations allowed.
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from './helpers/browser.ts';
import { DIST_DIR, ensureSiteBuilt, htmlPages } from './helpers/site.ts';
import { type StaticServer, startStaticServer } from './helpers/static-server.ts';

let server: StaticServer;
let browser: Browser;
let context: BrowserContext;

beforeAll(async () => {
  await ensureSiteBuilt();
  server = await startStaticServer(DIST_DIR);
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
}, 900_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.close();
});

interface Problem {
  page: string;
  rule: string;
  impact: string;
  help: string;
  targets: string[];
}

describe('accessibility', () => {
  it('every page has zero serious or critical axe violations', async () => {
    const pages = htmlPages();
    expect(pages.length).toBeGreaterThan(20);
    const problems: Problem[] = [];
    // Two tabs take turns on the page list: axe is CPU-bound, and this sweep is the suite's long pole.
    const queue = [...pages];
    const sweep = async () => {
      const page = await context.newPage();
      page.setDefaultTimeout(60_000);
      for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
        await page.goto(`${server.url}${path}`, { waitUntil: 'load', timeout: 60_000 });
        if (path === '/reference/openapi/') {
          // Let the interactive reference render so its UI is checked too.
          await page.locator('#fp-scalar-root *').first().waitFor({ timeout: 60_000 });
        }
        const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
        for (const v of result.violations) {
          if (v.impact !== 'serious' && v.impact !== 'critical') continue;
          problems.push({
            page: path,
            rule: v.id,
            impact: v.impact,
            help: v.help,
            targets: v.nodes.slice(0, 5).map((n) => n.target.join(' ')),
          });
        }
      }
      await page.close();
    };
    await Promise.all([sweep(), sweep()]);
    problems.sort((a, b) => a.page.localeCompare(b.page));
    expect(problems).toEqual([]);
  }, 1_800_000);
});
