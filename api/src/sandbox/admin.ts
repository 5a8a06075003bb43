// The sandbox playing the Shopify admin for the embedded console (ADR 1450): a store's app page
// that frames Flowport as the admin does (`host`, `shop`, `embedded=1`), Shopify-managed
// installation (the scopes of shopify.app.toml, no OAuth redirect), the session tokens App Bridge
// hands the page (HS256 with the sandbox app's secret), the token exchange at the token endpoint,
// and stand-ins for App Bridge and Polaris web components so the console renders offline.
import { randomUUID } from 'node:crypto';
import type { Context, Hono } from 'hono';
import { jwtVerify, SignJWT } from 'jose';
import { SHOPIFY_ACCESS_SCOPES } from '../config.ts';
import { ID_TOKEN_TYPE, SANDBOX_MOUNT_PATH, SHOPIFY_APP_PATHS } from '../lib/shopify-app.ts';
import type { SandboxInstallState, SandboxShopifyApp } from './install.ts';

const SHOP_RE = /^[a-z0-9][a-z0-9-]{0,60}\.myshopify\.com$/;
/** A session token lives a minute, as Shopify's do. */
const ID_TOKEN_TTL_S = 60;
/** The sandbox store's one staff member. */
export const SANDBOX_STAFF_ID = '902541635';
/** Where the admin of a sandbox store lives, under the sandbox's mount. */
export const adminAppPath = (shop: string) => `/${shop}/admin/apps/flowport`;

function esc(v: unknown): string {
  return String(v ?? '').replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** Shopify's `host` parameter: the admin's address, base64url. */
export function hostParam(adminBase: string): string {
  return Buffer.from(adminBase.replace(/^https?:\/\//, '')).toString('base64url');
}

/** A session token for the store's staff member, as App Bridge's `shopify.idToken()` returns it. */
export async function signSessionToken(app: SandboxShopifyApp, shop: string, now = Date.now()): Promise<string> {
  const s = Math.floor(now / 1000);
  return new SignJWT({ dest: `https://${shop}`, sid: randomUUID() })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(`https://${shop}/admin`)
    .setAudience(app.clientId)
    .setSubject(SANDBOX_STAFF_ID)
    .setJti(randomUUID())
    .setIssuedAt(s)
    .setNotBefore(s)
    .setExpirationTime(s + ID_TOKEN_TTL_S)
    .sign(new TextEncoder().encode(app.clientSecret));
}

/**
 * The token endpoint's token exchange: the subject token must be a session token of this store for
 * this app, still valid, and the app installed there (managed installation). Null when it holds;
 * else Shopify's 400 answer.
 */
export async function refuseTokenExchange(
  app: SandboxShopifyApp,
  install: SandboxInstallState,
  shop: string,
  body: Record<string, string>,
): Promise<{ error: string; error_description: string } | null> {
  if (body.subject_token_type !== ID_TOKEN_TYPE)
    return { error: 'invalid_request', error_description: 'subject_token_type must be an id_token' };
  try {
    const { payload } = await jwtVerify(body.subject_token ?? '', new TextEncoder().encode(app.clientSecret), {
      algorithms: ['HS256'],
      audience: app.clientId,
      issuer: `https://${shop}/admin`,
    });
    if (payload.dest !== `https://${shop}`) throw new Error('dest');
  } catch {
    return { error: 'invalid_subject_token', error_description: 'The session token is invalid or expired' };
  }
  if (!install.managed.has(shop))
    return { error: 'invalid_request', error_description: 'The app is not installed on this store' };
  return null;
}

function adminChrome(shop: string, title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · ${esc(shop)} (sandbox Shopify admin)</title>
<style>body{margin:0;font-family:system-ui,sans-serif;color:#1a1a1a;background:#f1f1f1}
header{background:#1a1a1a;color:#fff;padding:.5rem 1rem;font-size:.95rem}main{padding:0}
.install{max-width:36rem;margin:2rem auto;background:#fff;padding:1rem 1.5rem;border-radius:.75rem}
button{font:inherit;padding:.5rem 1.25rem;border-radius:.4rem;border:1px solid #005e46;background:#005e46;color:#fff;min-height:2.5rem}
iframe{display:block;border:0;width:100%;height:calc(100vh - 2.6rem);background:#fff}</style></head>
<body><header>Sandbox Shopify admin · ${esc(shop)} · Apps › Flowport</header><main>${body}</main></body></html>`;
}

export function adminRoutes(app: Hono, install: SandboxInstallState, need: () => SandboxShopifyApp): void {
  // The store's app page: the managed install's prompt, or the app in its frame.
  app.get(adminAppPath(':shop'), (c) => {
    const shop = c.req.param('shop') ?? '';
    if (!SHOP_RE.test(shop)) return c.text('Unknown store.', 404);
    if (!install.managed.has(shop)) {
      const scopes = SHOPIFY_ACCESS_SCOPES.join(', ');
      return c.html(
        adminChrome(
          shop,
          'Install Flowport',
          `<div class="install"><h1>Install Flowport</h1><p>Shopify installs the app with the scopes in its configuration (${scopes ? `<code>${esc(scopes)}</code>` : 'no Admin API scopes; Flow triggers only'}); there is no redirect to the app.</p>
<form method="post" action="${SANDBOX_MOUNT_PATH}${adminAppPath(shop)}/install"><button type="submit">Install</button></form></div>`,
        ),
      );
    }
    const a = need();
    const adminBase = `${new URL(c.req.url).origin}${c.req.path.replace(/\/apps\/flowport$/, '')}`;
    const q = new URLSearchParams({ embedded: '1', host: hostParam(adminBase), shop });
    const src = `${a.appUrl.replace(/\/+$/, '')}${SHOPIFY_APP_PATHS.merchant}/console?${q.toString()}`;
    return c.html(
      adminChrome(shop, 'Flowport', `<iframe title="Flowport" name="app-iframe" src="${esc(src)}"></iframe>`),
    );
  });

  // Shopify-managed installation: the merchant approves in the admin; the app learns of it from
  // the first session token it exchanges.
  app.post(`${adminAppPath(':shop')}/install`, (c) => {
    const shop = c.req.param('shop') ?? '';
    if (!SHOP_RE.test(shop)) return c.text('Unknown store.', 404);
    install.managed.add(shop);
    return c.redirect(`${SANDBOX_MOUNT_PATH}${adminAppPath(shop)}`, 303);
  });

  // What App Bridge asks the admin for: a fresh session token for the framed app.
  app.post('/:shop/admin/session-token', async (c) => {
    const shop = c.req.param('shop') ?? '';
    if (!SHOP_RE.test(shop) || !install.managed.has(shop))
      return c.json({ error: 'The app is not installed on this store.' }, 404);
    return c.json({ id_token: await signSessionToken(need(), shop) });
  });

  app.get('/app-bridge.js', (c) => script(c, APP_BRIDGE_STAND_IN));
  app.get('/polaris.js', (c) => script(c, POLARIS_STAND_IN));
}

function script(c: Context, body: string): Response {
  c.header('Cache-Control', 'no-cache');
  return c.body(body, 200, { 'content-type': 'text/javascript; charset=utf-8' });
}

/**
 * App Bridge's stand-in: `shopify.idToken()` asks the sandbox admin (same machine) for a fresh
 * session token of the store the `host` parameter names; `shopify.config` as App Bridge has it.
 */
const APP_BRIDGE_STAND_IN = `(() => {
  const me = document.currentScript;
  const q = new URLSearchParams(location.search);
  const host = q.get('host') || sessionStorage.getItem('flowport-host') || '';
  if (host) sessionStorage.setItem('flowport-host', host);
  const pad = (s) => s.replace(/-/g, '+').replace(/_/g, '/');
  const admin = host ? new URL('http://' + atob(pad(host))) : null;
  const shop = admin ? admin.pathname.split('/').filter(Boolean).at(-2) : '';
  const base = new URL(me.src).origin;
  const meta = document.querySelector('meta[name="shopify-api-key"]');
  window.shopify = {
    config: { apiKey: meta ? meta.content : '', shop, host },
    async idToken() {
      const res = await fetch(base + (admin ? admin.pathname : '') + '/session-token', {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}',
      });
      if (!res.ok) throw new Error('The sandbox admin gave no session token (' + res.status + ').');
      return (await res.json()).id_token;
    },
    toast: { show(message) { const t = document.getElementById('flash'); if (t) t.textContent = message; } },
  };
})();
`;

/** Polaris web components' stand-in: the elements defined, plain light-DOM, minimal styles. */
const POLARIS_STAND_IN = `(() => {
  const names = ['s-page','s-section','s-table','s-button','s-link','s-banner','s-badge','s-stack','s-text','s-box','s-paragraph','s-heading'];
  for (const n of names) if (!customElements.get(n)) customElements.define(n, class extends HTMLElement {});
  const style = document.createElement('style');
  style.textContent = 's-page,s-section,s-box,s-stack,s-banner{display:block}s-section{background:var(--panel,#fff);border:1px solid var(--line,#ddd);border-radius:.75rem;padding:1rem;margin:1rem 0}s-banner{border-left:4px solid var(--accent,#0b6b5c);padding:.5rem 1rem;margin:1rem 0;background:var(--panel,#f6f6f6)}s-banner[tone=critical]{border-left-color:var(--danger,#a4161a)}s-badge{display:inline-block;padding:0 .5rem;border-radius:1rem;border:1px solid currentColor;font-size:.85rem}s-table{display:block;overflow-x:auto}';
  document.head.append(style);
})();
`;
