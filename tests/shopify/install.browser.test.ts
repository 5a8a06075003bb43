// The install in real Chromium, as a merchant does it: /shopify/install?shop=<sandbox shop> →
// Install on the sandbox's Shopify authorize page → signed in on the merchant page → a grant made
// there → its token works on the Agent API. The merchant page passes axe (WCAG 2.1 A/AA: no serious
// or critical violation) at 1280 px and 390 px, and works with JavaScript turned off. The page's
// CSP allows one script (the copy button's, by hash); axe comes in as an init script, as in the
// docs site's sweep. It reads as a merchant reads it (issue 44): times in words (the ISO value in
// a <time>), the shop's name once at the top, one sentence for every trigger Flow has not reported
// on; at 1280 px an OAuth client's grant leaves Revoke in view, and at 390 px nothing scrolls
// sideways, trigger names are not broken mid-word and Revoke is on screen.
import type { Browser, Page } from 'playwright-core';
import { seriousViolations, withAxe } from '../site/helpers/axe.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHOPIFY_APP_PATHS } from '../../api/src/lib/shopify-app.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { launchBrowser } from '../site/helpers/browser.ts';
import { createGrant } from '../../api/src/auth/grants.ts';
import { markGrantIssuedViaOAuth } from '../../api/src/store/tables/grants.ts';
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

/** A grant as an MCP client's OAuth consent leaves it: a client id that is a long metadata-document URL. */
async function oauthGrant(shop: string): Promise<void> {
  const { db } = server.runtime.services;
  const row = await db.get<{ id: string }>('SELECT id FROM shops WHERE domain = ?', [shop]);
  const g = await createGrant(server.runtime.services, {
    shopId: row?.id ?? '',
    tier: 'operator',
    actorKind: 'agent',
    actorName: 'Support automation MCP client',
    actorClient:
      'https://clients.example.com/.well-known/oauth-client-metadata/flowport-support-automation-client.json',
    expiresInMs: 86_400_000,
  });
  await markGrantIssuedViaOAuth(db, g.id);
}

/** How the page lays out at the viewport's width: sideways scroll, Revoke links off screen or clipped, names broken. */
interface Layout {
  scroll: number;
  wrapsScroll: number;
  revokes: { right: number; clipped: boolean }[];
  brokenNames: string[];
  overflowing: string[];
  times: [string, string][];
}

// Runs in the page (a string: the tests have no DOM types). An inline name broken over two lines
// has two boxes; `overflowing` names what sticks out, for the failure message.
const LAYOUT = `(() => {
  const width = document.documentElement.clientWidth;
  const all = (sel) => [...document.querySelectorAll(sel)];
  return {
    scroll: document.documentElement.scrollWidth - width,
    wrapsScroll: all('.table-wrap').filter((w) => w.scrollWidth > w.clientWidth).length,
    revokes: all('a[href$="/revoke"]').map((a) => {
      const r = a.getBoundingClientRect();
      const wrap = a.closest('.table-wrap')?.getBoundingClientRect();
      return { right: r.right, clipped: r.right > width || (wrap ? r.right > wrap.right + 1 : false) };
    }),
    brokenNames: all('#connection ~ .table-wrap code').filter((c) => c.getClientRects().length > 1).map((c) => c.textContent),
    overflowing: all('body *')
      .filter((e) => e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().right > width)
      .map((e) => e.tagName + ' ' + e.scrollWidth + '/' + e.clientWidth + ': ' + (e.textContent || '').slice(0, 60))
      .slice(0, 8),
    times: all('time').map((t) => [t.getAttribute('datetime'), t.textContent]),
  };
})()`;

/** How the page lays out at the viewport's width. */
const layout = (page: Page) => page.evaluate(LAYOUT) as Promise<Layout>;

const IN_WORDS = /^\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} UTC$/;

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
      // The shop's name once at the top (the heading), one sentence for the triggers Flow has not reported on.
      expect(await page.locator('header').textContent()).not.toContain(shop);
      expect(await page.getByText(/Flow has not said yet/).count()).toBe(1);
      const first = await layout(page);
      expect(first.times.length).toBeGreaterThan(0);
      for (const [iso, words] of first.times) {
        expect(iso).toMatch(/^\d{4}-\d{2}-\d{2}T/);
        expect(words).toMatch(IN_WORDS);
      }

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

      // An MCP client's grant: Revoke stays in view for both grants at 1280 px.
      await oauthGrant(shop);
      await page.goto(`${server.url}${SHOPIFY_APP_PATHS.merchant}`);
      const wide = await layout(page);
      expect(wide.revokes).toHaveLength(2);
      expect(wide.revokes.filter((r) => r.clipped)).toEqual([]);
      expect([wide.scroll, wide.wrapsScroll, wide.overflowing]).toEqual([0, 0, []]);
      expect(await seriousViolations(page)).toEqual([]);
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
      await expect.poll(() => page.getByRole('cell', { name: /^(Status: )?revoked / }).count()).toBe(1);
    } finally {
      await context.close();
    }
    const axeContext = await browser.newContext({ viewport: { width: 390, height: 844 } });
    await withAxe(axeContext);
    const axePage = await axeContext.newPage();
    try {
      const phoneShop = uniqueShop('phone-axe');
      await installIn(axePage, phoneShop);
      await oauthGrant(phoneShop);
      await axePage.goto(`${server.url}${SHOPIFY_APP_PATHS.merchant}`);
      expect(await seriousViolations(axePage)).toEqual([]);
      // Nothing scrolls sideways, trigger names are whole, Revoke is on screen.
      const narrow = await layout(axePage);
      expect([narrow.scroll, narrow.wrapsScroll, narrow.overflowing]).toEqual([0, 0, []]);
      expect(narrow.brokenNames).toEqual([]);
      expect(narrow.revokes).toHaveLength(1);
      expect(narrow.revokes.filter((r) => r.clipped)).toEqual([]);
      // FLOWPORT_MERCHANT_SCREENSHOTS=<dir>: the page at 390 px, to look at.
      const dir = process.env.FLOWPORT_MERCHANT_SCREENSHOTS;
      if (dir) await axePage.screenshot({ path: `${dir}/merchant-390.png`, fullPage: true });
      await axePage.goto(`${server.url}${SHOPIFY_APP_PATHS.install}?shop=not-a-store.example.com`);
      expect(await seriousViolations(axePage)).toEqual([]);
    } finally {
      await axeContext.close();
    }
  });
});
