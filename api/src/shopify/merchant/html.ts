// Server-rendered HTML for the merchant page and the install path's pages: one layout in the
// docs site's look (its teal accent and type, light and dark), no JavaScript needed, WCAG AA.
// Every page is built from escaped text through `html`; nothing user-supplied is inserted raw.
import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import { DOCS_PATHS, errorDocsPath, joinUrl } from '../../docs-paths.ts';
import { ERROR_CATALOG } from '../../errors/catalog.ts';
import type { AppError } from '../../errors/problem.ts';
import type { AppEnv } from '../../http/types.ts';
import { SHOPIFY_APP_PATHS } from '../../lib/shopify-app.ts';

/** Text made safe for HTML content and attribute values. */
export function esc(value: unknown): string {
  return String(value ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** Already-safe HTML (from `html` or a renderer here). */
export class Html {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

/** Tagged template: interpolated values are escaped unless they are Html (or arrays of Html). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  values.forEach((v, i) => {
    const part = Array.isArray(v)
      ? v.map((x) => (x instanceof Html ? x.value : esc(x))).join('')
      : v instanceof Html
        ? v.value
        : esc(v);
    out += part + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

const DATE = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });

/** A timestamp in words a merchant reads ("27 Nov 2026, 14:05 UTC"); the value as given when it is not a date. */
export function dateInWords(value: string | number): string {
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? String(value) : `${DATE.format(d)} UTC`;
}

/** A timestamp in words, with the machine-readable value in a <time>; a dash when there is none. */
export function when(value: string | number | null | undefined): Html {
  if (value === null || value === undefined || value === '') return html`—`;
  const d = new Date(typeof value === 'number' ? value : String(value));
  if (Number.isNaN(d.getTime())) return html`${String(value)}`;
  return html`<time datetime="${d.toISOString()}">${dateInWords(d.getTime())}</time>`;
}

const STYLE = `
:root{color-scheme:light dark;--accent:#0b6b5c;--accent-low:#c7f1e7;--bg:#fff;--fg:#17181c;--muted:#4b4f5a;--line:#d0d3da;--panel:#f6f7f9;--danger:#a4161a;
font-family:system-ui,-apple-system,"Segoe UI",Roboto,Ubuntu,Cantarell,"Noto Sans",sans-serif;line-height:1.5}
@media (prefers-color-scheme:dark){:root{--accent:#5fd3bc;--accent-low:#06342d;--bg:#17181c;--fg:#eceef2;--muted:#b5b9c4;--line:#3a3d46;--panel:#22242a;--danger:#ff8a8a}}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg)}
a{color:var(--accent)}a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:var(--bg);padding:.5rem}
header{border-bottom:1px solid var(--line);padding:.75rem 1.25rem;display:flex;flex-wrap:wrap;gap:.75rem;align-items:center;justify-content:space-between}
header .brand{font-weight:700;color:var(--fg);text-decoration:none;font-size:1.15rem}
main{max-width:64rem;margin:0 auto;padding:1.25rem}
h1{font-size:1.75rem;margin:.5rem 0 1rem;overflow-wrap:break-word}h2{font-size:1.3rem;margin:2rem 0 .75rem;border-bottom:1px solid var(--line);padding-bottom:.25rem}
.muted{color:var(--muted)}.card{background:var(--panel);border:1px solid var(--line);border-radius:.5rem;padding:1rem;margin:1rem 0}
.notice{border-left:4px solid var(--accent)}.error{border-left:4px solid var(--danger)}
.table-wrap{overflow-x:auto}table{border-collapse:collapse;width:100%;font-size:.95rem}th,td{text-align:left;padding:.45rem .6rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-weight:600}code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em;overflow-wrap:anywhere}
form.inline{display:inline}label{display:block;font-weight:600;margin:.5rem 0 .2rem}
input,select{font:inherit;color:var(--fg);background:var(--bg);border:1px solid var(--muted);border-radius:.35rem;padding:.4rem .5rem;min-height:2.5rem;max-width:100%}
input[type=text],input[readonly]{width:100%}
button{font:inherit;min-height:2.5rem;padding:.4rem 1rem;border-radius:.35rem;border:1px solid var(--accent);background:var(--accent);color:var(--bg);font-weight:600;cursor:pointer}
button.secondary{background:transparent;color:var(--accent)}button.danger{background:transparent;color:var(--danger);border-color:var(--danger)}
.fields{display:grid;gap:.25rem 1rem;grid-template-columns:repeat(auto-fit,minmax(12rem,1fr));align-items:end}
.badge{display:inline-block;padding:0 .5rem;border-radius:1rem;border:1px solid currentColor;font-size:.85rem}
@media (max-width:40rem){table.stack thead{position:absolute;left:-9999px}table.stack tr{display:block;border-bottom:1px solid var(--line);padding:.35rem 0}
table.stack td,table.stack th{display:block;border:0;padding:.1rem .25rem}table.stack [data-label]::before{content:attr(data-label) ": ";font-weight:600}table.stack td.none{display:none}}
`;

/**
 * The page's only script, allowed by its hash: progressive enhancement for "copy" buttons (hidden
 * until this runs). Without JavaScript the value stays in a read-only field to select and copy.
 */
const COPY_SCRIPT = `for(const b of document.querySelectorAll('button[data-copy]')){b.hidden=false;b.addEventListener('click',async()=>{const f=document.getElementById(b.dataset.copy);if(!f)return;try{await navigator.clipboard.writeText(f.value);b.textContent='Copied';}catch{f.select();}});}`;
const COPY_SCRIPT_HASH = `'sha256-${createHash('sha256').update(COPY_SCRIPT).digest('base64')}'`;

export function page(
  c: Context<AppEnv>,
  opts: { title: string; body: Html; header?: Html; status?: number },
): Response {
  c.header('Cache-Control', 'no-store');
  c.header('X-Frame-Options', 'DENY');
  // same-origin, not no-referrer: with no-referrer Chromium sends `Origin: null` on the page's own form posts.
  c.header('Referrer-Policy', 'same-origin');
  c.header(
    'Content-Security-Policy',
    `default-src 'none'; style-src 'unsafe-inline'; script-src ${COPY_SCRIPT_HASH}; form-action 'self' https:; frame-ancestors 'none'; base-uri 'none'`,
  );
  const doc = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${opts.title} · Flowport</title><style>${new Html(STYLE)}</style></head>
<body><a class="skip" href="#main">Skip to content</a>
<header><a class="brand" href="/merchant">Flowport</a>${opts.header ?? new Html('')}</header>
<main id="main">${opts.body}</main><script>${new Html(COPY_SCRIPT)}</script></body></html>`;
  return c.html(doc.value, (opts.status ?? 200) as 200);
}

/** A refusal as a page: its stable code, what happened, what to do, and the code's docs page. */
export function errorPage(c: Context<AppEnv>, publicUrl: string, err: AppError): Response {
  const def = ERROR_CATALOG[err.code];
  const docs = joinUrl(publicUrl, errorDocsPath(err.code));
  return page(c, {
    title: def.title,
    status: def.status,
    body: html`<h1>${def.title}</h1>
<div class="card error" role="alert"><p>${err.message}</p>
<p>Error code: <code>${err.code}</code></p></div>
<h2>What to do</h2><p>${def.fix}</p>
<p><a href="${docs}">Read about <code>${err.code}</code></a> · <a href="${joinUrl(publicUrl, DOCS_PATHS.installOnAStore)}">Install on a store</a></p>`,
  });
}

/**
 * The sign-in page: a store's domain, then Shopify's sign-in. `returnTo` (only ever Flowport's own
 * authorize path, checked by the caller) is where the sign-in goes back to: the MCP consent page.
 */
export function signInPage(
  c: Context<AppEnv>,
  publicUrl: string,
  opts: { status?: number; returnTo?: string } = {},
): Response {
  return page(c, {
    title: 'Sign in',
    status: opts.status ?? 200,
    body: html`<h1>${opts.returnTo ? 'Sign in to another store' : 'Sign in to Flowport'}</h1>
<p>${opts.returnTo ? 'Sign in with the store you want to connect the MCP client to; you then come back to the consent page.' : 'Flowport hands events from outside systems to Shopify Flow. Sign in with the store the app is installed on; Shopify asks you to confirm.'}</p>
<form method="get" action="${SHOPIFY_APP_PATHS.merchant}/sign-in" class="card"><label for="shop">Store domain</label>
<input id="shop" name="shop" type="text" required pattern="[a-z0-9][a-z0-9\\-]*\\.myshopify\\.com" placeholder="example.myshopify.com" autocomplete="off">
${opts.returnTo ? html`<input type="hidden" name="return_to" value="${opts.returnTo}">` : ''}<p><button type="submit">Sign in with Shopify</button></p></form>
<p>Not installed yet? <a href="${joinUrl(publicUrl, DOCS_PATHS.installOnAStore)}">Install Flowport on a store</a>.</p>`,
  });
}
