// Merchant sign-in by Shopify session token (issue 40, defects 5 and 10), over real HTTP on
// loopback with the sandbox playing Shopify, on the suite's store (SQLite or PostgreSQL): an id
// token signs a browser in only through a POST from Flowport's own origin or App Bridge's
// `Authorization: Bearer` header, never a GET link (login CSRF); each token's `jti` makes one
// session, even under 20 simultaneous redemptions; and `/merchant/sign-in` answers the same
// whether or not the store has Flowport installed.
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHOPIFY_APP_PATHS } from '../../api/src/lib/shopify-app.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { authorize, CookieJar, go, install, sandboxApp, uniqueShop } from './helpers.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ worker: false });
});
afterAll(async () => {
  await server?.close();
});

const MERCHANT = () => `${server.url}${SHOPIFY_APP_PATHS.merchant}`;

async function idToken(shop: string, claims: Record<string, unknown> = {}): Promise<string> {
  const { client_id, client_secret } = sandboxApp(server);
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({ dest: `https://${shop}`, iss: `https://${shop}/admin`, sub: '42', ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setAudience(client_id)
    .setIssuedAt(now)
    .setNotBefore(now - 5)
    .setExpirationTime(now + 60);
  if (!('jti' in claims)) jwt.setJti(crypto.randomUUID());
  return jwt.sign(new TextEncoder().encode(client_secret));
}

const tokenSessions = async (shop: string) =>
  Number(
    (
      await server.runtime.services.db.get<{ n: number | string }>(
        `SELECT COUNT(*) AS n FROM merchant_sessions m JOIN shops s ON s.id = m.shop_id
          WHERE s.domain = ? AND m.source = 'session_token'`,
        [shop],
      )
    )?.n,
  );

function postToken(jar: CookieJar, token: string, headers: Record<string, string> = {}): Promise<Response> {
  return go(jar, MERCHANT(), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ id_token: token }).toString(),
  });
}

async function expectRefusalPage(res: Response, status: number, code: string): Promise<void> {
  const text = await res.text();
  expect(res.status).toBe(status);
  expect(text).toContain(`<code>${code}</code>`);
  expect(text).toContain(`/reference/errors/${code}/`);
}

describe('merchant sign-in by id token', () => {
  it('a GET link with ?id_token= signs nobody in (login CSRF)', async () => {
    const shop = uniqueShop('csrf');
    await install(server, shop);
    const victim = new CookieJar();
    const res = await go(victim, `${MERCHANT()}?id_token=${await idToken(shop)}`);
    expect(res.headers.getSetCookie().some((c) => c.startsWith('flowport_merchant='))).toBe(false);
    expect(victim.cookies.has('flowport_merchant')).toBe(false);
    expect(await tokenSessions(shop)).toBe(0);
  });

  it('signs in through a same-origin POST or the Authorization: Bearer header (App Bridge)', async () => {
    const shop = uniqueShop('post');
    await install(server, shop);
    const byForm = new CookieJar();
    const posted = await postToken(byForm, await idToken(shop), { origin: server.url });
    expect(posted.status).toBe(303);
    expect(posted.headers.get('location')).toBe(SHOPIFY_APP_PATHS.merchant);
    expect(await (await go(byForm, MERCHANT())).text()).toContain('Shopify user 42');

    const byHeader = new CookieJar();
    const bearer = await go(byHeader, MERCHANT(), { headers: { authorization: `Bearer ${await idToken(shop)}` } });
    expect(bearer.status).toBe(303);
    expect(await (await go(byHeader, MERCHANT())).text()).toContain('Shopify user 42');
    expect(await tokenSessions(shop)).toBe(2);
  });

  it('refuses a POST from another site, and a token without jti', async () => {
    const shop = uniqueShop('xsite');
    await install(server, shop);
    const jar = new CookieJar();
    await expectRefusalPage(
      await postToken(jar, await idToken(shop), { origin: 'https://attacker.example' }),
      403,
      'merchant_form_expired',
    );
    await expectRefusalPage(
      await postToken(jar, await idToken(shop), { 'sec-fetch-site': 'cross-site' }),
      403,
      'merchant_form_expired',
    );
    await expectRefusalPage(
      await postToken(jar, await idToken(shop, { jti: undefined })),
      401,
      'shopify_session_token_invalid',
    );
    expect(jar.cookies.has('flowport_merchant')).toBe(false);
    expect(await tokenSessions(shop)).toBe(0);
  });

  it('one id token makes one session: a second use is refused', async () => {
    const shop = uniqueShop('once');
    await install(server, shop);
    const token = await idToken(shop);
    expect((await postToken(new CookieJar(), token)).status).toBe(303);
    await expectRefusalPage(await postToken(new CookieJar(), token), 401, 'shopify_session_token_reused');
    await expectRefusalPage(
      await go(new CookieJar(), MERCHANT(), { headers: { authorization: `Bearer ${token}` } }),
      401,
      'shopify_session_token_reused',
    );
    expect(await tokenSessions(shop)).toBe(1);
  });

  it('20 simultaneous redemptions of one id token: exactly one session', async () => {
    const shop = uniqueShop('race');
    await install(server, shop);
    const token = await idToken(shop);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0
          ? postToken(new CookieJar(), token)
          : go(new CookieJar(), MERCHANT(), { headers: { authorization: `Bearer ${token}` } }),
      ),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 303)).toHaveLength(1);
    expect(statuses.filter((s) => s === 401)).toHaveLength(19);
    expect(await tokenSessions(shop)).toBe(1);
  });
});

describe('/merchant/sign-in does not tell whether a store has Flowport installed', () => {
  it('answers the same for an installed and an unknown store; the unknown one is refused only after Shopify', async () => {
    const installed = uniqueShop('known');
    await install(server, installed);
    const unknown = uniqueShop('unknown');
    const start = (shop: string) =>
      go(new CookieJar(), `${server.url}${SHOPIFY_APP_PATHS.merchant}/sign-in?shop=${shop}`);
    const a = await start(installed);
    const b = await start(unknown);
    expect(b.status).toBe(a.status);
    expect(a.status).toBe(302);
    const shape = (res: Response, shop: string) => {
      const u = new URL(res.headers.get('location') ?? '', server.url);
      return { path: u.pathname.replace(shop, '<shop>'), params: [...u.searchParams.keys()].sort() };
    };
    expect(shape(b, unknown)).toEqual(shape(a, installed));
    expect(new URL(b.headers.get('location') ?? '', server.url).searchParams.getAll('grant_options[]')).toEqual([
      'per-user',
    ]);
    // The round trip through Shopify (a signed-in staff member of that store) ends refused, writing nothing.
    const jar = new CookieJar();
    const callback = await authorize(
      server,
      jar,
      unknown,
      'install',
      `${SHOPIFY_APP_PATHS.merchant}/sign-in?shop=${unknown}`,
    );
    await expectRefusalPage(await go(jar, callback), 404, 'shopify_shop_not_installed');
    expect(await server.runtime.services.db.get('SELECT id FROM shops WHERE domain = ?', [unknown])).toBeUndefined();
  });
});

describe('/merchant?shop= (opened from the Shopify admin) does not tell whether a store has Flowport installed', () => {
  it('without a session: the same status, Location (every parameter but the state and shop) and cookie names', async () => {
    const installed = uniqueShop('admin-known');
    await install(server, installed);
    const unknown = uniqueShop('admin-unknown');
    const start = (shop: string) => go(new CookieJar(), `${MERCHANT()}?shop=${shop}`);
    const a = await start(installed);
    const b = await start(unknown);
    expect(a.status).toBe(302);
    expect(b.status).toBe(a.status);
    const shape = (res: Response, shop: string) => {
      const u = new URL(res.headers.get('location') ?? '', server.url);
      const state = u.searchParams.get('state') ?? '';
      const claims = JSON.parse(Buffer.from(state.split('.')[0] ?? '', 'base64url').toString('utf8'));
      const params = [...u.searchParams].filter(([k]) => k !== 'state').map(([k, v]) => [k, v.replace(shop, '<shop>')]);
      const { n: _n, exp: _exp, shop: _shop, ...rest } = claims;
      return {
        path: `${u.host.replace(shop, '<shop>')}${u.pathname.replace(shop, '<shop>')}`,
        params,
        stateClaims: rest,
        cookies: res.headers
          .getSetCookie()
          .map((c) => c.split('=')[0])
          .sort(),
      };
    };
    expect(shape(b, unknown)).toEqual(shape(a, installed));
  });
});
