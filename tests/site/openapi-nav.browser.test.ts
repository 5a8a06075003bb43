// /reference/openapi/ has navigation that works at phone width: a list of every operation by
// tag (titled, not the raw tag), one tap from anywhere on the page, that jumps to the operation
// Scalar rendered; and Scalar reports no document validation errors.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listOperations, type OpenApiDocument } from '../../scripts/docs/lib/api-reference.ts';
import { OPENAPI_FILE, REPO_ROOT } from '../../scripts/docs/lib/site-paths.ts';
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

describe('/reference/openapi/ at 390px', () => {
  it('lists every operation under titled tags, jumps to the one picked, and Scalar validates the document', async () => {
    const doc = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as OpenApiDocument;
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    page.setDefaultTimeout(60_000);
    const warnings: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'warning' || m.type() === 'error') warnings.push(m.text());
    });
    await page.goto(`${server.url}/reference/openapi/`, { waitUntil: 'load' });
    const nav = page.getByRole('navigation', { name: 'Operations' });
    const links = nav.locator('a');
    expect(await links.count()).toBe(listOperations(doc).length);
    expect(await nav.locator('.fp-openapi-nav-tag').allTextContents()).toContain('Event investigation');
    // Scalar has rendered the operations.
    const target = page.locator('[id="api-1/tag/events/GET/agent/v1/events/{event_id}"]');
    await target.waitFor({ state: 'attached' });
    // Every link of the list names a section Scalar rendered.
    const hrefs = await links.evaluateAll((as) => as.map((a) => a.getAttribute('href') as string));
    const missing = await page.evaluate(
      (ids) =>
        ids.filter(
          (id) =>
            !(globalThis as unknown as { document: { getElementById(i: string): unknown } }).document.getElementById(
              id,
            ),
        ),
      hrefs.map((h) => decodeURIComponent(h.slice(1))),
    );
    expect(missing).toEqual([]);
    // Scalar titles the tag sections with the tags' x-displayName, not the raw tag.
    expect(await page.locator('[id="api-1/tag/events"]').innerText()).toContain('Event investigation');
    // Far down the page, the list is still one tap away.
    await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 20_000));
    const summary = nav.locator('summary');
    expect(await summary.isVisible()).toBe(true);
    await summary.click();
    await nav.getByRole('link', { name: /Read one event/ }).click();
    await expect.poll(() => target.evaluate((el) => Math.round(el.getBoundingClientRect().top))).toBeLessThan(400);
    expect(await target.evaluate((el) => el.getBoundingClientRect().bottom)).toBeGreaterThan(0);
    expect(await nav.locator('details').getAttribute('open')).toBeNull();
    await page.screenshot({ path: join(SCREENSHOTS, 'openapi-390.png') });
    expect(warnings.filter((w) => /validation/i.test(w))).toEqual([]);
    await context.close();
  }, 180_000);
});
