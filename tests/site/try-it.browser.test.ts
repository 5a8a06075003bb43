// "Try it" from the interactive reference against the real, co-deployed API:
// the one Flowport process serves the built site and /agent/v1/*, and Scalar's
// Test Request for GET /agent/v1/manifest gets a 200 with the real manifest.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { launchBrowser } from './helpers/browser.ts';
import { ensureSiteBuilt } from './helpers/site.ts';

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  await ensureSiteBuilt();
  server = await startTestServer({ worker: false, bootstrapSandbox: false });
  browser = await launchBrowser();
}, 900_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('Scalar try it', { timeout: 240_000 }, () => {
  it('sends GET /agent/v1/manifest to the page origin and shows the 200 response', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.setDefaultTimeout(60_000);
    await page.goto(`${server.url}/reference/openapi/`, { waitUntil: 'commit', timeout: 120_000 });
    const root = page.locator('#fp-scalar-root');
    await root.getByText('Read the manifest').first().waitFor({ timeout: 180_000 });

    await root
      .getByRole('button', { name: /test request/i })
      .first()
      .click();
    const manifestResponse = page.waitForResponse((r) => new URL(r.url()).pathname === '/agent/v1/manifest', {
      timeout: 60_000,
    });
    await page.getByRole('button', { name: /^send/i }).first().click();
    const response = await manifestResponse;

    expect(new URL(response.url()).origin).toBe(server.url);
    expect(response.status()).toBe(200);
    const body = (await response.json()) as { product: string; docs: { index: string } };
    expect(body.product).toBe('Flowport');
    expect(body.docs.index).toBe(`${server.url}/llms.txt`);
    await page.close();
  });
});
