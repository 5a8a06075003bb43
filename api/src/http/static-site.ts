// Serves the built docs site (site/dist): directory pages, Markdown twins with
// text/markdown, llms.txt as text/plain, and the site's 404 page for misses.
//
// For agents (the Agent-Friendly Documentation Spec; tests/site/afdocs.test.ts scores it):
// - a page asked for with `Accept: text/markdown` answers its Markdown twin (the same bytes as
//   `<page>.md`); every page and twin response says `Vary: Accept`;
// - a missing twin (or a missing page asked for as Markdown) answers a plain-text 404, not the
//   HTML 404 page;
// - every file has an ETag (size and modification time) and Cache-Control: pages, twins and
//   llms.txt revalidate on every use; Astro's content-hashed assets (/_astro/) never change.
// The site is built once for any origin: absolute URLs in it start with DOCS_BUILD_ORIGIN, which
// is replaced here by the origin of the configured public URL (FLOWPORT_PUBLIC_URL).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, resolve, sep } from 'node:path';
import type { Context, Hono } from 'hono';
import { docsServed, withPublicOrigin } from '../docs-paths.ts';
import type { AppEnv } from './types.ts';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.xml': 'application/xml; charset=utf-8',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
};

/** Pages, twins and indexes: cached, but checked with the ETag on every use (they change on a rebuild). */
export const REVALIDATE = 'public, max-age=0, must-revalidate';
/** Astro's build output under /_astro/ has a content hash in every file name. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * Files whose absolute URLs name the build origin (DOCS_BUILD_ORIGIN), rewritten to this server's as
 * served: pages, twins, llms.txt, the sitemap, and JSON (the OpenAPI document's recorded examples).
 */
const WITH_ORIGIN = new Set(['.html', '.md', '.txt', '.xml', '.json']);

/**
 * True when the Accept header ranks text/markdown above text/html (a client that lists only
 * Markdown, or gives it a higher q). Browsers never ask for Markdown, so they keep HTML.
 */
export function prefersMarkdown(accept: string | undefined): boolean {
  if (!accept) return false;
  const q = new Map<string, number>();
  for (const part of accept.split(',')) {
    const [type, ...params] = part.trim().toLowerCase().split(';');
    if (!type) continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = qParam ? Number(qParam.slice(2)) : 1;
    q.set(type.trim(), Number.isFinite(value) ? value : 0);
  }
  const md = q.get('text/markdown') ?? q.get('text/x-markdown') ?? 0;
  if (md <= 0) return false;
  const html = q.get('text/html') ?? q.get('application/xhtml+xml') ?? 0;
  return md >= html;
}

interface Found {
  file: string;
  size: number;
  mtimeMs: number;
}

/** The file a URL path names inside siteDir (a directory means its index.html); null outside it or missing. */
function findFile(siteDir: string, urlPath: string): Found | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  // Dot files (the build stamp) are build bookkeeping, not pages.
  if (decoded.includes('\0') || /(^|\/)\./.test(decoded)) return null;
  let file = resolve(siteDir, `.${decoded.startsWith('/') ? decoded : `/${decoded}`}`);
  if (file !== siteDir && !file.startsWith(siteDir + sep)) return null;
  try {
    let st = statSync(file);
    if (st.isDirectory()) {
      file = join(file, 'index.html');
      st = statSync(file);
    }
    return st.isFile() ? { file, size: st.size, mtimeMs: st.mtimeMs } : null;
  } catch {
    return null;
  }
}

/** `/` → `/index.md`, `/start/quickstart/` → `/start/quickstart.md`; null for paths that are not pages. */
function twinPathOf(pagePath: string): string | null {
  if (pagePath === '/') return '/index.md';
  if (!pagePath.endsWith('/')) return null;
  return `${pagePath.slice(0, -1)}.md`;
}

function notFoundText(c: Context<AppEnv>, message: string): Response {
  return c.body(message, 404, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Cache-Control': 'no-store',
    Vary: 'Accept',
  });
}

function sendFile(c: Context<AppEnv>, found: Found, negotiated: boolean, publicUrl: string): Response {
  const ext = extname(found.file);
  const etag = `"${found.size.toString(16)}-${Math.trunc(found.mtimeMs).toString(16)}"`;
  const headers: Record<string, string> = {
    'Content-Type': TYPES[ext] ?? 'application/octet-stream',
    ETag: etag,
    'Cache-Control': c.req.path.startsWith('/_astro/') ? IMMUTABLE : REVALIDATE,
    'Last-Modified': new Date(found.mtimeMs).toUTCString(),
  };
  // A page and its twin are two representations of one resource: caches must key on Accept.
  if (negotiated || ext === '.md' || ext === '.html') headers.Vary = 'Accept';
  if (negotiated) headers['Content-Location'] = twinPathOf(c.req.path) as string;
  const ifNoneMatch = c.req.header('if-none-match');
  if (ifNoneMatch?.split(',').some((t) => t.trim() === etag || t.trim() === '*')) {
    return c.body(null, 304, headers);
  }
  let body = readFileSync(found.file);
  if (WITH_ORIGIN.has(ext)) body = Buffer.from(withPublicOrigin(body.toString(), publicUrl));
  headers['Content-Length'] = String(body.byteLength);
  if (c.req.method === 'HEAD') return c.body(null, 200, headers);
  return c.body(body, 200, headers);
}

export function mountStaticSite(app: Hono<AppEnv>, siteDir: string, publicUrl: string): void {
  const root = resolve(siteDir);
  app.on(['GET', 'HEAD'], '*', (c, next) => {
    // `npm start` builds a missing site in the background while the API already answers; only a
    // complete build is served (its stamp, docs-paths.ts), never pages of an interrupted one.
    if (!docsServed(root)) return next();
    const p = c.req.path;
    const found = findFile(root, p);
    // /reference/api → /reference/api/ when that is a directory page.
    if (found && !p.endsWith('/') && found.file.endsWith(`${sep}index.html`) && !p.endsWith('index.html')) {
      const url = new URL(c.req.url);
      return c.redirect(`${p}/${url.search}`, 301);
    }
    const wantsMarkdown = prefersMarkdown(c.req.header('accept'));
    const twin = twinPathOf(p);
    if (wantsMarkdown && twin && found?.file.endsWith('.html')) {
      const md = findFile(root, twin);
      if (md) return sendFile(c, md, true, publicUrl);
    }
    if (found) return sendFile(c, found, false, publicUrl);
    if (p.endsWith('.md') || (wantsMarkdown && !/\.[a-z0-9]+$/i.test(p))) {
      return notFoundText(
        c,
        `No Markdown page at ${p}. Every page's Markdown twin is listed in /llms.txt (add .md to a page's path, or ask for a page with Accept: text/markdown).\n`,
      );
    }
    return next();
  });
  app.notFound((c) => {
    if (!docsServed(root)) {
      c.header('Retry-After', '30');
      return c.text(
        'The docs site is not built yet (npm start builds it in the background); try again in a minute.\n',
        503,
      );
    }
    const page = join(root, '404.html');
    if (existsSync(page)) {
      return c.html(withPublicOrigin(readFileSync(page, 'utf8'), publicUrl), 404, { 'Cache-Control': 'no-store' });
    }
    return c.text('Not found', 404);
  });
}
