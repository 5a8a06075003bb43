// The Shopify app install over real HTTP with the sandbox playing Shopify: the happy path (shop
// created, token stored encrypted, merchant signed in, a grant made on the merchant page works on
// the Agent API), and every refusal of the OAuth callback, each a page with its code, writing nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHOPIFY_APP_PATHS } from '../../api/src/lib/shopify-app.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { absolute, authorize, CookieJar, csrfOf, go, install, resigned, sandboxApp, uniqueShop } from './helpers.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ worker: false });
});
afterAll(async () => {
  await server?.close();
});

const shopRow = (domain: string) =>
  server.runtime.services.db.get<{ id: string; access_token_enc: string | null; connection_status: string }>(
    'SELECT id, access_token_enc, connection_status FROM shops WHERE domain = ?',
    [domain],
  );

async function expectRefusalPage(res: Response, status: number, code: string): Promise<string> {
  const text = await res.text();
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/text\/html/);
  expect(text).toContain(`<code>${code}</code>`);
  expect(text).toContain(`/reference/errors/${code}/`);
  return text;
}

describe('OAuth install', () => {
  it('installs, stores the token encrypted, signs the merchant in, and a grant made there works on the Agent API', async () => {
    const shop = uniqueShop();
    const jar = await install(server, shop);
    const row = await shopRow(shop);
    expect(row?.connection_status).toBe('connected');
    expect(row?.access_token_enc).toBeTruthy();
    expect(row?.access_token_enc).not.toContain('shpat_');
    const token = server.runtime.services.secrets.decrypt(row?.access_token_enc as string);
    expect(token).toMatch(/^shpat_sandbox_/);
    const audit = await server.runtime.services.db.all<{ action: string; actor_kind: string }>(
      'SELECT action, actor_kind FROM audit_log WHERE shop_id = ? ORDER BY seq',
      [row?.id ?? null],
    );
    expect(audit.map((a) => a.action)).toEqual(['shop.install', 'merchant.sign_in']);

    const page = await go(jar, `${server.url}${SHOPIFY_APP_PATHS.merchant}`);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain(shop);
    expect(html).toContain('Flow readiness');
    const session = jar.cookies.get('flowport_merchant');
    expect(session).toBeTruthy();

    // A form without the CSRF token changes nothing.
    const forged = await go(jar, `${server.url}${SHOPIFY_APP_PATHS.merchant}/grants`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        tier: 'observer',
        actor_kind: 'agent',
        actor_name: 'x',
        expires_in_days: '1',
      }).toString(),
    });
    await expectRefusalPage(forged, 403, 'merchant_form_expired');

    const created = await go(jar, `${server.url}${SHOPIFY_APP_PATHS.merchant}/grants`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
      body: new URLSearchParams({
        csrf_token: csrfOf(html),
        tier: 'observer',
        actor_kind: 'agent',
        actor_name: 'Support bot',
        expires_in_days: '7',
      }).toString(),
    });
    // Post → redirect → get: the token is on the page the post redirects to, once.
    expect(created.status).toBe(303);
    const shown = await go(jar, absolute(server, created.headers.get('location')));
    const createdHtml = await shown.text();
    expect(shown.status).toBe(200);
    const reloaded = await (await go(jar, `${server.url}${SHOPIFY_APP_PATHS.merchant}`)).text();
    expect(reloaded).not.toContain('id="grant-token"');
    const grantToken = /id="grant-token" type="text" readonly value="([^"]+)"/.exec(createdHtml)?.[1];
    expect(grantToken).toMatch(/^fpg_/);
    const events = await fetch(`${server.url}/agent/v1/events`, { headers: { authorization: `Bearer ${grantToken}` } });
    expect(events.status).toBe(200);
    const grantAudit = await server.runtime.services.db.get<{ actor_kind: string; actor_name: string }>(
      "SELECT actor_kind, actor_name FROM audit_log WHERE shop_id = ? AND action = 'grant.create'",
      [row?.id ?? null],
    );
    expect(grantAudit).toEqual({ actor_kind: 'human', actor_name: `Store owner of ${shop}` });

    // Revoke on the page: the token stops working.
    const grantId = /data-grant-id="([^"]+)"/.exec(createdHtml)?.[1];
    const revoked = await go(jar, `${server.url}${SHOPIFY_APP_PATHS.merchant}/grants/${grantId}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf_token: csrfOf(createdHtml) }).toString(),
    });
    expect(revoked.status).toBe(303);
    const after = await fetch(`${server.url}/agent/v1/events`, { headers: { authorization: `Bearer ${grantToken}` } });
    expect(after.status).toBe(401);
  });

  it('signs a staff member in with an online (per-user) token on an installed store', async () => {
    const shop = uniqueShop('online');
    await install(server, shop);
    const jar = new CookieJar();
    const callback = await authorize(
      server,
      jar,
      shop,
      'install',
      `${SHOPIFY_APP_PATHS.merchant}/sign-in?shop=${shop}`,
    );
    const done = await go(jar, callback);
    expect(done.status).toBe(303);
    const page = await go(jar, `${server.url}${SHOPIFY_APP_PATHS.merchant}`);
    expect(await page.text()).toContain('Sandbox Owner');
  });

  it('opened from the Shopify admin (application_url?shop=…): signs in on an installed store, installs on another', async () => {
    const installed = uniqueShop('opened');
    await install(server, installed);
    const jar = new CookieJar();
    const callback = await authorize(
      server,
      jar,
      installed,
      'install',
      `${SHOPIFY_APP_PATHS.merchant}?shop=${installed}`,
    );
    expect(new URL(callback).pathname).toBe(SHOPIFY_APP_PATHS.oauthCallback);
    expect((await go(jar, callback)).status).toBe(303);
    expect(await (await go(jar, `${server.url}${SHOPIFY_APP_PATHS.merchant}`)).text()).toContain('Sandbox Owner');
    // A store without Flowport: the same start; after Shopify signed the user in, the callback
    // continues to the install (offline token), then the merchant is signed in.
    const fresh = uniqueShop('opened-new');
    const other = new CookieJar();
    const first = await authorize(server, other, fresh, 'install', `${SHOPIFY_APP_PATHS.merchant}?shop=${fresh}`);
    const second = await authorize(server, other, fresh, 'install', first);
    const done = await go(other, second);
    expect(done.status).toBe(303);
    const row = await shopRow(fresh);
    expect(row?.connection_status).toBe('connected');
    expect(row?.access_token_enc).toBeTruthy();
    expect(await (await go(other, `${server.url}${SHOPIFY_APP_PATHS.merchant}`)).text()).toContain(fresh);
  });

  it('four simultaneous callbacks of the first install of one shop: all signed in, none 500, exactly one connected shop with a token', async () => {
    const shop = uniqueShop('double');
    const jars = Array.from({ length: 4 }, () => new CookieJar());
    const callbacks = await Promise.all(jars.map((jar) => authorize(server, jar, shop)));
    const answers = await Promise.all(jars.map((jar, i) => go(jar, callbacks[i] as string)));
    const statuses = answers.map((r) => r.status);
    for (const r of answers) await r.text();
    // Each callback has its own state and code: each ends signed in.
    expect(statuses).toEqual([303, 303, 303, 303]);
    const rows = await server.runtime.services.db.all<{
      id: string;
      access_token_enc: string;
      connection_status: string;
    }>('SELECT id, access_token_enc, connection_status FROM shops WHERE domain = ?', [shop]);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.connection_status).toBe('connected');
    expect(server.runtime.services.secrets.decrypt(rows[0]?.access_token_enc as string)).toMatch(/\S{8,}/);
    const installs = await server.runtime.services.db.all<{ action: string }>(
      "SELECT action FROM audit_log WHERE shop_id = ? AND action IN ('shop.install', 'shop.reinstall')",
      [rows[0]?.id ?? null],
    );
    expect(installs.filter((a) => a.action === 'shop.install')).toHaveLength(1);
    expect(installs).toHaveLength(4);
  });

  it('refuses sign-in on a store where the app is not installed, once Shopify signed the staff member in', async () => {
    const shop = uniqueShop('none');
    const jar = new CookieJar();
    const callback = await authorize(
      server,
      jar,
      shop,
      'install',
      `${SHOPIFY_APP_PATHS.merchant}/sign-in?shop=${shop}`,
    );
    await expectRefusalPage(await go(jar, callback), 404, 'shopify_shop_not_installed');
  });
});

describe('OAuth refusals (each a page with its code; nothing written)', () => {
  it('a domain that is not *.myshopify.com', async () => {
    for (const shop of ['evil.example.com', 'x.myshopify.com.evil.com', '', '-x.myshopify.com']) {
      const res = await go(
        new CookieJar(),
        `${server.url}${SHOPIFY_APP_PATHS.install}?shop=${encodeURIComponent(shop)}`,
      );
      await expectRefusalPage(res, 400, 'shopify_install_shop_invalid');
    }
  });

  it('a bad or missing hmac', async () => {
    const shop = uniqueShop('hmac');
    const jar = new CookieJar();
    const callback = await authorize(server, jar, shop);
    const tampered = new URL(callback);
    tampered.searchParams.set('code', 'f'.repeat(32));
    await expectRefusalPage(await go(jar, tampered.toString()), 400, 'shopify_oauth_hmac_invalid');
    const none = new URL(callback);
    none.searchParams.delete('hmac');
    await expectRefusalPage(await go(jar, none.toString()), 400, 'shopify_oauth_hmac_invalid');
    const forged = resigned(callback, 'not-the-secret', {});
    await expectRefusalPage(await go(jar, forged), 400, 'shopify_oauth_hmac_invalid');
    expect(await shopRow(shop)).toBeUndefined();
  });

  it('a reused state, a missing state cookie, and a state of another shop', async () => {
    const shop = uniqueShop('state');
    const jar = new CookieJar();
    const callback = await authorize(server, jar, shop);
    const cookie = jar.cookies.get('flowport_oauth_state') as string;
    // No state cookie (another browser).
    await expectRefusalPage(await go(new CookieJar(), callback), 400, 'shopify_oauth_state_invalid');
    expect(await shopRow(shop)).toBeUndefined();
    // The right browser: installs once.
    expect((await go(jar, callback)).status).toBe(303);
    // The same callback again, with the cookie put back: the state is spent.
    const replay = new CookieJar();
    replay.cookies.set('flowport_oauth_state', cookie);
    await expectRefusalPage(await go(replay, callback), 400, 'shopify_oauth_state_invalid');
    // A state issued for one shop, presented for another (signed correctly).
    const other = new CookieJar();
    const otherCallback = await authorize(server, other, uniqueShop('state-a'));
    const swapped = resigned(otherCallback, sandboxApp(server).client_secret, { shop: uniqueShop('state-b') });
    await expectRefusalPage(await go(other, swapped), 400, 'shopify_oauth_state_invalid');
  });

  it('a state this Flowport did not issue, even in a matching cookie; starting an install writes nothing', async () => {
    const count = async () =>
      Number(
        (await server.runtime.services.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM shopify_oauth_states'))?.n,
      );
    const before = await count();
    for (let i = 0; i < 5; i++) {
      const res = await go(new CookieJar(), `${server.url}${SHOPIFY_APP_PATHS.install}?shop=${uniqueShop('flood')}`);
      expect(res.status).toBe(302);
    }
    expect(await count()).toBe(before);
    const shop = uniqueShop('forged-state');
    const jar = new CookieJar();
    const callback = await authorize(server, jar, shop);
    const made = 'eyJzaG9wIjoieCJ9.AAAA';
    jar.cookies.set('flowport_oauth_state', made);
    const forged = resigned(callback, sandboxApp(server).client_secret, { state: made });
    await expectRefusalPage(await go(jar, forged), 400, 'shopify_oauth_state_invalid');
    expect(await shopRow(shop)).toBeUndefined();
  });

  it('an old timestamp', async () => {
    const shop = uniqueShop('time');
    const jar = new CookieJar();
    const callback = await authorize(server, jar, shop);
    const old = resigned(callback, sandboxApp(server).client_secret, {
      timestamp: String(Math.floor(Date.now() / 1000) - 3600),
    });
    await expectRefusalPage(await go(jar, old), 400, 'shopify_oauth_expired');
    expect(await shopRow(shop)).toBeUndefined();
  });

  it('a declined install', async () => {
    const shop = uniqueShop('decline');
    const jar = new CookieJar();
    const callback = await authorize(server, jar, shop, 'decline');
    await expectRefusalPage(await go(jar, callback), 403, 'shopify_install_denied');
    expect(await shopRow(shop)).toBeUndefined();
    expect(jar.cookies.has('flowport_merchant')).toBe(false);
  });

  it('Shopify refusing the code exchange', async () => {
    const shop = uniqueShop('code');
    const jar = new CookieJar();
    const callback = await authorize(server, jar, shop);
    const badCode = resigned(callback, sandboxApp(server).client_secret, { code: 'a'.repeat(32) });
    await expectRefusalPage(await go(jar, badCode), 502, 'shopify_unreachable');
    expect(await shopRow(shop)).toBeUndefined();
  });
});

describe('outside sandbox mode', () => {
  it('refuses the install without app credentials, and reports Shopify unreachable without writing', async () => {
    const bare = await startTestServer({
      worker: false,
      bootstrapSandbox: false,
      env: { FLOWPORT_SHOPIFY_ADMIN_BASE_URL: 'http://127.0.0.1:9/{shop}' },
    });
    try {
      const res = await go(new CookieJar(), `${bare.url}${SHOPIFY_APP_PATHS.install}?shop=${uniqueShop()}`);
      await expectRefusalPage(res, 503, 'shopify_install_not_configured');
    } finally {
      await bare.close();
    }
    const secret = 'shpss_test_secret';
    const live = await startTestServer({
      worker: false,
      bootstrapSandbox: false,
      env: {
        FLOWPORT_SHOPIFY_ADMIN_BASE_URL: 'http://127.0.0.1:9/{shop}',
        FLOWPORT_SHOPIFY_CLIENT_ID: 'test-client',
        FLOWPORT_SHOPIFY_CLIENT_SECRET: secret,
      },
    });
    try {
      const shop = uniqueShop('down');
      const jar = new CookieJar();
      const started = await go(jar, `${live.url}${SHOPIFY_APP_PATHS.install}?shop=${shop}`);
      expect(started.status).toBe(302);
      const authorizeUrl = new URL(started.headers.get('location') as string);
      expect(authorizeUrl.origin).toBe('http://127.0.0.1:9');
      expect(authorizeUrl.searchParams.get('client_id')).toBe('test-client');
      const state = authorizeUrl.searchParams.get('state') as string;
      const q = new URLSearchParams({ code: 'c0de', shop, state, timestamp: String(Math.floor(Date.now() / 1000)) });
      const callback = resigned(`${live.url}${SHOPIFY_APP_PATHS.oauthCallback}?${q}`, secret, {});
      await expectRefusalPage(await go(jar, callback), 502, 'shopify_unreachable');
      const row = await live.runtime.services.db.get('SELECT id FROM shops WHERE domain = ?', [shop]);
      expect(row).toBeUndefined();
    } finally {
      await live.close();
    }
  });
});

describe('Shopify session token (opened inside the Shopify admin)', () => {
  it('signs the merchant in from a valid id_token and refuses a forged, expired or foreign one', async () => {
    const { SignJWT } = await import('jose');
    const shop = uniqueShop('jwt');
    await install(server, shop);
    const { client_id, client_secret } = sandboxApp(server);
    const now = Math.floor(Date.now() / 1000);
    const sign = (claims: Record<string, unknown>, secret = client_secret) =>
      new SignJWT({ dest: `https://${shop}`, iss: `https://${shop}/admin`, sub: '42', ...claims })
        .setProtectedHeader({ alg: 'HS256' })
        .setAudience((claims.aud as string) ?? client_id)
        .setIssuedAt(now)
        .setJti(crypto.randomUUID())
        .setNotBefore(now - 5)
        .setExpirationTime((claims.exp as number) ?? now + 60)
        .sign(new TextEncoder().encode(secret));
    // App Bridge's way: a POST (or the Authorization header), never a link (tests/shopify/merchant-sign-in.test.ts).
    const post = (jar: CookieJar, token: string) =>
      go(jar, `${server.url}${SHOPIFY_APP_PATHS.merchant}?shop=${shop}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ id_token: token }).toString(),
      });
    const open = (token: string) => post(new CookieJar(), token);
    const ok = new CookieJar();
    const res = await post(ok, await sign({}));
    expect(res.status).toBe(303);
    const page = await go(ok, `${server.url}${SHOPIFY_APP_PATHS.merchant}`);
    expect(await page.text()).toContain('Shopify user 42');
    await expectRefusalPage(await open(await sign({}, 'wrong-secret')), 401, 'shopify_session_token_invalid');
    await expectRefusalPage(await open(await sign({ exp: now - 120 })), 401, 'shopify_session_token_invalid');
    await expectRefusalPage(await open(await sign({ aud: 'another-app' })), 401, 'shopify_session_token_invalid');
    await expectRefusalPage(
      await open(await sign({ dest: `https://${uniqueShop('other')}` })),
      401,
      'shopify_session_token_invalid',
    );
  });
});

describe('cookies on an https public URL', () => {
  it('are Secure, HttpOnly and SameSite=Lax', async () => {
    const https = await startTestServer({
      worker: false,
      bootstrapSandbox: false,
      env: { FLOWPORT_PUBLIC_URL: 'https://flowport.example.test' },
    });
    try {
      const shop = uniqueShop('https');
      // As behind the TLS-terminating proxy an https public URL implies (it names the browser's host).
      const proxied = { 'x-forwarded-host': 'flowport.example.test' };
      const started = await fetch(`${https.url}${SHOPIFY_APP_PATHS.install}?shop=${shop}`, {
        redirect: 'manual',
        headers: proxied,
      });
      expect(started.status).toBe(302);
      const stateCookie = started.headers.getSetCookie().find((c) => c.startsWith('flowport_oauth_state='));
      expect(stateCookie).toMatch(/; HttpOnly/i);
      expect(stateCookie).toMatch(/; Secure/i);
      expect(stateCookie).toMatch(/; SameSite=Lax/i);
      const { createShop } = await import('../../api/src/services/shops.ts');
      await createShop(https.runtime.services, { domain: shop, sandbox: true, accessToken: 'shpat_x' });
      const { SignJWT } = await import('jose');
      const { client_id, client_secret } = sandboxApp(https);
      const now = Math.floor(Date.now() / 1000);
      const token = await new SignJWT({ dest: `https://${shop}`, iss: `https://${shop}/admin`, sub: '7' })
        .setProtectedHeader({ alg: 'HS256' })
        .setAudience(client_id)
        .setJti(crypto.randomUUID())
        .setNotBefore(now - 5)
        .setExpirationTime(now + 60)
        .sign(new TextEncoder().encode(client_secret));
      const signedIn = await fetch(`${https.url}${SHOPIFY_APP_PATHS.merchant}`, {
        headers: { ...proxied, authorization: `Bearer ${token}` },
        redirect: 'manual',
      });
      expect(signedIn.status).toBe(303);
      const session = signedIn.headers.getSetCookie().find((c) => c.startsWith('flowport_merchant='));
      expect(session).toMatch(/; HttpOnly/i);
      expect(session).toMatch(/; Secure/i);
      expect(session).toMatch(/; SameSite=Lax/i);
    } finally {
      await https.close();
    }
  });
});
