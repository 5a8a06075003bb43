// Issue 40 point 10: one canonical origin. The install and OAuth pages set cookies (the OAuth
// state, the merchant session) that only come back to the host that set them; the callback comes
// to the public URL. So a GET to one of those pages on another host (127.0.0.1 where the public URL
// says localhost) is redirected to the same path and query on the public URL first. Here a browser
// keeps cookies per host, as a real one does: the install started on 127.0.0.1 completes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANONICAL_ORIGIN_PATHS } from '../../api/src/http/canonical-origin.ts';
import { SHOPIFY_APP_PATHS } from '../../api/src/lib/shopify-app.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { CookieJar, uniqueShop } from './helpers.ts';

let s: TestServer;
let publicOrigin: string;
beforeAll(async () => {
  // The banner's URL: localhost, while the server also answers on 127.0.0.1.
  s = await startTestServer({
    worker: false,
    configure: (c) => ({ ...c, publicUrl: c.publicUrl.replace('127.0.0.1', 'localhost') }),
  });
  publicOrigin = `http://localhost:${s.port}`;
});
afterAll(async () => {
  await s?.close();
});

/** A browser: one cookie jar per host, redirects not followed. */
class Browser {
  readonly jars = new Map<string, CookieJar>();
  jar(url: string): CookieJar {
    const host = new URL(url).host;
    let jar = this.jars.get(host);
    if (!jar) {
      jar = new CookieJar();
      this.jars.set(host, jar);
    }
    return jar;
  }
  async go(url: string, init: RequestInit = {}): Promise<Response> {
    const jar = this.jar(url);
    const headers = new Headers(init.headers);
    if (jar.cookies.size) headers.set('cookie', jar.header());
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    jar.take(res);
    return res;
  }
}

const location = (res: Response, base: string) => new URL(res.headers.get('location') ?? '', base).toString();

describe('one canonical origin for the install and OAuth pages', () => {
  it('the install started on 127.0.0.1 (the public URL says localhost) completes', async () => {
    const browser = new Browser();
    const shop = uniqueShop('origin');
    let url = `${s.url}${SHOPIFY_APP_PATHS.install}?shop=${shop}`;
    let res = await browser.go(url);
    // Redirects until the stand-in's authorize page.
    for (let i = 0; i < 3 && res.status >= 300 && res.status < 400; i++) {
      url = location(res, url);
      res = await browser.go(url);
    }
    expect(res.status, await res.clone().text()).toBe(200);
    const authorizeUrl = new URL(url);
    const form = new URLSearchParams();
    for (const k of ['client_id', 'scope', 'redirect_uri', 'state'])
      form.set(k, authorizeUrl.searchParams.get(k) ?? '');
    form.set('decision', 'install');
    const decided = await browser.go(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    expect(decided.status).toBe(302);
    const callback = location(decided, url);
    expect(callback.startsWith(`${publicOrigin}${SHOPIFY_APP_PATHS.oauthCallback}?`)).toBe(true);
    const done = await browser.go(callback);
    expect(done.status, await done.clone().text()).toBe(303);
    const row = await s.runtime.services.db.get<{ connection_status: string }>(
      'SELECT connection_status FROM shops WHERE domain = ?',
      [shop],
    );
    expect(row?.connection_status).not.toBe('uninstalled');
    expect(row).toBeDefined();
  });

  it('each listed page: a GET on another host redirects to the same path and query on the public URL', async () => {
    expect(CANONICAL_ORIGIN_PATHS).toEqual(
      expect.arrayContaining([SHOPIFY_APP_PATHS.install, SHOPIFY_APP_PATHS.oauthCallback, '/oauth/authorize']),
    );
    for (const path of CANONICAL_ORIGIN_PATHS) {
      const query = '?shop=a.myshopify.com&state=x%20y&return_to=%2Foauth%2Fauthorize';
      const res = await fetch(`${s.url}${path}${query}`, { redirect: 'manual' });
      expect(res.status, path).toBe(302);
      expect(res.headers.get('location'), path).toBe(`${publicOrigin}${path}${query}`);
      // On the public host itself: served, not redirected again.
      const there = await fetch(`${publicOrigin}${path}${query}`, { redirect: 'manual' });
      expect(there.headers.get('location') ?? '', path).not.toMatch(new RegExp(`^${publicOrigin}${path}\\?`));
    }
  });

  it('other paths and methods are served on any host', async () => {
    const health = await fetch(`${s.url}/healthz`, { redirect: 'manual' });
    expect(health.status).toBe(200);
    // A form post is not redirected (a redirect would lose its body): it answers where it was sent.
    const post = await fetch(`${s.url}/oauth/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'consent_id=x',
      redirect: 'manual',
    });
    expect(post.status).not.toBe(302);
    expect(post.headers.get('location')).toBeNull();
  });
});

describe('one canonical origin behind a proxy: never a redirect to itself', () => {
  let deployed: TestServer;
  beforeAll(async () => {
    // A deployment: the public URL is a real domain, a proxy in front forwards to this loopback port.
    deployed = await startTestServer({
      worker: false,
      configure: (c) => ({ ...c, publicUrl: 'https://flowport.example.test' }),
    });
  });
  afterAll(async () => {
    await deployed?.close();
  });

  it('a proxy on this machine that rewrote Host and sent no X-Forwarded-Host: served, not redirected (nginx default)', async () => {
    // nginx's default `proxy_pass http://127.0.0.1:PORT` sends `Host: 127.0.0.1:PORT` and no forwarding header:
    // redirecting to the public URL would come straight back here, forever.
    const res = await fetch(`${deployed.url}${SHOPIFY_APP_PATHS.install}?shop=a.myshopify.com`, { redirect: 'manual' });
    expect(res.headers.get('location') ?? '').not.toMatch(/^https:\/\/flowport\.example\.test\/shopify\/install/);
  });

  it('a proxy that says the browser asked for another host (X-Forwarded-Host): redirected to the public URL', async () => {
    const res = await fetch(`${deployed.url}${SHOPIFY_APP_PATHS.install}?shop=a.myshopify.com`, {
      redirect: 'manual',
      headers: { 'x-forwarded-host': 'old-name.example.test' },
    });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(
      `https://flowport.example.test${SHOPIFY_APP_PATHS.install}?shop=a.myshopify.com`,
    );
  });
});
