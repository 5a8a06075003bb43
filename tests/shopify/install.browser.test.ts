// The install in real Chromium, as a merchant does it: /shopify/install?shop=<sandbox shop> →
// Install on the sandbox's Shopify authorize page → signed in on the merchant page → a grant made
// there → its token works on the Agent API. The merchant page passes axe (WCAG 2.1 A/AA: no serious
// or critical violation) at 1280 px and 390 px, and works with JavaScript turned off. The page's
// CSP allows one script (the copy button's, by hash); axe comes in as an init script, as in the
// docs site's sweep.
import type { Browser, Page } from 'playwright-core';
import { seriousViolations, withAxe } from '../site/helpers/axe.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHOPIFY_APP_PATHS } from '../../api/src/lib/shopify-app.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { launchBrowser } from '../site/helpers/browser.ts';
import { uniqueShop } from './helpers.ts';

let server: TestServer;
let browser: Browser;
beforeAll(async () => {
  server = await startTestServer({ worker: false });
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function installIn(page: Page, shop: string): Promise<void> {
  await page.goto(`${server.url}${SHOPIFY_APP_PATHS.install}?shop=${shop}`);
  await expect.poll(() => page.getByRole('heading', { name: 'Install Flowport' }).count()).toBe(1);
  await page.getByRole('button', { name: 'Install' }).click();
  await page.waitForURL(`${server.url}${SHOPIFY_APP_PATHS.merchant}`);
}

describe('install in a browser', () => {
  it('installs, lands signed in, creates a grant whose token works on the Agent API', async () => {
    const shop = uniqueShop('browser');
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await withAxe(context);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    const page = await context.newPage();
    try {
      await installIn(page, shop);
      await expect.poll(() => page.getByRole('heading', { level: 1, name: shop }).count()).toBe(1);
      const cookie = (await context.cookies()).find((c) => c.name === 'flowport_merchant');
      expect(cookie?.httpOnly).toBe(true);
      expect(cookie?.sameSite).toBe('Lax');
      expect(await seriousViolations(page)).toEqual([]);

      await page.getByLabel('Actor name').fill('Browser agent');
      await page.getByLabel('Tier').selectOption('observer');
      await page.getByRole('button', { name: 'Create grant' }).click();
      const tokenField = page.getByLabel(/^Token for Browser agent/);
      await expect.poll(() => tokenField.count()).toBe(1);
      const token = await tokenField.inputValue();
      expect(token).toMatch(/^fpg_/);
      expect(await seriousViolations(page)).toEqual([]);
      // The copy button (the page's one script, allowed by its CSP hash) copies the token.
      await page.getByRole('button', { name: 'Copy token' }).click();
      await expect.poll(() => page.getByRole('button', { name: 'Copied' }).count()).toBe(1);
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(token);

      const res = await fetch(`${server.url}/agent/v1/grant`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { actor: { name: string; kind: string }; tier: string };
      expect(body.actor).toMatchObject({ name: 'Browser agent', kind: 'agent' });
      expect(body.tier).toBe('observer');
    } finally {
      await context.close();
    }
  });

  it('meets WCAG AA at phone width, and works with JavaScript off', async () => {
    const shop = uniqueShop('phone');
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, javaScriptEnabled: false });
    const page = await context.newPage();
    try {
      await installIn(page, shop);
      await page.getByLabel('Actor name').fill('No-JS person');
      await page.getByLabel('Actor kind').selectOption('human');
      await page.getByRole('button', { name: 'Create grant' }).click();
      await expect.poll(() => page.getByLabel(/^Token for No-JS person/).count()).toBe(1);
      // Without JavaScript there is no copy button: the token waits in its read-only field.
      expect(await page.getByRole('button', { name: 'Copy token' }).count()).toBe(0);
      // Revoking asks first (a page of its own), then says so; a reload shows neither twice.
      await page.getByRole('link', { name: /Revoke grant No-JS person/ }).click();
      await page.getByRole('button', { name: 'Revoke grant' }).click();
      await expect.poll(() => page.getByRole('status').textContent()).toContain('revoked');
      await expect.poll(() => page.getByRole('cell', { name: /^revoked / }).count()).toBe(1);
    } finally {
      await context.close();
    }
    const axeContext = await browser.newContext({ viewport: { width: 390, height: 844 } });
    await withAxe(axeContext);
    const axePage = await axeContext.newPage();
    try {
      await installIn(axePage, uniqueShop('phone-axe'));
      expect(await seriousViolations(axePage)).toEqual([]);
      await axePage.goto(`${server.url}${SHOPIFY_APP_PATHS.install}?shop=not-a-store.example.com`);
      expect(await seriousViolations(axePage)).toEqual([]);
    } finally {
      await axeContext.close();
    }
  });
});
