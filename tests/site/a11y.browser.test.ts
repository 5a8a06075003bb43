// Accessibility sweep: axe-core (WCAG 2.1 A/AA rules) on every page markup of the built site (pages
// that differ only in their words, like most error-code pages, are checked through one of them; see
// markupKey), in Debian Chromium. Zero serious or critical violations allowed.
// axe is loaded into every page as an init script and run there with `axe.run`: the same rules
// as @axe-core/playwright's AxeBuilder, which re-injected axe and serialized its results through
// the frame messenger on every call (about 1.5 s a page here, against 0.25 s run in the page).
// The site has no iframes.
// The sweep is at desktop width (1280px); a few representative pages are also checked at phone
// width (390px), where Starlight and Scalar switch to different markup. The API reference
// (/reference/openapi/) is checked, at both widths, once Scalar has rendered all of it.
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AXE_SOURCE, axeViolations } from './helpers/axe.ts';
import { launchBrowser } from './helpers/browser.ts';
import { DIST_DIR, ensureSiteBuilt, htmlPages, readDist } from './helpers/site.ts';
import { type StaticServer, startStaticServer } from './helpers/static-server.ts';

const DESKTOP = 1280;
const PHONE = 390;

let server: StaticServer;
let browser: Browser;
let context: BrowserContext;

/** A browser context at this width with axe in every page (and any other init scripts). */
async function axeContext(width: number, ...initScripts: string[]): Promise<BrowserContext> {
  const ctx = await browser.newContext({ viewport: { width, height: 900 } });
  for (const content of [AXE_SOURCE, ...initScripts]) await ctx.addInitScript({ content });
  return ctx;
}

beforeAll(async () => {
  await ensureSiteBuilt();
  server = await startStaticServer(DIST_DIR);
  browser = await launchBrowser();
  context = await axeContext(DESKTOP);
}, 900_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.close();
});

const SCALAR_PAGE = '/reference/openapi/';

interface Problem {
  page: string;
  rule: string;
  impact: string;
  help: string;
  targets: string[];
}

/** The serious and critical violations on the page, as found at `path`. */
async function seriousProblems(page: Page, path: string, exclude: string[] = []): Promise<Problem[]> {
  return (await axeViolations(page, exclude))
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({
      page: path,
      rule: v.id,
      impact: v.impact as string,
      help: v.help,
      targets: v.nodes.slice(0, 5).map((n) => n.target.join(' ')),
    }));
}

/** Scalar's client picker (in its first section): a tab per featured client, then the "More" tab. */
function scalarClientPicker(page: Page): Locator {
  return page.locator('#fp-scalar-root').getByRole('tablist', { name: 'Client Libraries' });
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

interface Contract {
  paths?: Record<string, Record<string, unknown>>;
  webhooks?: Record<string, unknown>;
}

/**
 * Wait until Scalar has rendered the whole reference. It mounts client-side and renders lazily:
 * its intro, then tag sections, then operation sections, each batch in an idle callback (its
 * "lazy bus"), some 14,000 elements over seconds. Every operation of the contract the page
 * loaded gets a <section> whose id ends with its method and path (Scalar 1.46:
 * `api-1/tag/account/GET/agent/v1/grant`); once all are there the DOM stops changing. Models are
 * not rendered (`hideModels`), and the contract has no webhooks.
 */
async function scalarRendered(page: Page): Promise<void> {
  const root = page.locator('#fp-scalar-root');
  // The contract as the page got it (tests may route a smaller one).
  const contract = (await root.evaluate((el) =>
    fetch(el.getAttribute('data-openapi') ?? '').then((r) => r.json()),
  )) as Contract;
  if (Object.keys(contract.webhooks ?? {}).length > 0) {
    throw new Error('The contract has webhooks: make scalarRendered wait for their sections too.');
  }
  const operations = Object.entries(contract.paths ?? {}).flatMap(([path, item]) =>
    HTTP_METHODS.filter((m) => m in item).map((m) => `/${m.toUpperCase()}${path}`),
  );
  expect(operations.length).toBeGreaterThan(0);
  const sections = root.locator('section[id]');
  const missing = async () => {
    const ids = await sections.evaluateAll((els) => els.map((el) => el.id));
    return operations.filter((op) => !ids.some((id) => id.endsWith(op)));
  };
  await expect
    .poll(missing, {
      timeout: 60_000,
      interval: 250,
      message: "Scalar's sections for these operations never appeared (did Scalar change its section ids?)",
    })
    .toEqual([]);
}

/** Load a page for axe; on the API reference, wait until Scalar has rendered all of it. */
async function open(page: Page, path: string): Promise<void> {
  await page.goto(`${server.url}${path}`, { waitUntil: 'load', timeout: 60_000 });
  if (path === SCALAR_PAGE) await scalarRendered(page);
}

/**
 * Serve the page a contract of one operation (the first, or the one at `path`): Scalar's picker,
 * menus and dialogs are the same, and it renders at once, where the whole reference grows to some
 * 14,000 elements over seconds that each axe run waits for and walks (the sweeps check the whole
 * reference). Returns the operations of that path, as in the contract.
 */
async function routeOneOperation(page: Page, path?: string): Promise<Record<string, unknown>> {
  const contract = JSON.parse(readDist('/reference/openapi/agent-operations.openapi.json')) as Contract;
  const [onePath, operations] = (
    path === undefined ? Object.entries(contract.paths ?? {})[0] : [path, contract.paths?.[path]]
  ) as [string, Record<string, unknown> | undefined];
  if (!operations) throw new Error(`The contract has no path ${path}: pick another for this test.`);
  const oneOperation = { ...contract, paths: { [onePath]: operations }, webhooks: undefined };
  await page.route('**/agent-operations.openapi.json', (route) => route.fulfill({ json: oneOperation }));
  return operations;
}

/** The text a sighted user sees in the element: its rendered text nodes (visually hidden text has a 1px box). */
function shownText(locator: Locator): Promise<string> {
  return locator.evaluate((root) => {
    const out: string[] = [];
    const walker = root.ownerDocument.createTreeWalker(root, 4 /* NodeFilter.SHOW_TEXT */);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const parent = n.parentElement;
      const text = n.textContent?.trim();
      if (text && parent && parent.getBoundingClientRect().width > 1 && parent.checkVisibility()) out.push(text);
    }
    return out.join(' ');
  });
}

/**
 * axe's serious and critical violations once what was just opened has faded in (mid-fade its text
 * is part transparent: low contrast). Scroll-driven animations (Scalar's, on its scrolling tab
 * strips) run as long as the page does: only those on the document's timeline are waited for.
 */
async function seriousProblemsOnceShown(page: Page, where: string): Promise<Problem[]> {
  await page.evaluate(
    'Promise.allSettled(document.getAnimations().filter((a) => a.timeline === document.timeline && a.effect?.getComputedTiming().endTime !== Infinity).map((a) => a.finished))',
  );
  return seriousProblems(page, where);
}

/** Wait for an element of a page already `open`ed, failing with a hint that names the override it checks. */
async function present(locator: Locator, what: string, override: string): Promise<Locator> {
  try {
    await locator.waitFor({ timeout: 60_000 });
  } catch (err) {
    throw new Error(
      `${what} not found (${String(err).split('\n')[0]}). Scalar changed its markup: check whether ${override} ` +
        'is still needed, update it and this test.',
    );
  }
  return locator;
}

/**
 * The sweep's unit: a page's markup, its <main> as the sequence of elements and classes with the
 * text left out and repeats of one element folded. The chrome around <main> (header, sidebar,
 * footer) is the same on every page, and the table of contents follows <main>'s headings. Most of
 * the 104 error-code pages, generated from the error registry by one template, differ only in their
 * words, which cannot change what axe finds: one page checks each markup, the one with the most
 * text (where overflow and wrapping would show first).
 */
function markupKey(html: string): string {
  const main = html.slice(html.indexOf('<main'), html.indexOf('</main>'));
  const tags = [...main.matchAll(/<([a-zA-Z][\w-]*)(?:[^>]*?\sclass="([^"]*)")?/g)].map((m) => `${m[1]}.${m[2] ?? ''}`);
  // The set of element kinds (tag and class) the main content uses, not their order or count: two
  // pages made of the same kinds of elements (most error-code and operation pages, which differ in
  // how many paragraphs, rows or list items they hold) meet the same axe rules. 217 pages are 74
  // such markups, where the sequence of tags made 134: the sweep is the suite's long pole.
  return [...new Set(tags)].sort().join(' ');
}

const markups = new Map<string, { representative: string; pages: string[] }>();
function markupOf(path: string): { representative: string; pages: string[] } {
  if (markups.size === 0) {
    const groups = new Map<string, { path: string; size: number }[]>();
    for (const p of htmlPages()) {
      const html = readDist(`${p}index.html`);
      const key = markupKey(html);
      groups.set(key, [...(groups.get(key) ?? []), { path: p, size: html.length }]);
    }
    for (const group of groups.values()) {
      const representative = group.reduce((a, b) => (b.size > a.size ? b : a)).path;
      for (const p of group) markups.set(p.path, { representative, pages: group.map((g) => g.path) });
    }
  }
  const found = markups.get(path);
  if (!found) throw new Error(`${path} is not a page of the built site`);
  return found;
}

/** Starlight's site navigation, the same on every page but for its open groups and current page. */
const SIDEBAR = 'nav.sidebar';
/** A page's top-level section: `/reference/errors/x/` → `reference`. */
const section = (path: string) => path.split('/')[1] ?? '';

/** One page per markup, in the site's order. */
function pagesByMarkup(pages: string[]): string[] {
  return pages.filter((p) => markupOf(p).representative === p);
}

describe('accessibility', () => {
  it('the check finds a violation when there is one (an image without a text alternative)', async () => {
    const page = await context.newPage();
    await page.goto(`${server.url}/`, { waitUntil: 'load' });
    await page.evaluate(
      "document.querySelector('main').append(Object.assign(document.createElement('img'), { src: '/favicon.svg' }))",
    );
    const found = await axeViolations(page);
    await page.close();
    expect(found.map((v) => [v.id, v.impact])).toContainEqual(['image-alt', 'critical']);
  });

  // Starlight's search button had aria-label="Search" while it shows "Search" and a shortcut hint
  // (axe 4.14 `label-content-name-mismatch`, serious). site/src/components/Search.astro names it
  // by its content instead. The sweep below checks the wide layout with Ctrl on every page; this
  // pins the name itself, also at phone width (icon only, no hint) and with Apple's ⌘.
  it('the search button is named by the text it shows (WCAG 2.5.3 Label in Name)', async () => {
    const apple = "Object.defineProperty(Navigator.prototype, 'platform', { get: () => 'MacIntel' })";
    const cases = [
      { width: DESKTOP, platform: '', shows: 'Search Ctrl K', name: 'Search Ctrl K', keys: 'Control+K' },
      { width: DESKTOP, platform: apple, shows: 'Search ⌘ K', name: 'Search ⌘ K', keys: 'Meta+K' },
      { width: PHONE, platform: '', shows: '', name: 'Search', keys: 'Control+K' },
    ];
    for (const c of cases) {
      const ctx = await axeContext(c.width, ...(c.platform ? [c.platform] : []));
      const page = await ctx.newPage();
      await page.goto(`${server.url}/`, { waitUntil: 'load' });
      const button = page.locator('button[data-open-modal]');
      const where = `${c.width}px${c.platform ? ', Apple' : ''}`;
      expect(await shownText(button), where).toBe(c.shows);
      expect(await button.ariaSnapshot(), where).toBe(`- button "${c.name}"`);
      expect(await button.getAttribute('aria-keyshortcuts'), where).toBe(c.keys);
      expect(await seriousProblems(page, where)).toEqual([]);
      await ctx.close();
    }
  });

  // Below its lg breakpoint Scalar adds a header with a search button, which has role="search"
  // (a landmark: no button, no name), and its client picker hides the "More" button's text,
  // screen-reader-only text included (axe `button-name`, critical, for both). The patch in
  // site/src/components/MarkdownContent.astro and the .fp-scalar rule in site/src/styles/custom.css
  // fix them; this pins the names, so a change in Scalar's markup fails here, not silently.
  // The search button's Ctrl+K hint is hidden (that shortcut opens the site search: see below).
  it("Scalar's phone-width buttons are named by what they do, and contain the text they show", async () => {
    const ctx = await axeContext(PHONE);
    const page = await ctx.newPage();
    await open(page, SCALAR_PAGE);
    const root = page.locator('#fp-scalar-root');
    const name = 'Open Search';
    const search = await present(
      root.getByRole('button', { name, exact: true }),
      "Scalar's phone-width search button, named by its content without its shortcut hint",
      'the patch in site/src/components/MarkdownContent.astro and the .t-doc__header rule in site/src/styles/custom.css',
    );
    const shows = await shownText(search);
    expect(shows).toBe('Search');
    // WCAG 2.5.3: the name contains the words on screen.
    for (const word of shows.match(/\p{L}+/gu) ?? []) expect(name).toContain(word);
    expect(await root.locator('[role="search"]').count()).toBe(0);
    const more = await present(
      scalarClientPicker(page).locator('[aria-expanded]'),
      "Scalar's client picker's More button",
      'the .fp-scalar .client-libraries rule in site/src/styles/custom.css',
    );
    // Icon only at this width (it shows "More" on wider screens, and is then named "More Select from all clients").
    expect(await shownText(more)).toBe('');
    expect(await more.ariaSnapshot()).toBe('- tab "Select from all clients"');
    await ctx.close();
  }, 120_000);

  // The sweeps check pages as loaded; these are Scalar's states a click away. Its search dialog
  // (phone width only) and the client picker's "More" menu (any width) had comboboxes without
  // aria-expanded, the menu's without a name, and Headless UI focus guards that are aria-hidden yet
  // tabbable; the patches in site/src/components/MarkdownContent.astro fill them in. Each element a
  // patch works on is looked for first, so a change in Scalar's markup fails here with a hint.
  it("Scalar's search dialog and client menu have zero serious or critical violations when open", async () => {
    const patches = 'the patches in site/src/components/MarkdownContent.astro';

    // One page, first at desktop width, then narrowed to phone width (Scalar and Starlight follow
    // media queries), which saves loading Scalar again.
    const page = await context.newPage();
    await routeOneOperation(page);
    await open(page, SCALAR_PAGE);
    const problems: Problem[] = [];
    for (const width of [DESKTOP, PHONE]) {
      await page.setViewportSize({ width, height: 900 });
      const where = `${SCALAR_PAGE} at ${width}px`;

      // The "More" button stays a tab of Scalar's tablist (which may own only tabs), one that opens a listbox.
      const more = await present(
        scalarClientPicker(page).getByRole('tab', { name: /Select from all clients$/ }),
        `${where}: the client picker's More tab`,
        patches,
      );
      expect(await more.getAttribute('aria-haspopup'), where).toBe('listbox');
      await more.click();
      const filter = await present(
        page.getByRole('combobox', { name: 'Filter clients' }),
        `${where}: the client menu's filter, named`,
        patches,
      );
      const menu = page.locator(`#${await more.getAttribute('aria-controls')}`);
      expect(await menu.getByRole('combobox').count(), `${where}: the filter is in the More menu`).toBe(1);
      expect(await filter.getAttribute('aria-expanded'), where).toBe('true');
      // Headless UI's guards: one after the button, one at each end of the panel; none a tab stop, none a tab.
      const guards = page.locator('[data-headlessui-focus-guard]');
      const tabIndexes = await guards.evaluateAll((els) => els.map((el) => el.getAttribute('tabindex')));
      expect(tabIndexes, where).toEqual(['-1', '-1', '-1']);
      expect(await page.locator('[data-headlessui-focus-guard][role]').count(), where).toBe(0);
      problems.push(...(await seriousProblemsOnceShown(page, `${where}, client menu open`)));

      if (width === DESKTOP) {
        // Tab out of the menu goes where Headless UI's guards sent it: on past the button, or back to it.
        await filter.fill('zzz');
        await expect.poll(() => filter.getAttribute('aria-expanded'), { message: where }).toBe('false');
        await page.keyboard.press('Tab');
        await expect.poll(() => more.getAttribute('aria-expanded'), { message: where }).toBe('false');
        const movedOn = await more.evaluate((el) => {
          const active = el.ownerDocument.activeElement;
          return !!active && active !== el.ownerDocument.body && !!(el.compareDocumentPosition(active) & 4);
        });
        expect(movedOn, 'Tab from the menu moves focus on, past the More tab').toBe(true);
        await more.click();
        await filter.waitFor();
        await page.keyboard.press('Shift+Tab');
        await expect
          .poll(() => more.evaluate((el) => el === el.ownerDocument.activeElement), { message: where })
          .toBe(true);
        await page.keyboard.press('Escape');
        await page.locator('[id^="headlessui-popover-panel-"]').waitFor({ state: 'detached' });
      } else {
        // Picking a client from the list makes More the one selected tab.
        await filter.fill('libcurl');
        await page.keyboard.press('Enter');
        await expect.poll(() => more.getAttribute('aria-selected'), { message: where }).toBe('true');
        expect(await scalarClientPicker(page).getByRole('tab', { selected: true }).count(), where).toBe(1);
        // The pick closes the client menu; a click that lands while it is still closing (its focus
        // going back to More) can be taken as a click outside it, so the search opens after it has gone.
        await page.locator('[id^="headlessui-popover-panel-"]').waitFor({ state: 'detached' });
        // Scalar's own search, from its header's button (it has none at desktop width).
        const openSearch = page.locator('#fp-scalar-root').getByRole('button', { name: 'Open Search', exact: true });
        const dialog = page.getByRole('dialog', { name: 'Reference Search' });
        await openSearch.click();
        // Seen once in CI on a loaded machine: the dialog never opened after the click. One more
        // click before deciding the markup changed (the message below says which).
        const opened = await dialog
          .getByRole('combobox')
          .waitFor({ timeout: 20_000 })
          .then(() => true)
          .catch(() => false);
        if (!opened) await openSearch.click();
        const input = await present(
          dialog.getByRole('combobox'),
          `${where}: Scalar's search field (${opened ? 'first' : 'second'} click on Open Search)`,
          patches,
        );
        expect(await input.getAttribute('aria-expanded'), where).toBe('true');
        problems.push(...(await seriousProblemsOnceShown(page, `${where}, search dialog open`)));
        await page.keyboard.press('Escape');
        await dialog.waitFor({ state: 'detached' });
        // Ctrl+K opens the site search only, also with focus in the API reference (Scalar listened too).
        await more.focus();
        await page.keyboard.press('Control+k');
        await page.locator('site-search dialog[open]').waitFor();
        expect(await page.locator('.scalar-modal-search').count(), "Ctrl+K opened Scalar's search too").toBe(0);
      }
    }
    await page.close();
    expect(problems).toEqual([]);
  }, 180_000);

  // Scalar's client picker is a Headless UI tab list with manual activation. Its arrow keys moved
  // focus among the featured clients only, and the "More" tab after them (see above) was a second
  // tab stop instead. The WAI-ARIA tabs pattern, which the patches in
  // site/src/components/MarkdownContent.astro complete: one tab stop, the selected tab (More when
  // a client from its list is the active one); Left and Right move focus through every tab and
  // wrap, Home and End go to the first and last; moving focus selects nothing (manual activation).
  it("Scalar's client tabs: the arrow keys reach every tab, More included, and the tab list is one tab stop", async () => {
    const ctx = await axeContext(DESKTOP);
    const page = await ctx.newPage();
    await routeOneOperation(page);
    await open(page, SCALAR_PAGE);
    const tabs = scalarClientPicker(page).getByRole('tab');
    const more = await present(
      scalarClientPicker(page).getByRole('tab', { name: /Select from all clients$/ }),
      "the client picker's More tab",
      'the patches in site/src/components/MarkdownContent.astro',
    );
    /** Which tab has focus (-1: none), which are tab stops, which are selected (by index). */
    const tabState = () =>
      tabs.evaluateAll((els) => ({
        // biome-ignore lint/complexity/useIndexOf: runs in the page; the active element is read from each element's own document.
        focused: els.findIndex((el) => el === el.ownerDocument.activeElement),
        stops: els.flatMap((el, i) => (el.tabIndex >= 0 ? [i] : [])),
        selected: els.flatMap((el, i) => (el.getAttribute('aria-selected') === 'true' ? [i] : [])),
      }));
    /** Press each key in turn; where focus was among the tabs after each. */
    const focusAfter = async (keys: string[]) => {
      const trail: number[] = [];
      for (const key of keys) {
        await page.keyboard.press(key);
        trail.push((await tabState()).focused);
      }
      return trail;
    };
    /** Whether focus is on an element after the tab list (in document order). */
    const focusIsPastTabs = () =>
      scalarClientPicker(page).evaluate((list) => {
        const active = list.ownerDocument.activeElement;
        return !!active && !list.contains(active) && !!(list.compareDocumentPosition(active) & 4);
      });

    for (const width of [DESKTOP, PHONE]) {
      await page.setViewportSize({ width, height: 900 });
      const where = `${SCALAR_PAGE} at ${width}px`;
      const last = (await tabs.count()) - 1;
      expect(await more.evaluate((el) => el.id), `${where}: More is the last tab`).toBe(
        await tabs.nth(last).evaluate((el) => el.id),
      );
      const { stops, selected } = await tabState();
      expect({ stops, selected }, `${where}: the first client is selected and the only tab stop`).toEqual({
        stops: [0],
        selected: [0],
      });

      await tabs.first().focus();
      const keys = ['ArrowLeft', 'ArrowRight', 'End', 'ArrowLeft', 'Home'];
      const right = Array.from({ length: last + 1 }, () => 'ArrowRight');
      expect(await focusAfter([...keys, ...right]), `${where}: focus after ${[...keys, ...right].join(', ')}`).toEqual([
        last,
        0,
        last,
        last - 1,
        0,
        ...right.map((_, i) => (i + 1) % (last + 1)),
      ]);
      expect((await tabState()).selected, `${where}: moving focus selects nothing`).toEqual([0]);

      // Tab leaves the tab list from any tab; Shift+Tab comes back to the selected tab.
      await focusAfter(['End']);
      await page.keyboard.press('Tab');
      expect(await focusIsPastTabs(), `${where}: Tab from More leaves the tab list`).toBe(true);
      expect(await focusAfter(['Shift+Tab']), `${where}: Shift+Tab returns to the selected tab`).toEqual([0]);
    }

    // Below 450px Scalar hides its fourth and fifth client tabs. With one of them selected (here at
    // desktop width), the tab list is still one tab stop at phone width: More, which lists every client.
    await page.setViewportSize({ width: DESKTOP, height: 900 });
    await tabs.nth(4).focus();
    await page.keyboard.press('Enter');
    await expect
      .poll(async () => (await tabState()).selected, { message: 'the fifth client tab, selected' })
      .toEqual([4]);
    await page.setViewportSize({ width: PHONE, height: 900 });
    const where = `${SCALAR_PAGE} at ${PHONE}px`;
    const visibleStops = async () => ({ stops: (await tabState()).stops, last: (await tabs.count()) - 1 });
    await expect
      .poll(visibleStops, { message: `${where}: with a hidden tab selected, More is the tab stop` })
      .toEqual({ stops: [3], last: 3 });

    // With a client from More's list the active one, More is the selected tab and the one tab stop.
    await more.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('combobox', { name: 'Filter clients' }).fill('libcurl');
    await page.keyboard.press('Enter');
    await expect.poll(() => more.getAttribute('aria-selected'), { message: where }).toBe('true');
    const last = (await tabs.count()) - 1;
    expect((await tabState()).stops, `${where}: More, selected, is the one tab stop`).toEqual([last]);
    await more.focus();
    expect(await focusAfter(['ArrowRight', 'ArrowLeft']), where).toEqual([0, last]);
    await page.keyboard.press('Tab');
    expect(await focusIsPastTabs(), `${where}: Tab from More leaves the tab list`).toBe(true);
    expect(await focusAfter(['Shift+Tab']), `${where}: Shift+Tab returns to More`).toEqual([last]);
    await ctx.close();
  }, 120_000);

  // Scalar's API client ("Test Request") is a modal dialog, mounted hidden. Open, its parameter rows
  // had checkboxes and key and value fields without a name (axe `label`, critical;
  // `aria-input-field-name`, serious), "More Information" buttons with role="none" and an
  // aria-label (`aria-prohibited-attr`, serious), and each request section's id on two elements,
  // one the target of aria-controls. The patches in site/src/components/MarkdownContent.astro name
  // each row's fields after the parameter it shows, and give each section's panel an id of its own.
  it("Scalar's API client, open, names each parameter row's fields after the parameter and has zero serious or critical violations", async () => {
    const patches = 'the API client patch in site/src/components/MarkdownContent.astro';
    const page = await context.newPage();
    // An operation with query parameters (and, as every operation, Scalar's read-only Accept header).
    const operations = await routeOneOperation(page, '/agent/v1/docs/search');
    const parameters = (operations.get as { parameters?: { name?: string; in?: string }[] }).parameters ?? [];
    const query = parameters.filter((p) => p.in === 'query').map((p) => p.name as string);
    expect(query.length, 'GET /agent/v1/docs/search has query parameters').toBeGreaterThan(0);
    await open(page, SCALAR_PAGE);
    const testRequest = page
      .locator('#fp-scalar-root')
      .getByRole('button', { name: /test request/i })
      .first();
    const dialog = page.getByRole('dialog', { name: 'API Client' });
    const problems: Problem[] = [];
    for (const width of [DESKTOP, PHONE]) {
      await page.setViewportSize({ width, height: 900 });
      const where = `${SCALAR_PAGE} at ${width}px, API client open`;
      await testRequest.click();
      await dialog.waitFor();

      // Each row is named by the key it shows; the empty row for a new one, by its section.
      for (const name of [...query, 'Accept']) {
        await present(
          dialog.getByRole('checkbox', { name: `Enable parameter ${name}`, exact: true }),
          `${where}: the checkbox of the ${name} row, named`,
          patches,
        );
        const info = await present(
          dialog.getByRole('button', { name: `More information about ${name}`, exact: true }),
          `${where}: the info button of the ${name} row, named`,
          patches,
        );
        expect(await info.getAttribute('role'), `${where}: ${name}'s info button is a button`).toBeNull();
      }
      // Accept is read-only: its key and value are text, not fields.
      for (const name of query) {
        for (const field of ['key', 'value']) {
          await present(
            dialog.getByRole('textbox', { name: `${name} ${field}`, exact: true }),
            `${where}: the ${field} field of the ${name} row, named`,
            patches,
          );
        }
      }
      const newRow = 'Query Parameters: enable new parameter';
      await present(dialog.getByRole('checkbox', { name: newRow, exact: true }), `${where}: ${newRow}`, patches);
      for (const name of ['Query Parameters: new parameter key', 'Query Parameters: new parameter value']) {
        await present(dialog.getByRole('textbox', { name, exact: true }), `${where}: ${name}`, patches);
      }
      // No id twice in the page. Each open section's disclosure button controls its panel (the
      // section filter's tabs control the sections themselves; those of the response filter point
      // at sections that appear with a response, which axe accepts for an unselected tab).
      const ids = await page.locator('html').evaluate((html) => {
        const doc = html.ownerDocument;
        const seen = new Map<string, number>();
        for (const el of doc.querySelectorAll('[id]')) if (el.id) seen.set(el.id, (seen.get(el.id) ?? 0) + 1);
        const open = [
          ...doc.querySelectorAll('.scalar-client button[id^="headlessui-disclosure-button-"][aria-expanded="true"]'),
        ];
        return {
          openSections: open.length > 0,
          duplicated: [...seen].filter(([, n]) => n > 1).map(([id]) => id),
          notControllingAPanel: open
            .filter((el) => !doc.getElementById(el.getAttribute('aria-controls') ?? '')?.matches('.diclosure-panel'))
            .map((el) => el.textContent?.trim()),
        };
      });
      expect(ids, where).toEqual({ openSections: true, duplicated: [], notControllingAPanel: [] });
      problems.push(...(await seriousProblemsOnceShown(page, where)));

      if (width === PHONE) {
        // A new row takes its name from the key as it is typed.
        await dialog.getByRole('textbox', { name: 'Query Parameters: new parameter key', exact: true }).click();
        await page.keyboard.type('fp_new');
        await present(
          dialog.getByRole('textbox', { name: 'fp_new value', exact: true }),
          `${where}: a typed key names its row`,
          patches,
        );
        await dialog.getByRole('checkbox', { name: 'Enable parameter fp_new', exact: true }).waitFor();
      }

      // Escape closes the dialog and gives focus back to the button that opened it.
      await dialog.getByRole('checkbox', { name: `Enable parameter ${query[0]}`, exact: true }).focus();
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
      await expect
        .poll(() => testRequest.evaluate((el) => el === el.ownerDocument.activeElement), {
          message: `${where}: Escape returns focus to Test Request`,
        })
        .toBe(true);
    }
    await page.close();
    expect(problems).toEqual([]);
  }, 120_000);

  it('every page markup has zero serious or critical axe violations', async () => {
    const all = htmlPages();
    const pages = pagesByMarkup(all);
    expect(pages.length).toBeGreaterThan(20);
    // Each page is checked itself or through a page with the same markup.
    expect(new Set(all.map((p) => markupOf(p).representative))).toEqual(new Set(pages));
    // The sidebar (some 200 links, a third of a page's elements) is the same on every page but for
    // the groups open and the current page: it is checked with the first page of each section.
    const withSidebar = new Set(pages.filter((p, i) => pages.findIndex((q) => section(q) === section(p)) === i));
    expect(withSidebar.size).toBeGreaterThan(3);
    const problems: Problem[] = [];
    // Two tabs take turns on the page list: axe is CPU-bound, and this sweep is the suite's long pole.
    const queue = [...pages];
    const sweep = async () => {
      const page = await context.newPage();
      page.setDefaultTimeout(60_000);
      for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
        await open(page, path);
        const shared = markupOf(path).pages;
        const where = shared.length > 1 ? `${path} (markup of ${shared.length} pages)` : path;
        problems.push(...(await seriousProblems(page, where, withSidebar.has(path) ? [] : [SIDEBAR])));
      }
      await page.close();
    };
    await Promise.all([sweep(), sweep()]);
    problems.sort((a, b) => a.page.localeCompare(b.page));
    expect(problems).toEqual([]);
  }, 1_800_000);

  // What a page's words alone could break, on the pages the sweep reaches through another page of
  // their markup: a heading or link left empty where the template puts a string.
  it('no page has an empty heading or link in its main content', () => {
    const empty: string[] = [];
    for (const path of htmlPages()) {
      const html = readDist(`${path}index.html`);
      const main = html.slice(html.indexOf('<main'), html.indexOf('</main>'));
      for (const m of main.matchAll(/<(h[1-6]|a)\b([^>]*)>([\s\S]*?)<\/\1>/g)) {
        const text = (m[3] ?? '').replace(/<[^>]*>/g, '').trim();
        if (!text && !/aria-label(ledby)?="[^"]+"/.test(m[2] ?? '') && !/<img[^>]*alt="[^"]+"/.test(m[3] ?? ''))
          empty.push(`${path}: <${m[1]}${m[2]}>`);
      }
    }
    expect(empty).toEqual([]);
  });

  it('pages that differ only in their text share a markup; a different element or class does not', () => {
    const page = (main: string) => `<html><nav>x</nav><main data-x>${main}</main><aside>y</aside></html>`;
    expect(markupKey(page('<h1 class="t">One</h1><p>a <code>b</code></p><ul><li>c</li></ul>'))).toBe(
      markupKey(page('<h1 class="t">Two, longer</h1><p>d <code>e</code></p><ul><li>f</li><li>g</li></ul>')),
    );
    expect(markupKey(page('<h1 class="t">One</h1><p>a</p>'))).not.toBe(
      markupKey(page('<h1 class="u">One</h1><p>a</p>')),
    );
    expect(markupKey(page('<h1>One</h1><p>a</p>'))).not.toBe(
      markupKey(page('<h1>One</h1><table><tr><td>a</td></tr></table>')),
    );
  });

  // The phone layout differs (Starlight's menu and search, Scalar's own header, narrow tables and
  // code blocks) but not from page to page of a kind: one page of each kind, not the whole sweep.
  it('a home, guide, error-code and API reference page have zero serious or critical violations at phone width', async () => {
    const phonePages = ['/', '/operate/deployment/', '/reference/errors/rate_limited/', SCALAR_PAGE];
    expect(htmlPages()).toEqual(expect.arrayContaining(phonePages));
    const ctx = await axeContext(PHONE);
    const page = await ctx.newPage();
    page.setDefaultTimeout(60_000);
    const problems: Problem[] = [];
    for (const path of phonePages) {
      await open(page, path);
      problems.push(...(await seriousProblems(page, `${path} at ${PHONE}px`)));
    }
    await ctx.close();
    expect(problems).toEqual([]);
  }, 120_000);
});
