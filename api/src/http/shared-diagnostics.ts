// GET /shared/diagnostics/<token>[.json]: a frozen diagnostics bundle, readable
// without a grant by whoever holds the link, until it expires. HTML for people,
// JSON for tools (`.json` suffix or `Accept: application/json`). The token is
// looked up by its SHA-256 only; unknown and expired links say so plainly.
import { Hono } from 'hono';
import { AppError } from '../errors/problem.ts';
import type { AppEnv } from './types.ts';
import type { Services } from '../core/types.ts';
import { findDiagnosticsShare, SHARED_DIAGNOSTICS_PATH } from '../intents/kinds/diagnostics-share.ts';

export { SHARED_DIAGNOSTICS_PATH };

const TOKEN_RE = /^[A-Za-z0-9_-]{20,100}$/;

const esc = (v: unknown) =>
  String(v ?? '').replace(
    /[&<>"']/g,
    (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] as string,
  );

function table(rows: Record<string, unknown>[]): string {
  if (rows.length === 0) return '<p>None.</p>';
  const cols = Object.keys(rows[0] as object);
  const head = cols.map((c) => `<th scope="col">${esc(c)}</th>`).join('');
  const body = rows
    .map(
      (r) =>
        `<tr>${cols.map((c) => `<td>${esc(typeof r[c] === 'object' && r[c] !== null ? JSON.stringify(r[c]) : r[c])}</td>`).join('')}</tr>`,
    )
    .join('');
  return `<div class="scroll"><table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table></div>`;
}

function page(title: string, main: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow"><title>${esc(title)}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#1b1b1b}
table{border-collapse:collapse;font-size:13px}th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}
.scroll{overflow-x:auto}.ok{color:#0a6b2d}.bad{color:#a40e26}code{background:#f3f3f3;padding:0 .2rem}</style></head>
<body><main>${main}</main></body></html>`;
}

// biome-ignore lint/suspicious/noExplicitAny: the bundle is stored JSON rendered generically.
function renderBundle(b: any, jsonHref: string): string {
  // Bundles frozen before the checks were get_diagnostics' own carry `ok` instead of `status`.
  const readiness = (
    b.readiness as { check: string; status?: 'pass' | 'warn' | 'fail'; ok?: boolean; detail: string }[]
  )
    .map((r) => {
      const ok = r.status ? r.status === 'pass' : r.ok === true;
      const label = r.status === 'warn' ? 'Warning' : ok ? 'OK' : 'Attention';
      return `<li class="${ok ? 'ok' : 'bad'}"><strong>${label}</strong> ${esc(r.check)}: ${esc(r.detail)}</li>`;
    })
    .join('');
  const endpoints = (b.endpoints as Record<string, unknown>[]).map(({ config, ...rest }) => ({ ...rest, config }));
  return page(
    `Flowport diagnostics: ${b.shop.domain}`,
    `<h1>Flowport diagnostics for ${esc(b.shop.domain)}</h1>
<p>Frozen at ${esc(b.generated_at)}; this link expires at ${esc(b.expires_at)}. Share id <code>${esc(b.share_id)}</code>.
Machine-readable: <a href="${esc(jsonHref)}">JSON</a>.</p>
<p>Shop plan ${esc(b.shop.plan)}, Shopify connection <strong>${esc(b.shop.connection_status)}</strong>${b.shop.sandbox ? ' (sandbox)' : ''}.</p>
<h2>Readiness</h2><ul>${readiness}</ul>
<h2>Support codes</h2><p>${(b.support_codes as string[]).map((c) => `<code>${esc(c)}</code>`).join(' ') || 'None.'}</p>
<h2>Endpoints</h2>${table(endpoints)}
<h2>Events needing attention</h2>${table(b.problem_events)}
<h2>Recent receipts</h2>${table(b.receipts)}
<h2>What this bundle contains</h2><ul>${(b.included as string[]).map((i) => `<li>${esc(i)}</li>`).join('')}</ul>
<h2>What it never contains</h2><ul>${(b.excluded as string[]).map((i) => `<li>${esc(i)}</li>`).join('')}</ul>`,
  );
}

export function sharedDiagnosticsRoutes(getServices: () => Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get('/:token', async (c) => {
    const services = getServices();
    const raw = c.req.param('token');
    const asJson = raw.endsWith('.json') || /application\/json/.test(c.req.header('accept') ?? '');
    const token = raw.endsWith('.json') ? raw.slice(0, -5) : raw;
    c.header('Cache-Control', 'no-store');
    c.header('X-Robots-Tag', 'noindex, nofollow');
    c.header('Referrer-Policy', 'no-referrer');
    const row = TOKEN_RE.test(token) ? await findDiagnosticsShare(services, token) : undefined;
    const now = services.now();
    const gone = row && (row.revoked_at !== null || Number(row.expires_at) <= now);
    if (!row || gone) {
      const status = row ? 410 : 404;
      const message = row
        ? 'This diagnostics link has expired or was revoked. Ask the merchant to share a fresh one.'
        : 'No diagnostics share matches this link. Check that the whole link was copied.';
      // The JSON form refuses like every other machine surface: problem+json, catalog code, docs URL.
      if (asJson) throw new AppError(row ? 'diagnostics_share_gone' : 'not_found', { detail: message });
      return c.html(
        page('Flowport diagnostics', `<h1>Diagnostics link unavailable</h1><p>${esc(message)}</p>`),
        status,
      );
    }
    if (asJson) {
      return new Response(row.bundle_json, {
        status: 200,
        headers: { 'Content-Type': 'application/json; charset=utf-8', ...Object.fromEntries(c.res.headers) },
      });
    }
    return c.html(renderBundle(JSON.parse(row.bundle_json), `${SHARED_DIAGNOSTICS_PATH}/${token}.json`));
  });
  return app;
}
