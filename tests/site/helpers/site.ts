// Shared helpers for the docs-site checks: make sure site/dist is built from
// the current inputs (once, even with parallel test workers), list its pages,
// and read its files.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { buildSite } from '../../../scripts/docs/build-site.ts';
import { DIST_DIR, REPO_ROOT, SITE_ROOT, siteOrigin } from '../../../scripts/docs/lib/site-paths.ts';
import { siteIsFresh } from '../../../scripts/docs/lib/site-stamp.ts';

export { DIST_DIR, REPO_ROOT, siteOrigin };

const LOCK = join(SITE_ROOT, '.build-lock');

/**
 * Holds the site build lock (a directory, so parallel test workers exclude each other) until the
 * returned function is called: builds write the assembled content under site/ (generate.ts).
 */
export async function withBuildLock(): Promise<() => void> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      return () => rmdirSync(LOCK);
    } catch {
      if (Date.now() > deadline) throw new Error(`Timed out waiting for ${LOCK}; remove it if no build is running.`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/**
 * `npm test` builds the site before vitest runs, so this is normally a no-op.
 * Running a site test file on its own (or after editing content) rebuilds once;
 * the build lock keeps parallel workers from building at the same time.
 */
export async function ensureSiteBuilt(): Promise<void> {
  if (siteIsFresh()) return;
  const unlock = await withBuildLock();
  try {
    if (!siteIsFresh()) buildSite({ quiet: true });
  } finally {
    unlock();
  }
}

function walk(dir: string, out: string[]): string[] {
  for (const name of readdirSync(dir).sort()) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) walk(full, out);
    else out.push(full);
  }
  return out;
}

/** Every file in site/dist, as root-relative URL paths of files (`/start/quickstart/index.html`). */
export function distFiles(): string[] {
  return walk(DIST_DIR, []).map((f) => `/${relative(DIST_DIR, f)}`);
}

/** Every docs page's URL path (`/`, `/start/quickstart/`), excluding the 404 page. */
export function htmlPages(): string[] {
  return distFiles()
    .filter((f) => f.endsWith('/index.html'))
    .map((f) => f.slice(0, -'index.html'.length));
}

/** The twin path for a page path: `/` → `/index.md`, `/a/b/` → `/a/b.md`. */
export function twinOf(pagePath: string): string {
  return pagePath === '/' ? '/index.md' : `${pagePath.slice(0, -1)}.md`;
}

export function readDist(urlPath: string): string {
  return readFileSync(join(DIST_DIR, decodeURIComponent(urlPath)), 'utf8');
}

/** The file a URL path would be served from, or null. Mirrors the server: `/x/` → `/x/index.html`. */
export function resolveInDist(urlPath: string): string | null {
  const clean = decodeURIComponent(urlPath.split(/[?#]/)[0] as string);
  const candidates = clean.endsWith('/') ? [`${clean}index.html`] : [clean, `${clean}/index.html`];
  for (const c of candidates) {
    const full = join(DIST_DIR, c);
    if (full.startsWith(DIST_DIR) && existsSync(full) && statSync(full).isFile()) return c;
  }
  return null;
}

/** ids an anchor can target on an HTML page. */
export function anchorsOf(html: string): Set<string> {
  const ids = new Set<string>();
  for (const m of html.matchAll(/\s(?:id|name)="([^"]+)"/g)) ids.add(decodeEntities(m[1] as string));
  return ids;
}

export function decodeEntities(s: string): string {
  return s
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');
}
