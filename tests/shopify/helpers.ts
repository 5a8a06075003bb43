// Driving the Shopify app install over real HTTP: a small cookie jar, the OAuth round trip
// through the sandbox's authorize page, and the signed requests Shopify would send.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { newId } from '../../api/src/ids.ts';
import { SANDBOX_MOUNT_PATH } from '../../api/src/sandbox/app.ts';
import { SANDBOX_APP_FILE, SHOPIFY_APP_PATHS, signOAuthQuery } from '../../api/src/lib/shopify-app.ts';
import type { TestServer } from '../helpers/runtime.ts';

export class CookieJar {
  readonly cookies = new Map<string, string>();
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attrs] = line.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === '';
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/** A fetch that keeps cookies and never follows redirects. */
export async function go(jar: CookieJar, url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (jar.cookies.size) headers.set('cookie', jar.header());
  const res = await fetch(url, { ...init, headers, redirect: 'manual' });
  jar.take(res);
  return res;
}

export function uniqueShop(prefix = 'install'): string {
  return `${prefix}-${newId('shop').slice(-10).toLowerCase()}.myshopify.com`;
}

export function sandboxApp(server: TestServer): { client_id: string; client_secret: string } {
  return JSON.parse(readFileSync(join(server.dataDir, SANDBOX_APP_FILE), 'utf8'));
}

export function absolute(server: TestServer, location: string | null): string {
  if (!location) throw new Error('no Location header');
  return new URL(location, server.url).toString();
}

/** Starts an install and answers the sandbox's authorize page; returns the callback URL Shopify redirects to. */
export async function authorize(
  server: TestServer,
  jar: CookieJar,
  shop: string,
  decision: 'install' | 'decline' = 'install',
  start = `${SHOPIFY_APP_PATHS.install}?shop=${shop}`,
): Promise<string> {
  // `start` is a path of Flowport, or an absolute URL (a callback that goes on to another round trip).
  const started = await go(jar, /^https?:/.test(start) ? start : `${server.url}${start}`);
  if (started.status !== 302) throw new Error(`install answered ${started.status}: ${await started.text()}`);
  const authorizeUrl = new URL(absolute(server, started.headers.get('location')));
  const page = await go(jar, authorizeUrl.toString());
  if (page.status !== 200) throw new Error(`authorize page answered ${page.status}: ${await page.text()}`);
  const form = new URLSearchParams();
  for (const k of ['client_id', 'scope', 'redirect_uri', 'state']) form.set(k, authorizeUrl.searchParams.get(k) ?? '');
  if (authorizeUrl.searchParams.getAll('grant_options[]').includes('per-user')) form.set('per_user', '1');
  form.set('decision', decision);
  const decided = await go(jar, authorizeUrl.toString(), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
  });
  if (decided.status !== 302) throw new Error(`authorize answered ${decided.status}`);
  return absolute(server, decided.headers.get('location'));
}

/** The whole install: returns the jar holding the merchant session. */
export async function install(server: TestServer, shop: string, jar = new CookieJar()): Promise<CookieJar> {
  const callback = await authorize(server, jar, shop);
  const done = await go(jar, callback);
  if (done.status !== 303) throw new Error(`callback answered ${done.status}: ${await done.text()}`);
  return jar;
}

/** A callback URL with some parameters changed and the hmac signed again with `secret`. */
export function resigned(callback: string, secret: string, change: Record<string, string | null>): string {
  const u = new URL(callback);
  for (const [k, v] of Object.entries(change)) {
    if (v === null) u.searchParams.delete(k);
    else u.searchParams.set(k, v);
  }
  u.searchParams.delete('hmac');
  u.searchParams.set('hmac', signOAuthQuery(secret, u.searchParams));
  return u.toString();
}

/** The csrf token of the merchant page's forms. */
export function csrfOf(html: string): string {
  const m = /name="csrf_token" value="([^"]+)"/.exec(html);
  if (!m?.[1]) throw new Error('no csrf token on the page');
  return m[1];
}

export function sandboxUrl(server: TestServer, shop: string, path: string): string {
  return `${server.url}${SANDBOX_MOUNT_PATH}/${shop}${path}`;
}

export async function setWorkflow(
  server: TestServer,
  shop: string,
  trigger: string,
  enabled: boolean,
  timestamp?: string,
): Promise<{ flowport_status: number }> {
  const res = await fetch(sandboxUrl(server, shop, '/flow/workflows'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ trigger, enabled, ...(timestamp ? { timestamp } : {}) }),
  });
  if (res.status !== 200) throw new Error(`workflows answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as { flowport_status: number };
}
