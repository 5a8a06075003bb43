// The network address of the client a request came from, as the deployment says it (ADR 1430):
// the socket peer, unless the peer is a proxy the operator trusts (FLOWPORT_TRUSTED_PROXIES), then
// the X-Forwarded-For entries walked right to left past trusted hops. Rate limits key on this.
import type { Context } from 'hono';
import type { Config } from '../config.ts';
import { parseTrustedProxies, resolveClientAddress, type TrustedProxies } from '../lib/trusted-proxies.ts';
import type { AppEnv } from './types.ts';

export { parseTrustedProxies, resolveClientAddress };

/** The socket peer of a request served by @hono/node-server ('unknown' elsewhere). */
export function socketPeer(c: Context<AppEnv>): string {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress ?? 'unknown';
}

const parsed = new WeakMap<readonly string[], TrustedProxies>();

/** The client address of this request, by the deployment's trusted proxies. */
export function clientAddress(c: Context<AppEnv>, config: Pick<Config, 'http'>): string {
  const list = config.http.trustedProxies;
  let trusted = parsed.get(list);
  if (!trusted) {
    trusted = parseTrustedProxies(list);
    parsed.set(list, trusted);
  }
  return resolveClientAddress(socketPeer(c), c.req.header('x-forwarded-for'), trusted);
}
