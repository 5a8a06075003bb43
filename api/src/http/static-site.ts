// Serves the built docs site (site/dist): directory pages, Markdown twins with
// text/markdown, llms.txt as text/plain, and the site's 404 page for misses.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { serveStatic } from '@hono/node-server/serve-static';
import type { Hono, MiddlewareHandler } from 'hono';
import type { AppEnv } from './types.ts';

const TYPES: Record<string, string> = {
  '.md': 'text/markdown; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
};

function fixContentType(): MiddlewareHandler<AppEnv> {
  return async function fixContentType(c, next) {
    await next();
    const path = c.req.path;
    const ext = Object.keys(TYPES).find((e) => path.endsWith(e));
    if (ext && c.res.status === 200) {
      const headers = new Headers(c.res.headers);
      headers.set('Content-Type', TYPES[ext] as string);
      c.res = new Response(c.res.body, { status: c.res.status, headers });
    }
  };
}

/** Written into the site directory by `npm run build:site`: the inputs' hash and the origin its absolute links use. */
export const SITE_STAMP_FILE = '.build-stamp.json';

/**
 * A warning line when the built site's absolute links (llms.txt, Markdown twins, canonical
 * links) point at another origin than this server's; null when they match or nothing says.
 */
export function siteOriginWarning(siteDir: string, publicUrl: string): string | null {
  let built: unknown;
  try {
    built = (JSON.parse(readFileSync(join(siteDir, SITE_STAMP_FILE), 'utf8')) as { origin?: unknown }).origin;
  } catch {
    return null;
  }
  const origin = new URL(publicUrl).origin;
  if (typeof built !== 'string' || built === origin) return null;
  return `warning: the docs site in ${siteDir} was built for ${built}: its llms.txt, Markdown twins and canonical links point there, not at ${origin}. Rebuild it with FLOWPORT_PUBLIC_URL=${origin} npm run build:site (npm start does this itself).`;
}

export function mountStaticSite(app: Hono<AppEnv>, siteDir: string): void {
  // /reference/api → /reference/api/ when that is a directory page.
  app.use('*', async (c, next) => {
    const p = c.req.path;
    if ((c.req.method === 'GET' || c.req.method === 'HEAD') && !p.endsWith('/') && !/\.[a-z0-9]+$/i.test(p)) {
      const dir = join(siteDir, p);
      if (dir.startsWith(siteDir) && existsSync(join(dir, 'index.html')) && statSync(dir).isDirectory()) {
        const url = new URL(c.req.url);
        return c.redirect(`${p}/${url.search}`, 301);
      }
    }
    return next();
  });
  app.use('*', fixContentType());
  // Made once the site exists: `npm start` builds a missing site in the background while the
  // API already answers (and serveStatic warns on stderr about a missing root).
  let files: MiddlewareHandler<AppEnv> | null = null;
  app.use('*', (c, next) => {
    // Dot files (the build stamp) are build bookkeeping, not pages.
    if (/\/\./.test(c.req.path)) return next();
    if (files === null) {
      if (!existsSync(siteDir)) return next();
      files = serveStatic({ root: siteDir });
    }
    return files(c, next);
  });
  app.notFound((c) => {
    const page = join(siteDir, '404.html');
    if (existsSync(page)) return c.html(readFileSync(page, 'utf8'), 404);
    if (!existsSync(siteDir)) {
      c.header('Retry-After', '30');
      return c.text(
        'The docs site is not built yet (npm start builds it in the background); try again in a minute.\n',
        503,
      );
    }
    return c.text('Not found', 404);
  });
}
