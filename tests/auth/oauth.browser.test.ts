// The MCP OAuth flow in real Chromium, as a merchant meets it (issue 28): an MCP client (the v2
// SDK's OAuth client provider) discovers Flowport and registers; the merchant opens the
// authorization URL with no session, signs in through Shopify (the sandbox), lands on the consent
// page, signs in to a second store from there and comes back, picks the first store, lowers the
// tier and approves; the browser is sent to the client's loopback redirect; the
// client exchanges the code, lists tools and calls a read. The consent page passes axe (WCAG 2.1
// A/AA: no serious or critical violation). FLOWPORT_CONSENT_SCREENSHOT=<file> saves the consent
// page as the docs' screenshot.
import { createServer, type Server } from 'node:http';
import { auth, type OAuthClientProvider } from '@modelcontextprotocol/client';
import type { Browser } from 'playwright-core';
import { seriousViolations, withAxe } from '../site/helpers/axe.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_PATH } from '../../api/src/lib/package-info.ts';
import { SHOPIFY_APP_PATHS } from '../../api/src/lib/shopify-app.ts';
import { connectModern } from '../mcp/helpers.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { launchBrowser } from '../site/helpers/browser.ts';
import { uniqueShop } from '../shopify/helpers.ts';

let server: TestServer;
let browser: Browser;
let callback: Server;
let redirectUrl = '';
beforeAll(async () => {
  server = await startTestServer({ worker: false });
  browser = await launchBrowser();
  // The MCP client's loopback redirect target (a native client's, RFC 8252).
  callback = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end('<!doctype html><title>Connected</title><h1>You can close this window</h1>');
  });
  await new Promise<void>((r) => callback.listen(0, '127.0.0.1', r));
  const addr = callback.address();
  redirectUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/callback`;
}, 120_000);
afterAll(async () => {
  await new Promise((r) => callback?.close(r));
  await browser?.close();
  await server?.close();
});

describe('MCP OAuth in a browser', () => {
  it('signs in through Shopify from the authorization URL, approves a lowered tier, and the client connects', async () => {
    const shop = uniqueShop('consent');
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await withAxe(context);
    const page = await context.newPage();
    try {
      // Both stores have Flowport installed (then the merchant signs out of both: the consent
      // starts signed out).
      const other = uniqueShop('second');
      for (const s of [other, shop]) {
        await page.goto(`${server.url}${SHOPIFY_APP_PATHS.install}?shop=${s}`);
        await page.getByRole('button', { name: 'Install' }).click();
        await page.waitForURL(`${server.url}${SHOPIFY_APP_PATHS.merchant}`);
      }
      await page.getByRole('button', { name: 'Sign out' }).click();
      await expect.poll(() => page.getByRole('heading', { name: 'Sign in to Flowport' }).count()).toBe(1);

      const state: { client?: unknown; tokens?: { access_token: string }; verifier?: string; url?: URL } = {};
      const provider = {
        get redirectUrl() {
          return redirectUrl;
        },
        get clientMetadata() {
          return {
            client_name: 'Example MCP client',
            redirect_uris: [redirectUrl],
            token_endpoint_auth_method: 'none',
          };
        },
        clientInformation: () => state.client,
        saveClientInformation: (c: unknown) => {
          state.client = c;
        },
        tokens: () => state.tokens,
        saveTokens: (t: { access_token: string }) => {
          state.tokens = t;
        },
        redirectToAuthorization: (url: URL) => {
          state.url = url;
        },
        saveCodeVerifier: (v: string) => {
          state.verifier = v;
        },
        codeVerifier: () => state.verifier ?? '',
      } as unknown as OAuthClientProvider;
      const serverUrl = `${server.url}${MCP_PATH}`;
      expect(await auth(provider, { serverUrl, scope: 'recovery_operator' })).toBe('REDIRECT');

      // Signed out: the authorization URL sends the merchant to sign in, then back to consent.
      await page.goto(state.url?.toString() ?? '');
      await page.getByLabel('Store domain').fill(shop);
      await page.getByRole('button', { name: 'Sign in with Shopify' }).click();
      await page.getByRole('button', { name: 'Install' }).click();
      await expect
        .poll(() => page.getByRole('heading', { level: 1, name: 'Connect Example MCP client to Flowport?' }).count())
        .toBe(1);
      expect(await page.content()).toContain(new URL(redirectUrl).host);
      // One store so far; "Sign in to another store" signs in to the second and comes back here.
      expect(await page.getByRole('radio', { name: other }).count()).toBe(0);
      await page.getByRole('link', { name: 'Sign in to another store' }).click();
      await page.getByLabel('Store domain').fill(other);
      await page.getByRole('button', { name: 'Sign in with Shopify' }).click();
      await page.getByRole('button', { name: 'Install' }).click();
      await expect.poll(() => page.getByRole('radio', { name: other }).count()).toBe(1);
      expect(await page.getByRole('radio', { name: other }).isChecked()).toBe(true);
      expect(await seriousViolations(page)).toEqual([]);
      if (process.env.FLOWPORT_CONSENT_SCREENSHOT)
        await page.screenshot({ path: process.env.FLOWPORT_CONSENT_SCREENSHOT, fullPage: true });

      // The merchant connects the first store (not the one checked), at a lower tier.
      await page.getByRole('radio', { name: shop }).check();
      await page.getByLabel('observer').check();
      await page.getByLabel(/^Expires in/).fill('14');
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.waitForURL((u) => u.toString().startsWith(redirectUrl));
      const back = new URL(page.url()).searchParams;
      expect(back.get('iss')).toBe(server.url);
      expect(
        await auth(provider, { serverUrl, authorizationCode: back.get('code') ?? '', iss: back.get('iss') ?? '' }),
      ).toBe('AUTHORIZED');

      const client = await connectModern(server.url, state.tokens?.access_token ?? '');
      try {
        expect((await client.listTools()).tools.length).toBeGreaterThan(0);
        const grant = await client.callTool('get_grant', {});
        expect(grant.structuredContent?.tier).toBe('observer');
      } finally {
        await client.close();
      }
      // The grant is on the first store's merchant page (switched to), revocable; revoking it disconnects the client.
      await page.goto(`${server.url}${SHOPIFY_APP_PATHS.merchant}`);
      expect(await page.getByRole('button', { name: /^Revoke grant Example MCP client/ }).count()).toBe(0);
      await page.getByRole('link', { name: `Switch to ${shop}` }).click();
      await expect.poll(() => page.getByRole('heading', { level: 1, name: shop }).count()).toBe(1);
      const revoke = page.getByRole('button', { name: /^Revoke grant Example MCP client/ });
      await expect.poll(() => revoke.count()).toBe(1);
      await revoke.click();
      await expect.poll(() => page.getByRole('button', { name: /^Revoke grant Example MCP client/ }).count()).toBe(0);
      const after = await fetch(serverUrl, {
        method: 'POST',
        headers: { authorization: `Bearer ${state.tokens?.access_token}`, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(after.status).toBe(401);
    } finally {
      await context.close();
    }
  }, 120_000);
});
