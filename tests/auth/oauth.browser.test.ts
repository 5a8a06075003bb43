// The MCP OAuth flow in real Chromium, as a merchant meets it (issue 28), once for each way a
// client registers: by dynamic registration, and by a Client ID Metadata Document served over
// https on loopback (no registration; the consent page names the client as the document does).
// An MCP client (the v2 SDK's OAuth client provider) discovers Flowport and registers or sends its
// document URL; the merchant opens the authorization URL with no session, signs in through
// Shopify (the sandbox), lands on the consent page, signs in to a second store from there and
// comes back, picks the first store, lowers the tier to observer and approves; the browser is sent
// to the client's loopback redirect; the client exchanges the code, lists tools, calls a read and
// is refused a confirmation. The grant is revoked from the merchant page. A second authorization,
// for the HTTP API, gives a token that is refused a confirmation with 403 insufficient_scope. The
// consent page passes axe (WCAG 2.1 A/AA: no serious or critical violation).
// FLOWPORT_CONSENT_SCREENSHOT=<file> saves the consent page (dynamic registration) as the docs'
// screenshot.
import { createServer, type Server } from 'node:http';
import { auth } from '@modelcontextprotocol/client';
import type { Browser } from 'playwright-core';
import { seriousViolations, withAxe } from '../site/helpers/axe.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_PATH } from '../../api/src/lib/package-info.ts';
import { SHOPIFY_APP_PATHS } from '../../api/src/lib/shopify-app.ts';
import { connectModern, problemOf } from '../mcp/helpers.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { launchBrowser } from '../site/helpers/browser.ts';
import { uniqueShop } from '../shopify/helpers.ts';
import { memoryProvider, recordingFetch, serveMetadataDocuments, type MetadataDocumentServer } from './helpers.ts';

let server: TestServer;
let browser: Browser;
let callback: Server;
let redirectUrl = '';
let docs: MetadataDocumentServer;
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
  docs = await serveMetadataDocuments([redirectUrl]);
}, 120_000);
afterAll(async () => {
  await docs?.close();
  await new Promise((r) => callback?.close(r));
  await browser?.close();
  await server?.close();
});

const CONFIRM_PATH = '/agent/v1/action-intents/int_00000000000000000000000000/confirm';

describe.each(['dynamic registration', 'a client ID metadata document'] as const)(
  'MCP OAuth in a browser, by %s',
  (way) => {
    it('signs in through Shopify from the authorization URL, approves a lowered tier, and the client connects', async () => {
      const byDocument = way === 'a client ID metadata document';
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

        // The client: with a metadata document URL the SDK sends it as client_id; without, it registers.
        const clientMetadataUrl = byDocument ? docs.urlOf('chromium') : undefined;
        const { provider, state, accessToken } = memoryProvider({
          redirectUrl,
          clientName: 'Example MCP client',
          clientMetadataUrl,
        });
        // The name Flowport shows: the document's (which Flowport fetched), or the one the client registered.
        const clientName = byDocument ? docs.nameOf('chromium') : 'Example MCP client';
        const calls: string[] = [];
        const fetchFn = recordingFetch(calls);
        const db = server.runtime.services.db;
        const dynamicClients = async () =>
          Number((await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM oauth_clients WHERE kind = 'dynamic'"))?.n);
        const dynamicBefore = await dynamicClients();

        const serverUrl = `${server.url}${MCP_PATH}`;
        expect(await auth(provider, { serverUrl, scope: 'recovery_operator', fetchFn })).toBe('REDIRECT');
        const clientId = state.client?.client_id ?? '';
        if (byDocument) {
          expect(clientId).toBe(clientMetadataUrl);
          // Registration was never asked for, and Flowport holds no new dynamic client.
          expect(calls.filter((c) => c.endsWith('/oauth/register'))).toEqual([]);
          expect(await dynamicClients()).toBe(dynamicBefore);
        } else {
          expect(clientId).toMatch(/^fpc_/);
          expect(calls.filter((c) => c.endsWith('/oauth/register'))).toEqual(['POST /oauth/register']);
          expect(await dynamicClients()).toBe(dynamicBefore + 1);
        }
        expect(state.url?.searchParams.get('client_id')).toBe(clientId);

        // Signed out: the authorization URL sends the merchant to sign in, then back to consent.
        await page.goto(state.url?.toString() ?? '');
        await page.getByLabel('Store domain').fill(shop);
        await page.getByRole('button', { name: 'Sign in with Shopify' }).click();
        await page.getByRole('button', { name: 'Install' }).click();
        await expect
          .poll(() => page.getByRole('heading', { level: 1, name: `Connect ${clientName} to Flowport?` }).count())
          .toBe(1);
        // The consent page names the client, its identifier and the host the browser goes back to.
        const host = new URL(redirectUrl).host;
        expect(await page.locator('p', { hasText: `you are sent back to ${host}.` }).count()).toBe(1);
        expect(await page.locator('code', { hasText: clientId }).count()).toBe(1);
        // A metadata document is fetched once, when the signed-in merchant opens the consent.
        if (byDocument) expect(docs.hits.get('chromium')).toBe(1);
        // One store so far; "Sign in to another store" signs in to the second and comes back here.
        expect(await page.getByRole('radio', { name: other }).count()).toBe(0);
        await page.getByRole('link', { name: 'Sign in to another store' }).click();
        await page.getByLabel('Store domain').fill(other);
        await page.getByRole('button', { name: 'Sign in with Shopify' }).click();
        await page.getByRole('button', { name: 'Install' }).click();
        await expect.poll(() => page.getByRole('radio', { name: other }).count()).toBe(1);
        expect(await page.getByRole('radio', { name: other }).isChecked()).toBe(true);
        expect(await seriousViolations(page)).toEqual([]);
        if (process.env.FLOWPORT_CONSENT_SCREENSHOT && !byDocument)
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
          await auth(provider, {
            serverUrl,
            authorizationCode: back.get('code') ?? '',
            iss: back.get('iss') ?? '',
            fetchFn,
          }),
        ).toBe('AUTHORIZED');
        const mcpToken = accessToken();

        const client = await connectModern(server.url, mcpToken);
        try {
          expect((await client.listTools()).tools.length).toBeGreaterThan(0);
          const grant = await client.callTool('get_grant', {});
          expect(grant.structuredContent?.tier).toBe('observer');
          // Over MCP a refusal is a tool result (ADR 0500): the problem names the scope it lacks.
          const refused = await client.callTool('confirm_action_intent', {
            intent_id: 'int_00000000000000000000000000',
            idempotency_key: `k-browser-${byDocument ? 'cimd' : 'dcr'}`,
          });
          expect(refused.isError).toBe(true);
          expect(problemOf(refused).code).toBe('missing_scope');
        } finally {
          await client.close();
        }
        // The grant is on the first store's merchant page (switched to), revocable; revoking it disconnects the client.
        const revokeName = new RegExp(`^Revoke grant ${clientName}`);
        await page.goto(`${server.url}${SHOPIFY_APP_PATHS.merchant}`);
        expect(await page.getByRole('button', { name: revokeName }).count()).toBe(0);
        await page.getByRole('link', { name: `Switch to ${shop}` }).click();
        await expect.poll(() => page.getByRole('heading', { level: 1, name: shop }).count()).toBe(1);
        const revoke = page.getByRole('button', { name: revokeName });
        await expect.poll(() => revoke.count()).toBe(1);
        await revoke.click();
        await expect.poll(() => page.getByRole('button', { name: revokeName }).count()).toBe(0);
        const after = await fetch(serverUrl, {
          method: 'POST',
          headers: { authorization: `Bearer ${mcpToken}`, 'content-type': 'application/json' },
          body: '{}',
        });
        expect(after.status).toBe(401);

        // The same client asks for the HTTP API; the signed-in merchant approves observer again.
        // Over HTTP the observer's confirmation is refused with 403 insufficient_scope.
        const apiUrl = `${server.url}/agent/v1`;
        delete state.tokens;
        expect(await auth(provider, { serverUrl: apiUrl, scope: 'observer', fetchFn })).toBe('REDIRECT');
        await page.goto(state.url?.toString() ?? '');
        await expect
          .poll(() => page.getByRole('heading', { level: 1, name: `Connect ${clientName} to Flowport?` }).count())
          .toBe(1);
        await page.getByRole('radio', { name: shop }).check();
        await page.getByLabel('observer').check();
        await page.getByRole('button', { name: 'Approve' }).click();
        await page.waitForURL((u) => u.toString().startsWith(redirectUrl));
        const apiBack = new URL(page.url()).searchParams;
        expect(
          await auth(provider, {
            serverUrl: apiUrl,
            authorizationCode: apiBack.get('code') ?? '',
            iss: apiBack.get('iss') ?? '',
            fetchFn,
          }),
        ).toBe('AUTHORIZED');
        const confirm = await fetch(`${server.url}${CONFIRM_PATH}`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${accessToken()}`,
            'idempotency-key': `k-browser-http-${byDocument ? 'cimd' : 'dcr'}`,
          },
        });
        expect(confirm.status).toBe(403);
        expect(confirm.headers.get('www-authenticate')).toMatch(
          /^Bearer error="insufficient_scope", scope="[^"]+", resource_metadata="[^"]+"$/,
        );
        expect(((await confirm.json()) as { code: string }).code).toBe('missing_scope');

        // Registration happened at most once (dynamic) and never for the metadata document; the
        // document was fetched once in all (Flowport caches it).
        expect(calls.filter((c) => c.endsWith('/oauth/register')).length).toBe(byDocument ? 0 : 1);
        if (byDocument) expect(docs.hits.get('chromium')).toBe(1);
      } finally {
        await context.close();
      }
    }, 120_000);
  },
);
