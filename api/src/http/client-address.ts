// The network address of the client a request came from, as the deployment says it (ADR 1430):
// the socket peer, unless the peer is a proxy the operator trusts (FLOWPORT_TRUSTED_PROXIES), then
// the X-Forwarded-For entries walked right to left past trusted hops. Rate limits key on this
// (an IPv6 address on its /64: lib/address-key.ts).
import type { Context } from 'hono';
import { normalizeAddress, parseTrustedProxies, type TrustedProxies } from '../config.ts';
import { isIP } from 'node:net';
import type { AppEnv } from './types.ts';

export { parseTrustedProxies };

function isTrusted(addr: string, trusted: TrustedProxies): boolean {
  return !trusted.empty && trusted.list.check(addr, isIP(addr) === 6 ? 'ipv6' : 'ipv4');
}

/**
 * The client's address: `peer` unless it is trusted; then X-Forwarded-For from the right, skipping
 * trusted hops, to the first untrusted one (all trusted: the left-most). An entry that is not an
 * address stops the walk at the hop before it, which the caller trusts.
 */
export function resolveClientAddress(peer: string, forwardedFor: string | undefined, trusted: TrustedProxies): string {
  const from = normalizeAddress(peer) ?? peer;
  if (!forwardedFor || !isTrusted(from, trusted)) return from;
  let client = from;
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = normalizeAddress(hops[i] ?? '');
    if (hop === null) break;
    client = hop;
    if (!isTrusted(hop, trusted)) break;
  }
  return client;
}

/** The socket peer of a request served by @hono/node-server ('unknown' elsewhere). */
export function socketPeer(c: Context<AppEnv>): string {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress ?? 'unknown';
}

const parsed = new WeakMap<readonly string[], TrustedProxies>();
type ProxyConfig = { http: { trustedProxies: readonly string[] } };

function trustedOf(config: ProxyConfig): TrustedProxies {
  const list = config.http.trustedProxies;
  let trusted = parsed.get(list);
  if (!trusted) {
    trusted = parseTrustedProxies(list);
    parsed.set(list, trusted);
  }
  return trusted;
}

/** Whether the socket peer `peer` is one of the deployment's trusted proxies. */
export function isTrustedProxy(peer: string, config: ProxyConfig): boolean {
  return isTrusted(normalizeAddress(peer) ?? peer, trustedOf(config));
}

/** The client address of this request, by the deployment's trusted proxies. */
export function clientAddress(c: Context<AppEnv>, config: ProxyConfig): string {
  return resolveClientAddress(socketPeer(c), c.req.header('x-forwarded-for'), trustedOf(config));
}
