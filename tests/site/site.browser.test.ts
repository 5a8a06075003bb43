// End-to-end checks of the built docs site in Debian Chromium: the key pages
// render, the sidebar navigates, search works offline, Copy as Markdown puts
// the twin on the clipboard, Scalar lists every operation of the contract, and
// nothing is fetched from outside the machine. Screenshots go to
// test-results/screenshots/ (gitignored).
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { withPublicOrigin } from '../../api/src/docs-paths.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listOperations, type OpenApiDocument } from '../../scripts/docs/lib/api-reference.ts';
import { OPENAPI_FILE, REPO_ROOT } from '../../scripts/docs/lib/site-paths.ts';
import { launchBrowser } from './helpers/browser.ts';
import { DIST_DIR, ensureSiteBuilt, readDist } from './helpers/site.ts';
import { type StaticServer, startStaticServer } from './helpers/static-server.ts';

const SCREENSHOTS = join(REPO_ROOT, 'test-results/screenshots');
// Generous: CI machines have 2 cores shared with other suites.
const PAGE_TIMEOUT = 60_000;

let server: StaticServer;
let browser: Browser;
let context: BrowserContext;
/** Requests to anything other than the local server: there must be none. */
const external: string[] = [];

async function open(path: string): Promise<Page> {
  const page = await context.newPage();
  page.setDefaultTimeout(PAGE_TIMEOUT);
  await page.goto(`${server.url}${path}`, { waitUntil: 'domcontentloaded', timeout: PAGE_TIMEOUT });
  return page;
}

beforeAll(async () => {
  await ensureSiteBuilt();
  mkdirSync(SCREENSHOTS, { recursive: true });
  server = await startStaticServer(DIST_DIR);
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  context.on('request', (req) => {
    const url = req.url();
    if (!url.startsWith(server.url) && !/^(data|blob|about):/.test(url)) external.push(url);
  });
}, 900_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.close();
});

describe('docs site in a browser', { timeout: 240_000 }, () => {
  it('renders the home page', async () => {
    const page = await open('/');
    await expect(page.locator('h1').first().innerText()).resolves.toBe('Flowport');
    await expect(page.locator('a[href="/start/quickstart/"]').first().isVisible()).resolves.toBe(true);
    await page.screenshot({ path: join(SCREENSHOTS, 'home.png'), fullPage: true });
    await page.close();
  });

  it('renders a guide and navigates through the sidebar', async () => {
    const page = await open('/start/quickstart/');
    await expect(page.locator('h1#_top').innerText()).resolves.toBe('Quickstart');
    await page.screenshot({ path: join(SCREENSHOTS, 'guide-quickstart.png'), fullPage: false });
    const sidebar = page.locator('#starlight__sidebar');
    // Current page is marked in the sidebar.
    await expect(sidebar.locator('a[aria-current="page"]').getAttribute('href')).resolves.toBe('/start/quickstart/');
    await sidebar.locator('a[href="/recover/replay/"]').click();
    await page.waitForURL(`${server.url}/recover/replay/`);
    await expect(page.locator('h1#_top').innerText()).resolves.toBe('Replay an event');
    await expect(page.locator('#starlight__sidebar a[aria-current="page"]').getAttribute('href')).resolves.toBe(
      '/recover/replay/',
    );
    // Next/previous links follow the sidebar order.
    await page.locator('a[rel="next"]').click();
    await page.waitForURL((url) => url.pathname !== '/recover/replay/');
    await expect(page.locator('h1#_top').innerText()).resolves.not.toBe('Replay an event');
    await page.close();
  });

  it('renders the API reference with every operation of the contract', async () => {
    const page = await open('/reference/api/');
    await expect(page.locator('h1#_top').innerText()).resolves.toBe('Agent Operations API reference');
    await page.screenshot({ path: join(SCREENSHOTS, 'api-reference.png'), fullPage: false });
    const text = await page.locator('main').innerText();
    const doc = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as OpenApiDocument;
    for (const { method, path } of listOperations(doc)) expect(text).toContain(`${method} ${path}`);
    await page.close();
  });

  it('searches offline with the docs search index (Starlight search dialog)', async () => {
    const page = await open('/start/quickstart/');
    await page.locator('button[data-open-modal]').first().click();
    const input = page.locator('dialog[open] input[type="search"], dialog[open] input').first();
    await input.fill('idempotency key');
    const result = page.locator('dialog[open] a[href*="/recover/duplicates-and-idempotency/"]').first();
    await result.waitFor({ state: 'visible', timeout: PAGE_TIMEOUT });
    expect(await result.innerText()).toMatch(/idempotency/i);
    // Best first, each result with its score (the same index and scores as GET /agent/v1/docs/search).
    const scores = (await page.locator('dialog[open] .fp-search-score').allInnerTexts()).map((t) =>
      Number(t.replace('score ', '')),
    );
    expect(scores.length).toBeGreaterThan(1);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    await result.click();
    await page.waitForURL((url) => url.pathname === '/recover/duplicates-and-idempotency/');
    expect(new URL(page.url()).pathname).toBe('/recover/duplicates-and-idempotency/');
    await page.close();
  });

  it('Ctrl+K opens and closes the search dialog, with the search field focused', async () => {
    const page = await open('/start/quickstart/');
    // The search element enables the button when it starts (the shortcut comes with it); opening
    // focuses the search field.
    await page.locator('button[data-open-modal]:not([disabled])').waitFor();
    await page.locator('#starlight__search input').waitFor({ state: 'attached' });
    await page.keyboard.press('Control+k');
    const dialog = page.locator('site-search dialog[open]');
    await dialog.waitFor({ state: 'visible' });
    const input = dialog.locator('input').first();
    await input.waitFor({ state: 'visible' });
    await expect(input.evaluate((el) => el === el.ownerDocument.activeElement)).resolves.toBe(true);
    await page.keyboard.press('Control+k');
    await dialog.waitFor({ state: 'detached' });
    await page.close();
  });

  it('Copy as Markdown puts the page twin on the clipboard', async () => {
    const page = await open('/agent-access/refusals/');
    await page.locator('button.fp-copy-md').click();
    // The button fetches the twin, then writes the clipboard: wait for the status it announces.
    await page.locator('.fp-copy-status', { hasText: 'Copied' }).waitFor();
    // The test tsconfig has no DOM lib; describe the one browser API used here.
    type WithClipboard = { navigator: { clipboard: { readText(): Promise<string> } } };
    const clipboard = await page.evaluate(() =>
      (globalThis as unknown as WithClipboard).navigator.clipboard.readText(),
    );
    expect(clipboard).toBe(withPublicOrigin(readDist('/agent-access/refusals.md'), server.url));
    expect(clipboard.startsWith('# Refusals\n')).toBe(true);
    await page.close();
  });

  it('Scalar renders the contract from the self-hosted bundle and lists every operation', async () => {
    const page = await open('/reference/openapi/');
    const doc = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as OpenApiDocument;
    const ops = listOperations(doc);
    expect(ops.length).toBeGreaterThan(0);
    const root = page.locator('#fp-scalar-root');
    await root
      .getByText(ops[0]?.op.summary as string)
      .first()
      .waitFor({ state: 'attached', timeout: 180_000 });
    // Scalar renders operation sections progressively after the first one appears.
    const missingOps = async () => {
      const text = await root.innerText();
      return ops
        .filter((o) => !text.includes(o.op.summary ?? o.op.operationId ?? ''))
        .map((o) => `${o.method} ${o.path}`);
    };
    await expect.poll(missingOps, { timeout: 60_000, interval: 500 }).toEqual([]);
    await root.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SCREENSHOTS, 'scalar.png'), fullPage: false });
    await page.close();
  });

  it('fetched nothing from outside the local server', () => {
    expect(external).toEqual([]);
  });
});
