// The embedded console in real Chromium, inside the sandbox's Shopify admin frame (issue 44, ADR
// 1450): Shopify-managed installation → the console loads with session tokens from the App Bridge
// stand-in → the events list shows the event the banner's curl sent → replay it through preview
// and confirm → the audit shows the merchant as the actor → import a Stripe-made secret for a new
// Stripe endpoint and a Stripe-signed event is accepted. Then axe (WCAG 2.1 A/AA: nothing serious
// or critical) on every console page at 1280 and 390 px, and no horizontal scroll at 390 px. One
// browser, one server.
import type { Browser, Frame, Page } from 'playwright-core';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_MOUNT_PATH } from '../../api/src/lib/shopify-app.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { seriousViolations, withAxe } from '../site/helpers/axe.ts';
import { launchBrowser } from '../site/helpers/browser.ts';

let server: TestServer;
let browser: Browser;
beforeAll(async () => {
  server = await startTestServer({ worker: true });
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const STRIPE_SECRET = `whsec_${'3'.repeat(32)}`;

/** The console's frame inside the admin page, once its page (heading `heading`) has loaded. */
async function consoleFrame(page: Page, heading: string | RegExp): Promise<Frame> {
  const frame = page.frameLocator('iframe[title="Flowport"]');
  await expect.poll(() => frame.getByRole('heading', { level: 1, name: heading }).count(), { timeout: 15_000 }).toBe(1);
  const f = page.frame({ name: 'app-iframe' });
  if (!f) throw new Error('no app frame');
  return f;
}

async function sendBannerEvent(): Promise<string> {
  const creds = server.sandbox!;
  const sig = /(x-flowport-signature: [^']+)/.exec(creds.curl)?.[1]?.split(': ')[1] as string;
  const res = await fetch(creds.ingest_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [creds.signature_header]: sig },
    body: creds.example_body,
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { event_id: string }).event_id;
}

async function clickIn(frame: Frame, role: 'link' | 'button', name: string | RegExp): Promise<void> {
  await frame.getByRole(role, { name }).first().click();
}

async function waitHeading(frame: Frame, name: string | RegExp): Promise<void> {
  await expect.poll(() => frame.getByRole('heading', { level: 1, name }).count(), { timeout: 15_000 }).toBe(1);
}

describe('the console inside the sandbox admin', () => {
  it('installs, lists the banner event, replays it as the merchant, imports a Stripe secret', async () => {
    const shop = server.sandbox!.shop_domain;
    const eventId = await sendBannerEvent();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    try {
      await page.goto(`${server.url}${SANDBOX_MOUNT_PATH}/${shop}/admin/apps/flowport`);
      await page.getByRole('button', { name: 'Install' }).click();
      const frame = await consoleFrame(page, `Flowport on ${shop}`);

      await clickIn(frame, 'link', 'Events');
      await waitHeading(frame, 'Events');
      await expect.poll(() => frame.getByRole('link', { name: eventId }).count(), { timeout: 15_000 }).toBe(1);
      // Wait until the worker handed it to Flow, then open it.
      await expect
        .poll(async () => {
          const r = await fetch(`${server.url}/agent/v1/events/${eventId}`, {
            headers: { authorization: `Bearer ${server.sandbox!.grant_token}` },
          });
          return ((await r.json()) as { state: string }).state;
        })
        .toBe('delivered');
      // FLOWPORT_CONSOLE_DOCS_SHOTS=<dir>: the docs' screenshots (site/public/images), from this run.
      const shots = process.env.FLOWPORT_CONSOLE_DOCS_SHOTS;
      if (shots) await page.screenshot({ path: `${shots}/console-events.png` });
      await clickIn(frame, 'link', eventId);
      await waitHeading(frame, `Event ${eventId}`);
      for (const box of await frame.getByRole('checkbox').all()) await box.check();
      await frame.getByLabel('Note for the audit (optional)').fill('Merchant replay from the console');
      await clickIn(frame, 'button', 'Preview replay');
      await waitHeading(frame, 'Confirm: replay');
      expect(await frame.getByRole('status').textContent()).toContain('Replay previewed');
      // Reloading the preview repeats only its GET: still one previewed intent, still confirmable.
      await frame.goto(frame.url());
      const again = await consoleFrame(page, 'Confirm: replay');
      if (shots) await page.screenshot({ path: `${shots}/console-confirm-replay.png` });
      const intents = await fetch(`${server.url}/agent/v1/action-intents?limit=200`, {
        headers: { authorization: `Bearer ${server.sandbox!.grant_token}` },
      });
      const list = ((await intents.json()) as { data: { kind: string; target: { id: string } }[] }).data;
      expect(list.filter((i) => i.kind === 'replay' && i.target.id === eventId)).toHaveLength(1);
      await clickIn(again, 'button', 'Confirm replay');
      await expect.poll(() => again.getByRole('status').textContent(), { timeout: 15_000 }).toContain('Confirmed');

      await clickIn(again, 'link', 'Activity');
      await waitHeading(again, 'Activity');
      const rows = await again.getByRole('row').allTextContents();
      const confirm = rows.find((r) => r.includes('replay.confirm'));
      expect(confirm).toContain('Sandbox Owner (console)');
      expect(confirm).toContain('(human)');

      // Stripe makes its own signing secret: import it with a new endpoint, from the page.
      await clickIn(again, 'link', 'Endpoints');
      await waitHeading(again, 'Endpoints');
      await again.getByLabel('Name').fill('Stripe checkout');
      await again.getByLabel('Sender signs with').selectOption('stripe');
      await again.getByLabel("Sender's signing secret (optional)").fill(STRIPE_SECRET);
      await clickIn(again, 'button', 'Preview new endpoint');
      await waitHeading(again, 'Confirm: endpoint create');
      await clickIn(again, 'button', 'Confirm endpoint create');
      await expect.poll(() => again.getByRole('status').textContent(), { timeout: 15_000 }).toContain('Confirmed');
      // The confirmation's result (the last "ingest url" term on the page) names the new endpoint's URL.
      const ingest =
        (await again
          .locator('xpath=//dt[normalize-space()="ingest url"]/following-sibling::dd[1]')
          .last()
          .textContent()) ?? '';
      expect(ingest).toMatch(/^http/);
      expect(await again.locator('body').textContent()).not.toContain(STRIPE_SECRET);
      const payload = JSON.stringify({ id: 'evt_console_stripe_1', type: 'checkout.session.completed', data: {} });
      const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: STRIPE_SECRET });
      const res = await fetch(ingest, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'stripe-signature': header },
        body: payload,
      });
      expect(res.status).toBe(202);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('passes axe on every console page at 1280 and 390 px, with no horizontal scroll at 390 px', async () => {
    const shop = server.sandbox!.shop_domain;
    const admin = `${server.url}${SANDBOX_MOUNT_PATH}/${shop}/admin/apps/flowport`;
    await fetch(`${admin}/install`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    const auth = { authorization: `Bearer ${server.sandbox!.grant_token}` };
    const api = async (path: string) =>
      (await (await fetch(`${server.url}/agent/v1${path}`, { headers: auth })).json()) as any;
    const eventId = (await api('/events?limit=1')).data[0].id as string;
    const intentId = (await api('/action-intents?limit=1')).data[0].id as string;
    const endpointId = (await api('/endpoints?limit=1')).data[0].id as string;
    const grantId = (await api('/grant')).id as string;
    const pages = [
      '',
      '/events',
      `/events/${eventId}`,
      '/recover',
      `/intents/${intentId}`,
      '/refused',
      '/endpoints',
      `/endpoints/${endpointId}`,
      '/grants',
      `/grants/${grantId}/revoke`,
      '/alerts',
      '/activity',
      '/no-such-page',
    ];
    for (const width of [1280, 390]) {
      const context = await browser.newContext({ viewport: { width, height: 900 } });
      await withAxe(context);
      const page = await context.newPage();
      try {
        await page.goto(admin);
        const frame = await consoleFrame(page, `Flowport on ${shop}`);
        const found: Record<string, unknown> = {};
        for (const path of pages) {
          await frame.goto(`${server.url}/merchant/console${path}?shop=${shop}`);
          await expect.poll(() => frame.locator('#console[aria-busy]').count(), { timeout: 15_000 }).toBe(0);
          const violations = await seriousViolations(frame as unknown as Page);
          if (violations.length) found[`${width} ${path}`] = violations;
          if (width === 390) {
            const overflow = await frame.evaluate<number>(
              'document.documentElement.scrollWidth - document.documentElement.clientWidth',
            );
            if (overflow > 0) found[`${width} ${path} scroll`] = overflow;
            // FLOWPORT_CONSOLE_SCREENSHOTS=<dir>: one screenshot per page at 390 px, to look at.
            const dir = process.env.FLOWPORT_CONSOLE_SCREENSHOTS;
            if (dir) await page.screenshot({ path: `${dir}/${path.replace(/\W+/g, '_') || 'overview'}.png` });
          }
        }
        expect(found).toEqual({});
      } finally {
        await context.close();
      }
    }
  }, 120_000);
});
