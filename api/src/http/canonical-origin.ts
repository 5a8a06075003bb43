// One canonical origin for the pages that set or read browser cookies across a round trip (issue
// 40 point 10, ADR 1102): the Shopify install and sign-in (the OAuth state cookie, read back at the
// callback Shopify sends to the public URL), the merchant page (its session cookie) and the OAuth
// server's consent page. A cookie only comes back to the host that set it, so a GET to one of them
// on another host (127.0.0.1 where the public URL says localhost, a bare IP, an old domain) is
// redirected to the same path and query on the public URL before anything is set.
//
// The browser's host is the `X-Forwarded-Host` a proxy in front adds, else `Host`. Never a redirect
// to itself: when a proxy stands in front and does not say which host the browser asked for (a
// trusted proxy, FLOWPORT_TRUSTED_PROXIES, without X-Forwarded-Host; or a loopback peer while the
// public URL is not a loopback one: nginx's default `proxy_pass http://127.0.0.1:PORT` rewrites
// `Host` and adds nothing), the page is served where it was asked for.
import { isIP } from 'node:net';
import type { MiddlewareHandler } from 'hono';
import { OAUTH_PATHS } from '../oauth/metadata.ts';
import { SHOPIFY_APP_PATHS } from '../lib/shopify-app.ts';
import { isTrustedProxy, socketPeer } from './client-address.ts';
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

const LOOPBACK_NAMES = new Set(['localhost', '[::1]']);
const isLoopback = (hostOrAddress: string) => {
  const a = hostOrAddress.replace(/^::ffff:/, '');
  return LOOPBACK_NAMES.has(a) || a === '::1' || (isIP(a) === 4 && a.startsWith('127.'));
};

export function canonicalOrigin(config: {
  publicUrl: string;
  http: { trustedProxies: readonly string[] };
}): MiddlewareHandler<AppEnv> {
  const { publicUrl } = config;
  const target = new URL(publicUrl);
  const publicIsLoopback = isLoopback(target.hostname);
  const paths = new Set(CANONICAL_ORIGIN_PATHS);
  return async function canonicalOriginMiddleware(c, next) {
    if ((c.req.method !== 'GET' && c.req.method !== 'HEAD') || !paths.has(c.req.path)) return next();
    const forwarded = c.req.header('x-forwarded-host')?.split(',')[0]?.trim();
    if (!forwarded) {
      // A proxy in front that does not say the browser's host: `Host` is the proxy's, not the browser's.
      const peer = socketPeer(c);
      if (isTrustedProxy(peer, config) || (!publicIsLoopback && isLoopback(peer))) return next();
    }
    const seen = forwarded || c.req.header('host');
    if (!seen || normalHost(target.protocol, seen) === target.host) return next();
    const url = new URL(c.req.url);
    // The public URL may carry a path prefix (served behind a proxy under one).
    const base = publicUrl.replace(/\/+$/, '');
    return c.redirect(`${base}${url.pathname}${url.search}`, 302);
  };
}
