// The embedded console's session-token authentication (issue 44, ADR 1450), over real HTTP on
// loopback with the sandbox playing the Shopify admin, on the suite's store (SQLite or
// PostgreSQL): a managed installation plus a token exchange installs the store on the first
// request; every request needs a fresh session token; a bad signature, a wrong audience, an
// expired token, another store's issuer and a reused jti are refused with their codes and docs
// links; a POST answers where to go next, never a page.
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_MOUNT_PATH, SHOPIFY_APP_PATHS } from '../../api/src/lib/shopify-app.ts';
import type { Services } from '../../api/src/core/types.ts';
import { frameAncestors } from '../../api/src/shopify/console/shell.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { sandboxApp, uniqueShop } from './helpers.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ worker: false });
});
afterAll(async () => {
  await server?.close();
});

const CONSOLE = () => `${server.url}${SHOPIFY_APP_PATHS.merchant}/console`;
const admin = (shop: string) => `${server.url}${SANDBOX_MOUNT_PATH}/${shop}/admin`;

async function managedInstall(shop: string): Promise<void> {
  const res = await fetch(`${admin(shop)}/apps/flowport/install`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: '',
    redirect: 'manual',
  });
  expect(res.status).toBe(303);
}

/** A session token as the sandbox admin hands App Bridge. */
async function adminToken(shop: string): Promise<string> {
  const res = await fetch(`${admin(shop)}/session-token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id_token: string }).id_token;
}

async function forged(shop: string, opts: { secret?: string; aud?: string; exp?: number; iss?: string } = {}) {
  const { client_id, client_secret } = sandboxApp(server);
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ dest: `https://${shop}`, sub: '42' })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(opts.iss ?? `https://${shop}/admin`)
    .setAudience(opts.aud ?? client_id)
    .setJti(crypto.randomUUID())
    .setNotBefore(now - 120)
    .setExpirationTime(opts.exp ?? now + 60)
    .sign(new TextEncoder().encode(opts.secret ?? client_secret));
}

const get = (path: string, token?: string) =>
  fetch(`${CONSOLE()}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

async function expectRefused(res: Response, code: string): Promise<void> {
  const text = await res.text();
  expect(res.status).toBe(401);
  expect(text).toContain(`<code>${code}</code>`);
  expect(text).toContain(`/reference/errors/${code}/`);
}

describe('the embedded console', () => {
  it('installs by token exchange on the first request, then serves pages to fresh session tokens only', async () => {
    const shop = uniqueShop('console');
    await managedInstall(shop);
    // The document itself is the shell: App Bridge, Polaris, framed only by the admin.
    const shell = await get('');
    expect(shell.status).toBe(200);
    const doc = await shell.text();
    expect(doc).toContain(`<meta name="shopify-api-key" content="${sandboxApp(server).client_id}">`);
    expect(doc).toContain(`${SANDBOX_MOUNT_PATH}/app-bridge.js`);
    expect(shell.headers.get('content-security-policy')).toContain("frame-ancestors 'self'");

    const first = await adminToken(shop);
    const overview = await get('', first);
    expect(overview.status).toBe(200);
    expect(await overview.text()).toContain(`Flowport on ${shop}`);
    // Flow says a workflow uses the trigger: the overview's readiness history shows it.
    const flow = await fetch(`${server.url}${SANDBOX_MOUNT_PATH}/${shop}/flow/workflows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ trigger: 'external-event', enabled: true }),
    });
    expect(flow.status).toBe(200);
    const withHistory = await (await get('', await adminToken(shop))).text();
    expect(withHistory).toMatch(/<code>external-event<\/code><\/td><td data-label="Enabled workflow">yes<\/td>/);
    const installs = await server.runtime.services.db.all<{ action: string; details_json: string }>(
      `SELECT a.action, a.details_json FROM audit_log a JOIN shops s ON s.id = a.shop_id WHERE s.domain = ?`,
      [shop],
    );
    expect(installs.map((r) => r.action)).toEqual(['shop.install']);
    expect(installs[0]?.details_json).toContain('token_exchange');

    // The same token again: its jti was spent.
    await expectRefused(await get('', first), 'shopify_session_token_reused');
    // A POST answers JSON (where to go, the message), never a page.
    const posted = await fetch(`${CONSOLE()}/grants`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await adminToken(shop)}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ actor_name: 'Helper', actor_kind: 'agent', tier: 'observer', expires_in_days: '5' }),
    });
    expect(posted.status).toBe(200);
    const answer = (await posted.json()) as { location: string; shown_once: { value: string } };
    expect(answer.location).toBe(`${SHOPIFY_APP_PATHS.merchant}/console/grants`);
    expect(answer.shown_once.value).toMatch(/^fpg_/);
    // The audit names the staff member as Shopify does (an online token exchange), a human actor.
    const created = await server.runtime.services.db.get<{
      actor_kind: string;
      actor_name: string;
      details_json: string;
    }>(
      `SELECT a.actor_kind, a.actor_name, a.details_json FROM audit_log a JOIN shops s ON s.id = a.shop_id
        WHERE s.domain = ? AND a.action = 'grant.create'`,
      [shop],
    );
    expect(created).toMatchObject({ actor_kind: 'human', actor_name: 'Sandbox Owner (console)' });
    expect(created?.details_json).toContain('"via":"console"');
    // Revoking: a confirmation page first (a GET changes nothing), then the POST, then a message.
    const token = answer.shown_once.value;
    const grant = (await (
      await fetch(`${server.url}/agent/v1/grant`, { headers: { authorization: `Bearer ${token}` } })
    ).json()) as {
      id: string;
    };
    const confirmPage = await get(`/grants/${grant.id}/revoke`, await adminToken(shop));
    expect(await confirmPage.text()).toContain('Are you sure?');
    expect(
      (await fetch(`${server.url}/agent/v1/grant`, { headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(200);
    const revoked = await fetch(`${CONSOLE()}/grants/${grant.id}/revoke`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await adminToken(shop)}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: '',
    });
    expect(((await revoked.json()) as { message: string }).message).toBe(`Grant ${grant.id} revoked.`);
    expect(
      (await fetch(`${server.url}/agent/v1/grant`, { headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(401);
  });

  it('refuses a missing token, a bad signature, a wrong audience, an expired token and another issuer', async () => {
    const shop = uniqueShop('refuse');
    await managedInstall(shop);
    const page = await get('/events', 'not-a-jwt');
    await expectRefused(page, 'shopify_session_token_invalid');
    await expectRefused(
      await get('/events', await forged(shop, { secret: 'another-secret' })),
      'shopify_session_token_invalid',
    );
    await expectRefused(
      await get('/events', await forged(shop, { aud: 'another-app' })),
      'shopify_session_token_invalid',
    );
    const past = Math.floor(Date.now() / 1000) - 60;
    await expectRefused(await get('/events', await forged(shop, { exp: past })), 'shopify_session_token_invalid');
    await expectRefused(
      await get('/events', await forged(shop, { iss: `https://${uniqueShop('other')}/admin` })),
      'shopify_session_token_invalid',
    );
    const post = await fetch(`${CONSOLE()}/grants`, { method: 'POST', body: '' });
    await expectRefused(post, 'shopify_session_token_invalid');
    // A store that never installed the app: the exchange is refused, so is the page.
    const stranger = uniqueShop('stranger');
    const res = await get('', await forged(stranger));
    expect(res.status).toBe(502);
    expect(await res.text()).toContain('shopify_unreachable');
  });

  it('has its own 404, and /merchant opened in the admin goes to the console', async () => {
    const shop = uniqueShop('nf');
    await managedInstall(shop);
    const res = await get('/no-such-page', await adminToken(shop));
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('Page not found');
    const opened = await fetch(
      `${server.url}${SHOPIFY_APP_PATHS.merchant}?embedded=1&shop=${shop}&host=abc&id_token=x`,
      {
        redirect: 'manual',
      },
    );
    expect(opened.status).toBe(302);
    // The standalone merchant area's 404 is its own too.
    const stray = await fetch(`${server.url}${SHOPIFY_APP_PATHS.merchant}/grants`);
    expect(stray.status).toBe(404);
    const strayPage = await stray.text();
    expect(strayPage).toContain('The merchant area has no page at this address.');
    expect(stray.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(opened.headers.get('location')).toBe(
      `${SHOPIFY_APP_PATHS.merchant}/console?shop=${shop}&host=abc&embedded=1`,
    );
  });

  it("outside sandbox mode only the store's admin and admin.shopify.com may frame it", () => {
    const config = server.runtime.config;
    const live = { config: { ...config, shopify: { ...config.shopify, adminBaseUrl: 'https://{shop}' } } } as Services;
    expect(frameAncestors(live, 'shop-a.myshopify.com')).toBe('https://admin.shopify.com https://shop-a.myshopify.com');
    expect(frameAncestors(live, 'evil.example.com')).toBe('https://admin.shopify.com');
    expect(frameAncestors(server.runtime.services, 'shop-a.myshopify.com')).toBe("'self'");
  });

  it('every form previews through its operation and lands on the intent page to confirm', async () => {
    const shop = uniqueShop('forms');
    await managedInstall(shop);
    const post = async (path: string, form: Record<string, string>) => {
      const res = await fetch(`${CONSOLE()}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${await adminToken(shop)}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams(form),
      });
      const text = await res.text();
      expect(res.status, `${path}: ${text}`).toBe(200);
      return JSON.parse(text) as { location: string; message: string; shown_once?: { value: string } };
    };
    const confirm = async (location: string) => {
      const page = await (
        await get(location.replace(`${SHOPIFY_APP_PATHS.merchant}/console`, ''), await adminToken(shop))
      ).text();
      expect(page).toContain('<h1>Confirm: ');
      return post(`${location.replace(`${SHOPIFY_APP_PATHS.merchant}/console`, '')}/confirm`, {});
    };
    const created = await confirm(
      (
        await post('/endpoints', {
          name: 'Forms',
          auth_mode: 'hmac_sha256',
          trigger_variant: 'external_event',
          secret: '',
        })
      ).location,
    );
    expect(created.message).toMatch(/^Confirmed: endpoint create/);
    expect(created.shown_once?.value).toBeTruthy();
    const endpoints = await (await get('/endpoints', await adminToken(shop))).text();
    const endpointId = /\/endpoints\/(ep_[a-z0-9]+)/.exec(endpoints)?.[1] as string;
    const paused = await confirm((await post(`/endpoints/${endpointId}/edit`, { status: 'paused' })).location);
    expect(paused.message).toMatch(/^Confirmed: endpoint edit/);
    const rotated = await confirm((await post(`/endpoints/${endpointId}/rotate`, { overlap_hours: '2' })).location);
    expect(rotated.shown_once?.value).toBeTruthy();
    // A refusal is the operation's own, with its code and docs page: nothing to replay here.
    const bulk = await fetch(`${CONSOLE()}/recover/bulk`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await adminToken(shop)}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ state: 'failed' }),
    });
    expect(bulk.status).toBe(409);
    expect(await bulk.text()).toContain('/reference/errors/bulk_replay_no_events/');
    const again = await post(`/endpoints/${endpointId}/rotate`, { overlap_hours: '1' });
    const cancelled = await post(`${again.location.replace(`${SHOPIFY_APP_PATHS.merchant}/console`, '')}/cancel`, {});
    expect(cancelled.message).toBe('Cancelled: nothing was done.');
    const alert = await confirm(
      (await post('/alerts', { channel: 'webhook', url: 'https://93.184.215.14/flowport-alerts' })).location,
    );
    expect(alert.message).toMatch(/^Confirmed: alert subscribe/);
    const alerts = await (await get('/alerts', await adminToken(shop))).text();
    const subscriptionId = /\/alerts\/([a-z]+_[a-z0-9]+)\/remove/.exec(alerts)?.[1] as string;
    const removed = await confirm((await post(`/alerts/${subscriptionId}/remove`, {})).location);
    expect(removed.message).toMatch(/^Confirmed: alert unsubscribe/);
  });
});
