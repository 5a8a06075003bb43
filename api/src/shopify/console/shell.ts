// The embedded console's document (ADR 1450). Every document of the console is this shell: App
// Bridge and Polaris web components in its head (Shopify's CDN in production, the sandbox's
// stand-ins in sandbox mode), the app's client id as `shopify-api-key`, and one script of ours.
// That script asks App Bridge for a fresh session token for every request, loads the page's HTML
// with it, and posts forms with it: a POST answers where to go next (and a message), the script
// then GETs that page, so a reload repeats only the GET. Framed only by the store's admin.
import type { Context } from 'hono';
import { isSandbox } from '../../config.ts';
import type { Services } from '../../core/types.ts';
import type { AppEnv } from '../../http/types.ts';
import {
  APP_BRIDGE_CDN_URL,
  POLARIS_CDN_URL,
  SANDBOX_MOUNT_PATH,
  SHOPIFY_APP_PATHS,
  shopifyAppCredentials,
} from '../../lib/shopify-app.ts';
import { SHOP_DOMAIN_RE } from '../../services/shops.ts';
import { Html, html } from '../merchant/html.ts';

export const CONSOLE_PATH = `${SHOPIFY_APP_PATHS.merchant}/console`;
export const CONSOLE_SCRIPT_PATH = `${CONSOLE_PATH}/console.js`;

/** Who may frame the console: the store's own admin and admin.shopify.com (the sandbox's admin is this origin). */
export function frameAncestors(services: Services, shop: string | undefined): string {
  if (isSandbox(services.config)) return "'self'";
  const store = shop && SHOP_DOMAIN_RE.test(shop) ? ` https://${shop}` : '';
  return `https://admin.shopify.com${store}`;
}

export function consoleHeaders(c: Context<AppEnv>, services: Services): void {
  const sandbox = isSandbox(services.config);
  const cdn = sandbox ? '' : ' https://cdn.shopify.com';
  c.header('Cache-Control', 'no-store');
  c.header('Vary', 'Authorization');
  c.header('Referrer-Policy', 'same-origin');
  c.header(
    'Content-Security-Policy',
    `default-src 'none'; script-src 'self'${cdn}; style-src 'self' 'unsafe-inline'${cdn}; img-src 'self' data:${cdn}; font-src 'self'${cdn}; connect-src 'self'${cdn}; form-action 'self'; frame-ancestors ${frameAncestors(services, c.req.query('shop'))}; base-uri 'none'`,
  );
}

const STYLE = `
:root{color-scheme:light;--accent:#0b6b5c;--bg:#f1f1f1;--fg:#1a1a1a;--muted:#4a4f5a;--line:#d0d3da;--panel:#fff;--danger:#a4161a;
font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;line-height:1.45}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg)}
a{color:var(--accent)}:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
nav ul{list-style:none;display:flex;flex-wrap:wrap;gap:.25rem 1rem;margin:0;padding:.5rem 1rem;background:var(--panel);border-bottom:1px solid var(--line)}
nav a[aria-current=page]{font-weight:700;color:var(--fg)}
main{max-width:72rem;margin:0 auto;padding:.5rem 1rem 2rem}
h1{font-size:1.5rem;margin:.75rem 0;overflow-wrap:anywhere}p,li{overflow-wrap:anywhere}h2{font-size:1.15rem;margin:.25rem 0 .5rem}
.muted{color:var(--muted)}table{border-collapse:collapse;width:100%;font-size:.92rem}
th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.88em;overflow-wrap:anywhere}
.fields{display:grid;gap:.25rem 1rem;grid-template-columns:repeat(auto-fit,minmax(11rem,1fr));align-items:end}
label{display:block;font-weight:600;margin:.4rem 0 .15rem}label.inline{display:inline;font-weight:400}input[type=checkbox]{width:auto;min-height:auto}
input,select{font:inherit;color:var(--fg);background:#fff;border:1px solid var(--muted);border-radius:.35rem;padding:.35rem .5rem;min-height:2.5rem;width:100%;max-width:100%}
button{font:inherit;min-height:2.5rem;padding:.35rem 1rem;border-radius:.35rem;border:1px solid var(--accent);background:var(--accent);color:#fff;font-weight:600;cursor:pointer}
button.secondary{background:#fff;color:var(--accent)}button.danger{background:#fff;color:var(--danger);border-color:var(--danger)}
form.inline{display:inline-block;margin:.15rem .25rem .15rem 0}.actions{display:flex;flex-wrap:wrap;gap:.5rem;margin:.5rem 0}
dl{display:grid;grid-template-columns:minmax(8rem,max-content) 1fr;gap:.25rem 1rem;margin:.5rem 0}dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}dd dl{margin:0}summary{cursor:pointer;color:var(--accent);font-weight:600;min-height:2rem}
@media (max-width:40rem){table.stack thead{position:absolute;left:-9999px}table.stack tr{display:block;border-bottom:1px solid var(--line);padding:.25rem 0}
table.stack td,table.stack th{display:block;border:0;padding:.1rem .25rem}table.stack td[data-label]::before{content:attr(data-label) ": ";font-weight:600}dl{grid-template-columns:1fr}}
`;

/** The console's navigation: one entry per page. */
export const CONSOLE_NAV: readonly { path: string; label: string }[] = [
  { path: '', label: 'Overview' },
  { path: '/events', label: 'Events' },
  { path: '/recover', label: 'Recover' },
  { path: '/refused', label: 'Refused requests' },
  { path: '/endpoints', label: 'Endpoints' },
  { path: '/grants', label: 'Grants' },
  { path: '/alerts', label: 'Alerts' },
  { path: '/activity', label: 'Activity' },
];

/** The shell every console document is: head scripts, navigation, and the page loaded into it. */
export function consoleShell(c: Context<AppEnv>, services: Services): Response {
  consoleHeaders(c, services);
  const app = shopifyAppCredentials(services.config);
  const sandbox = isSandbox(services.config);
  const bridge = sandbox ? `${SANDBOX_MOUNT_PATH}/app-bridge.js` : APP_BRIDGE_CDN_URL;
  const polaris = sandbox ? `${SANDBOX_MOUNT_PATH}/polaris.js` : POLARIS_CDN_URL;
  const nav = CONSOLE_NAV.map((n) => html`<li><a href="${CONSOLE_PATH}${n.path}">${n.label}</a></li>`);
  const doc = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="shopify-api-key" content="${app?.clientId ?? ''}">
<script src="${bridge}"></script>
<script src="${polaris}"></script>
<title>Flowport</title><style>${new Html(STYLE)}</style></head>
<body><nav aria-label="Flowport"><ul>${nav}</ul></nav>
<main id="main"><div id="flash" role="status" aria-live="polite"></div><div id="console" aria-busy="true"><h1>Flowport</h1><p>Loading…</p>
<noscript><p>The console runs inside the Shopify admin, which needs JavaScript. Outside the admin, use <a href="${SHOPIFY_APP_PATHS.merchant}">the merchant page</a>.</p></noscript></div></main>
<script src="${CONSOLE_SCRIPT_PATH}"></script></body></html>`;
  return c.html(doc.value);
}

/** The console's one script (see the file's header). */
export const CONSOLE_SCRIPT = `(() => {
  const base = ${JSON.stringify(CONSOLE_PATH)};
  const view = document.getElementById('console');
  const flash = document.getElementById('flash');
  const q = new URLSearchParams(location.search);
  const shop = q.get('shop') || sessionStorage.getItem('flowport-shop') || '';
  if (shop) sessionStorage.setItem('flowport-shop', shop);
  const within = (u) => u.origin === location.origin && (u.pathname === base || u.pathname.startsWith(base + '/'));
  const withShop = (href) => { const u = new URL(href, location.href); if (shop && !u.searchParams.has('shop')) u.searchParams.set('shop', shop); return u; };
  async function call(url, init = {}) {
    const token = await window.shopify.idToken();
    return fetch(url, { ...init, headers: { ...(init.headers || {}), authorization: 'Bearer ' + token } });
  }
  function showFlash(out) {
    flash.replaceChildren();
    if (!out || !out.message) return;
    const b = document.createElement('s-banner');
    b.setAttribute('tone', out.tone || 'success');
    const p = document.createElement('p'); p.textContent = out.message; b.append(p);
    if (out.shown_once) {
      const id = 'shown-once';
      const l = document.createElement('label'); l.htmlFor = id; l.textContent = out.shown_once.label;
      const i = document.createElement('input'); i.id = id; i.readOnly = true; i.value = out.shown_once.value;
      const n = document.createElement('p'); n.textContent = 'Shown once: copy it now. Flowport keeps only a hash or an encrypted copy.';
      b.append(l, i, n);
    }
    flash.append(b);
  }
  function markNav() {
    for (const a of document.querySelectorAll('nav a')) {
      const p = new URL(a.href).pathname;
      const here = location.pathname === p || (p !== base && location.pathname.startsWith(p + '/'));
      if (here) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
    }
  }
  async function render(url, out) {
    view.setAttribute('aria-busy', 'true');
    try {
      const res = await call(withShop(url));
      view.innerHTML = await res.text();
    } catch (e) {
      view.innerHTML = '<h1>Flowport</h1><p>The console could not load this page.</p>';
    }
    view.removeAttribute('aria-busy');
    const h = view.querySelector('h1');
    document.title = (h ? h.textContent : 'Flowport') + ' · Flowport';
    markNav();
    showFlash(out);
  }
  function go(url, out) { history.pushState(null, '', withShop(url)); return render(url, out); }
  document.addEventListener('click', (e) => {
    const a = e.target.closest && e.target.closest('a[href]');
    if (!a || a.target || e.ctrlKey || e.metaKey) return;
    const u = new URL(a.href, location.href);
    if (!within(u)) return;
    e.preventDefault(); go(u.href);
  });
  document.addEventListener('submit', async (e) => {
    const f = e.target;
    const action = new URL(f.getAttribute('action') || location.href, location.href);
    if (!within(action)) return;
    e.preventDefault();
    const data = new URLSearchParams(new FormData(f, e.submitter));
    if ((f.getAttribute('method') || 'get').toLowerCase() === 'get') {
      for (const [k, v] of [...data]) if (v === '') data.delete(k);
      action.search = data.toString();
      return go(action.href);
    }
    for (const b of f.querySelectorAll('button')) b.disabled = true;
    const res = await call(withShop(action), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: data });
    if ((res.headers.get('content-type') || '').includes('json')) {
      const out = await res.json();
      return go(out.location, out);
    }
    view.innerHTML = await res.text();
  });
  addEventListener('popstate', () => render(location.href));
  render(location.href);
})();
`;
