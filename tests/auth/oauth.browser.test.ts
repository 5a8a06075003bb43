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
// Least privilege by default (issue 40, ADR 1430), with each SDK generation's own transport: a
// client that asks for nothing in particular is challenged for observer, the consent page checks
// observer, and the client ends up read-only; a tool that needs more answers 403
// insufficient_scope, and a new consent (operator checked) raises it.
// FLOWPORT_CONSENT_SCREENSHOT=<file> saves the consent page (dynamic registration) as the docs'
// screenshot.
import { createServer, type Server } from 'node:http';
import {
  auth,
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { auth as authV1 } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
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
        // Both stores were signed in to during this authorization: neither is checked (ADR 1430).
        expect(await page.getByRole('radio', { name: other }).isChecked()).toBe(false);
        expect(await page.getByRole('radio', { name: shop }).isChecked()).toBe(false);
        expect(await seriousViolations(page)).toEqual([]);
        if (process.env.FLOWPORT_CONSENT_SCREENSHOT && !byDocument)
          await page.screenshot({ path: process.env.FLOWPORT_CONSENT_SCREENSHOT, fullPage: true });

        // The merchant connects the first store, at a lower tier.
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
        expect(await page.getByRole('link', { name: revokeName }).count()).toBe(0);
        await page.getByRole('link', { name: `Switch to ${shop}` }).click();
        await expect.poll(() => page.getByRole('heading', { level: 1, name: shop }).count()).toBe(1);
        const revoke = page.getByRole('link', { name: revokeName });
        await expect.poll(() => revoke.count()).toBe(1);
        // At 1280 px the OAuth client's grant leaves Revoke in view: no table scrolls sideways (issue 44).
        const box = await revoke.boundingBox();
        expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(1280);
        const scrolled =
          'document.querySelectorAll(".table-wrap").length - [...document.querySelectorAll(".table-wrap")].filter((w) => w.scrollWidth <= w.clientWidth).length';
        expect(await page.evaluate(scrolled)).toBe(0);
        // Revoke asks first, on a page of its own (issue 44).
        await revoke.click();
        await page.getByRole('button', { name: 'Revoke grant' }).click();
        await expect.poll(() => page.getByRole('link', { name: revokeName }).count()).toBe(0);
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

const GRANT_TOOL = 'get_grant';
const STEP_UP_TOOL = 'preview_endpoint_create';

describe.each(['v2 SDK', 'v1 SDK'] as const)('least privilege by default, with the %s transport', (era) => {
  it('a client that asks for nothing in particular ends up read-only, then steps up to operator by a new consent', async () => {
    const shop = uniqueShop(era === 'v2 SDK' ? 'leastv2' : 'leastv1');
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const serverUrl = new URL(`${server.url}${MCP_PATH}`);
    try {
      // The merchant is signed in to the store before the client starts (so it is checked).
      await page.goto(`${server.url}${SHOPIFY_APP_PATHS.install}?shop=${shop}`);
      await page.getByRole('button', { name: 'Install' }).click();
      await page.waitForURL(`${server.url}${SHOPIFY_APP_PATHS.merchant}`);

      // No scope anywhere in the client: it takes what the server's challenge names.
      const { provider, state } = memoryProvider({ redirectUrl, clientName: `Least privilege ${era}` });
      const challenges: string[] = [];
      const watching: typeof fetch = async (input, init) => {
        const res = await fetch(input, init);
        const h = res.headers.get('www-authenticate');
        if (h) challenges.push(`${res.status} ${h}`);
        return res;
      };
      // any: the two generations type their clients and transports differently; both are used the same way.
      const open = (): { client: any; transport: any } =>
        era === 'v2 SDK'
          ? {
              client: new ModernClient(
                { name: 'least-privilege', version: '1.0.0' },
                { versionNegotiation: { mode: { pin: '2026-07-28' } } },
              ),
              transport: new ModernTransport(serverUrl, { authProvider: provider, fetch: watching }),
            }
          : {
              client: new LegacyClient({ name: 'least-privilege', version: '1.0.0' }),
              transport: new LegacyTransport(serverUrl, { authProvider: provider as never, fetch: watching }),
            };
      /** Approves the consent at the provider's saved URL with what it checked; returns the code and iss. */
      const consent = async (expectTier: string, offered: number) => {
        await page.goto(state.url?.toString() ?? '');
        await expect
          .poll(() =>
            page.getByRole('heading', { level: 1, name: `Connect Least privilege ${era} to Flowport?` }).count(),
          )
          .toBe(1);
        expect(await page.getByLabel(expectTier, { exact: true }).isChecked()).toBe(true);
        expect(await page.getByRole('radio', { name: shop }).isChecked()).toBe(true);
        expect(await page.locator('input[name="tier"]').count()).toBe(offered);
        await page.getByRole('button', { name: 'Approve' }).click();
        await page.waitForURL((u) => u.toString().startsWith(redirectUrl));
        const back = new URL(page.url()).searchParams;
        return { code: back.get('code') ?? '', iss: back.get('iss') ?? '' };
      };

      // 1. Connecting: 401 naming observer; the SDK asks for exactly that.
      const first = open();
      await expect(first.client.connect(first.transport)).rejects.toBeInstanceOf(
        era === 'v2 SDK' ? UnauthorizedError : Error,
      );
      expect(challenges[0]).toBe(
        `401 Bearer resource_metadata="${server.url}/.well-known/oauth-protected-resource${MCP_PATH}", scope="observer"`,
      );
      expect(state.url?.searchParams.get('scope')).toBe('observer');
      // 2. The consent checks observer, the only tier asked for; approved, the client is read-only.
      const one = await consent('observer', 1);
      await first.transport.finishAuth(one.code, one.iss);
      const { client, transport } = open();
      await client.connect(transport);
      try {
        expect((await client.callTool({ name: GRANT_TOOL, arguments: {} })).structuredContent?.tier).toBe('observer');

        // 3. A tool that needs more: 403 insufficient_scope naming the scope, then a new consent.
        delete state.url;
        const wanted = {
          name: STEP_UP_TOOL,
          arguments: { name: `Step up ${era}`, trigger_variant: 'external_event', auth_mode: 'github' },
        };
        if (era === 'v2 SDK') {
          // The v2 transport re-authorizes with the union of what it held and what was named.
          await expect(client.callTool(wanted)).rejects.toBeInstanceOf(UnauthorizedError);
        } else {
          // The v1 transport (1.x) runs auth() on the 403, which refreshes the token (same scopes)
          // instead of asking for consent, retries once and gives up. The client then drops its
          // tokens and starts a new authorization with the scope the challenge named.
          await expect(client.callTool(wanted)).rejects.toThrow(/403 after trying upscoping/);
          const named = /scope="([^"]+)"/.exec(challenges.find((c) => c.startsWith('403 ')) ?? '')?.[1];
          state.tokens = undefined;
          expect(await authV1(provider as never, { serverUrl, scope: named })).toBe('REDIRECT');
        }
        expect(challenges.filter((c) => c.startsWith('403 '))[0]).toBe(
          `403 Bearer error="insufficient_scope", scope="endpoint_create:preview", resource_metadata="${server.url}/.well-known/oauth-protected-resource${MCP_PATH}"`,
        );
        expect((state.url as URL | undefined)?.searchParams.get('scope')?.split(' ')).toContain(
          'endpoint_create:preview',
        );
        // The lowest tier covering it is checked: operator (offered: it and the lower ones).
        const two = await consent('operator', 2);
        await transport.finishAuth(two.code, two.iss);
        const preview = await client.callTool(wanted);
        expect(preview.isError ?? false, JSON.stringify(preview.content)).toBe(false);
        expect(preview.structuredContent?.kind).toBe('endpoint_create');
        expect((await client.callTool({ name: GRANT_TOOL, arguments: {} })).structuredContent?.tier).toBe('operator');
      } finally {
        await client.close();
      }
    } finally {
      await context.close();
    }
  }, 120_000);
});
