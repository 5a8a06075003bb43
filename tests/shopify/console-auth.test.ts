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
import Stripe from 'stripe';
import { INGEST_PATH_PREFIX } from '../../api/src/lib/package-info.ts';
import { sandboxApp, uniqueShop } from './helpers.ts';
import { hmacHex, newEndpoint, post } from '../intake/helpers.ts';

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

/** A console POST as the console's script sends it: form fields, the form's key, a session token. */
const send = (path: string, token: string, form: Record<string, string>) =>
  fetch(`${CONSOLE()}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  });

/** The key of the (nth) form `page` renders for posting to `action`, new with each render. */
async function formKeyOn(shop: string, page: string, action: string, nth = 0): Promise<string> {
  const text = await (await get(page, await adminToken(shop))).text();
  const attr = `action="${SHOPIFY_APP_PATHS.merchant}/console${action}"`;
  let at = text.indexOf(attr);
  for (let i = 0; i < nth && at > -1; i++) at = text.indexOf(attr, at + 1);
  expect(at, `${page} has a form posting to ${action}`).toBeGreaterThan(-1);
  return /name="form_key" value="([^"]+)"/.exec(text.slice(at, at + 400))?.[1] ?? '';
}

async function expectRefused(res: Response, code: string): Promise<void> {
  const text = await res.text();
  expect(res.status).toBe(401);
  expect(text).toContain(`<code>${code}</code>`);
  expect(text).toContain(`/reference/errors/${code}/`);
}

interface Answer {
  location: string;
  message: string;
  tone?: string;
  shown_once?: { value: string };
}

/** What the console can change in a shop, as one string: the same string means nothing changed. */
async function snapshot(shop: string): Promise<string> {
  const { db } = server.runtime.services;
  const shopId = (await db.get<{ id: string }>('SELECT id FROM shops WHERE domain = ?', [shop]))?.id ?? '';
  const sums = [
    'SELECT COUNT(*) AS n FROM audit_log WHERE shop_id = ?',
    "SELECT COUNT(*) * 1000 + SUM(CASE WHEN state = 'previewed' THEN 0 ELSE 1 END) AS n FROM action_intents WHERE shop_id = ?",
    'SELECT COUNT(*) * 1000 + COUNT(revoked_at) AS n FROM grants WHERE shop_id = ?',
    'SELECT COUNT(*) AS n FROM events WHERE shop_id = ?',
    'SELECT COUNT(*) AS n FROM alert_subscriptions WHERE shop_id = ?',
    'SELECT COUNT(*) * 1000 + SUM(config_version) AS n FROM endpoints WHERE shop_id = ?',
  ];
  const out: number[] = [];
  for (const sql of sums) out.push(Number((await db.get<{ n: number | string | null }>(sql, [shopId]))?.n ?? 0));
  return out.join(' ');
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
    const posted = await send('/grants', await adminToken(shop), {
      actor_name: 'Helper',
      actor_kind: 'agent',
      tier: 'observer',
      expires_in_days: '5',
      form_key: await formKeyOn(shop, '/grants', '/grants'),
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
    const revokeKey = await formKeyOn(shop, `/grants/${grant.id}/revoke`, `/grants/${grant.id}/revoke`);
    const revoked = await send(`/grants/${grant.id}/revoke`, await adminToken(shop), { form_key: revokeKey });
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
    // A post without its form's key runs nothing.
    const keyless = await send('/grants', await adminToken(shop), {
      actor_name: 'X',
      actor_kind: 'agent',
      tier: 'observer',
    });
    expect(keyless.status).toBe(400);
    expect(await keyless.text()).toContain('/reference/errors/idempotency_key_missing/');
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

  it('every form runs once: a reload repeats nothing, a spent session token is refused, the same form sent again runs nothing twice', async () => {
    const shop = uniqueShop('forms');
    await managedInstall(shop);
    const local = (location: string) => location.replace(`${SHOPIFY_APP_PATHS.merchant}/console`, '');
    /**
     * Sends the form `page` renders for `action` as the console's script does, then: a reload (the
     * GET of where it landed) changes nothing; the same request again is refused, its session
     * token spent; the same form again with a fresh token answers where the first went and runs
     * nothing twice (no secret shown again).
     */
    const submit = async (page: string, action: string, fields: Record<string, string> = {}, nth = 0) => {
      const form = { ...fields, form_key: await formKeyOn(shop, page, action, nth) };
      const token = await adminToken(shop);
      const res = await send(action, token, form);
      const text = await res.text();
      expect(res.status, `${action}: ${text}`).toBe(200);
      const answer = JSON.parse(text) as Answer;
      const after = await snapshot(shop);
      expect((await get(local(answer.location), await adminToken(shop))).status).toBe(200);
      await expectRefused(await send(action, token, form), 'shopify_session_token_reused');
      const again = (await (await send(action, await adminToken(shop), form)).json()) as Answer;
      expect(again).toMatchObject({ location: answer.location, tone: 'warning' });
      expect(again.message).toMatch(/^This form was sent already; nothing was done again\. /);
      expect(again.shown_once).toBeUndefined();
      expect(await snapshot(shop), `${action}: reloaded and sent again`).toBe(after);
      return answer;
    };
    const confirmed = async (preview: Answer) => {
      const intent = local(preview.location);
      const done = await submit(intent, `${intent}/confirm`);
      expect(done.message).toMatch(/^Confirmed: /);
      return done;
    };
    const idOf = async (page: string, re: RegExp) =>
      re.exec(await (await get(page, await adminToken(shop))).text())?.[1] as string;

    // Endpoints: create (Flowport makes the secret; or a Stripe-made one imported), edit, pause, rotate, cancel.
    const made = { auth_mode: 'hmac_sha256', trigger_variant: 'external_event', secret: '' };
    const created = await confirmed(await submit('/endpoints', '/endpoints', { name: 'Forms', ...made }));
    expect(created.shown_once?.value).toBeTruthy();
    const imported = {
      auth_mode: 'stripe',
      trigger_variant: 'external_event',
      secret: 'whsec_formsTestSecret0123456789',
    };
    await confirmed(await submit('/endpoints', '/endpoints', { name: 'Stripe', ...imported }));
    const formsId = await idOf('/endpoints', /\/endpoints\/(ep_[a-z0-9]+)">Forms</);
    const stripeId = await idOf('/endpoints', /\/endpoints\/(ep_[a-z0-9]+)">Stripe</);
    const page = `/endpoints/${formsId}`;
    await confirmed(await submit(page, `${page}/edit`, { name: 'Forms renamed' }));
    const paused = await confirmed(await submit(page, `${page}/edit`, { status: 'paused' }, 1));
    expect(paused.message).toMatch(/^Confirmed: endpoint edit/);
    const rotated = await confirmed(await submit(page, `${page}/rotate`, { overlap_hours: '2' }));
    expect(rotated.shown_once?.value).toBeTruthy();
    // The same confirmation from another tab (rendered before, its own form key): the intent ran,
    // so it is refused, and the new secret is not shown a second time.
    const secondTab = await send(`${local(rotated.location)}/confirm`, await adminToken(shop), {
      form_key: crypto.randomUUID(),
    });
    const secondText = await secondTab.text();
    expect(secondTab.status).toBe(409);
    expect(secondText).toContain('/reference/errors/intent_not_confirmable/');
    expect(secondText).not.toContain(rotated.shown_once?.value as string);
    const rotation = local((await submit(page, `${page}/rotate`, { overlap_hours: '1' })).location);
    expect((await submit(rotation, `${rotation}/cancel`)).message).toBe('Cancelled: nothing was done.');

    // Recovery. A refusal is the operation's own, and releases the form's key: sent again once
    // there is something to replay, the same form previews.
    const bulkKey = await formKeyOn(shop, '/recover', '/recover/bulk');
    const refused = await send('/recover/bulk', await adminToken(shop), { state: 'failed', form_key: bulkKey });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain('/reference/errors/bulk_replay_no_events/');
    // Two events signed by Stripe, which Flow then failed to take (no worker runs here).
    const ingest = `${server.url}${INGEST_PATH_PREFIX}/${stripeId}`;
    for (const id of ['evt_forms_1', 'evt_forms_2']) {
      const payload = JSON.stringify({ id, type: 'checkout.session.completed', data: {} });
      const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: imported.secret });
      const res = await fetch(ingest, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'stripe-signature': signature },
        body: payload,
      });
      expect(res.status).toBe(202);
    }
    await server.runtime.services.db.run(
      "UPDATE events SET state = 'failed', error_code = 'flow_unavailable', attempt_count = 8 WHERE endpoint_id = ?",
      [stripeId],
    );
    const one = await idOf(`/events?endpoint_id=${stripeId}`, /\/events\/(evt_[a-z0-9]+)"/);
    await confirmed(await submit(`/events/${one}`, `/events/${one}/replay`, { note: 'from the console' }));
    const bulk = await send('/recover/bulk', await adminToken(shop), { state: 'failed', form_key: bulkKey });
    expect(bulk.status).toBe(200);
    await confirmed(await submit('/recover', '/recover/bulk', { state: 'failed', endpoint_id: stripeId }));

    // Grants: create (the token shown once), revoke (its confirmation page's form).
    const grant = await submit('/grants', '/grants', {
      actor_name: 'Forms agent',
      actor_kind: 'agent',
      tier: 'observer',
      expires_in_days: '5',
    });
    expect(grant.shown_once?.value).toMatch(/^fpg_/);
    const grantId = await idOf('/grants', /\/grants\/(grt_[a-z0-9]+)\/revoke/);
    expect((await submit(`/grants/${grantId}/revoke`, `/grants/${grantId}/revoke`)).message).toBe(
      `Grant ${grantId} revoked.`,
    );

    // Alerts: subscribe, remove.
    await confirmed(
      await submit('/alerts', '/alerts', { channel: 'webhook', url: 'https://93.184.215.14/flowport-alerts' }),
    );
    const subscriptionId = await idOf('/alerts', /\/alerts\/([a-z]+_[a-z0-9]+)\/remove/);
    const removed = await confirmed(await submit('/alerts', `/alerts/${subscriptionId}/remove`));
    expect(removed.message).toMatch(/^Confirmed: alert unsubscribe/);
  });

  it('the refused page, the endpoints list and an endpoint page say what the sender should change', async () => {
    const shop = uniqueShop('console');
    await managedInstall(shop);
    await get('', await adminToken(shop));
    const services = server.runtime.services;
    const shopId = (await services.db.get<{ id: string }>('SELECT id FROM shops WHERE domain = ?', [shop]))?.id;
    expect(shopId).toMatch(/^shop_/);
    const { endpoint, secret } = await newEndpoint(services, shopId as string, {
      authMode: 'hmac_sha256',
      hmac: { timestampHeader: 'x-ts' },
    });
    // The sender signs the body alone; the endpoint expects `{timestamp}.{body}`.
    const body = JSON.stringify({ id: 'c1', type: 'shipment.created' });
    const refused = await post(`${server.url}${INGEST_PATH_PREFIX}/${endpoint.id}`, body, {
      'x-ts': String(Math.floor(Date.now() / 1000)),
      'x-flowport-signature': `sha256=${hmacHex(secret, body)}`,
    });
    expect(refused.status).toBe(401);
    const page = async (path: string) => {
      const res = await get(path, await adminToken(shop));
      expect(res.status).toBe(200);
      return res.text();
    };
    const hint = /body alone/;
    const refusedPage = await page('/refused');
    expect(refusedPage).toContain('What the sender should change');
    expect(refusedPage).toMatch(hint);
    const endpointPage = await page(`/endpoints/${endpoint.id}`);
    expect(endpointPage).toContain('Newest refusal');
    expect(endpointPage).toContain('<code>signature_mismatch</code>');
    expect(endpointPage).toMatch(hint);
    expect(await page('/endpoints')).toMatch(/data-label="Refused \(24 h\)">1</);
    // Never the secret or the signature.
    for (const text of [refusedPage, endpointPage]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(hmacHex(secret, body));
    }
  });
});
