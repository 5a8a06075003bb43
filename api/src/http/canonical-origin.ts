// One canonical origin for the pages that set or read browser cookies across a round trip (issue
// 40 point 10, ADR 1102): the Shopify install and sign-in (the OAuth state cookie, read back at the
// callback Shopify sends to the public URL), the merchant page (its session cookie) and the OAuth
// server's consent page. A cookie only comes back to the host that set it, so a GET to one of them
// on another host (127.0.0.1 where the public URL says localhost, a bare IP, an old domain) is
// redirected to the same path and query on the public URL before anything is set.
//
// The browser's host is the `X-Forwarded-Host` a proxy in front adds, else `Host`: a proxy that
// rewrites `Host` must pass the original one in either header, or these pages would redirect to
// themselves.
import type { MiddlewareHandler } from 'hono';
import { OAUTH_PATHS } from '../oauth/metadata.ts';
import { SHOPIFY_APP_PATHS } from '../lib/shopify-app.ts';
import type { AppEnv } from './types.ts';

/** The pages served only on the public URL's host (exact paths). */
export const CANONICAL_ORIGIN_PATHS: readonly string[] = [
  SHOPIFY_APP_PATHS.install,
  SHOPIFY_APP_PATHS.oauthCallback,
  SHOPIFY_APP_PATHS.merchant,
  `${SHOPIFY_APP_PATHS.merchant}/sign-in`,
  OAUTH_PATHS.authorize,
];

/** `host[:port]` lowercased, without the scheme's default port. */
function normalHost(protocol: string, host: string): string | null {
  try {
    return new URL(`${protocol}//${host}`).host;
  } catch {
    return null;
  }
}

export function canonicalOrigin(publicUrl: string): MiddlewareHandler<AppEnv> {
  const target = new URL(publicUrl);
  const paths = new Set(CANONICAL_ORIGIN_PATHS);
  return async function canonicalOriginMiddleware(c, next) {
    if ((c.req.method !== 'GET' && c.req.method !== 'HEAD') || !paths.has(c.req.path)) return next();
    const forwarded = c.req.header('x-forwarded-host')?.split(',')[0]?.trim();
    const seen = forwarded || c.req.header('host');
    if (!seen || normalHost(target.protocol, seen) === target.host) return next();
    const url = new URL(c.req.url);
    // The public URL may carry a path prefix (served behind a proxy under one).
    const base = publicUrl.replace(/\/+$/, '');
    return c.redirect(`${base}${url.pathname}${url.search}`, 302);
  };
}
