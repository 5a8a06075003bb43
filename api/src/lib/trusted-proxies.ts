// Which proxies' X-Forwarded-For is believed (FLOWPORT_TRUSTED_PROXIES) and the client address a
// request's peer and X-Forwarded-For give by them (ADR 1430). CIDR matching is Node's own
// net.BlockList. The Hono side (the request's peer) is api/src/http/client-address.ts.
import { BlockList, isIP } from 'node:net';

/** The proxies whose X-Forwarded-For is believed: addresses and CIDR ranges, IPv4 and IPv6. */
export interface TrustedProxies {
  readonly list: BlockList;
  readonly empty: boolean;
}

/** `::ffff:10.0.0.1` → `10.0.0.1`; brackets and zone ids dropped; null when not an IP address. */
function normalize(raw: string): string | null {
  let a = raw.trim();
  if (a.startsWith('[') && a.includes(']')) a = a.slice(1, a.indexOf(']'));
  a = a.replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a);
  if (mapped?.[1]) a = mapped[1];
  return isIP(a) ? a : null;
}

/** Parses FLOWPORT_TRUSTED_PROXIES entries (`10.0.0.0/8`, `192.0.2.5`, `::1`); throws naming a bad one. */
export function parseTrustedProxies(entries: readonly string[]): TrustedProxies {
  const list = new BlockList();
  for (const entry of entries) {
    const [addr = '', prefix, extra] = entry.trim().split('/');
    const ip = normalize(addr);
    const family = ip ? (isIP(ip) === 6 ? 'ipv6' : 'ipv4') : null;
    const max = family === 'ipv6' ? 128 : 32;
    const bits = prefix === undefined ? max : /^\d{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN;
    if (!ip || !family || extra !== undefined || !(bits >= 0 && bits <= max))
      throw new Error(
        `FLOWPORT_TRUSTED_PROXIES: "${entry.slice(0, 60)}" is not an IP address or CIDR range (e.g. 10.0.0.0/8, ::1).`,
      );
    list.addSubnet(ip, bits, family);
  }
  return { list, empty: entries.length === 0 };
}

function isTrusted(addr: string, trusted: TrustedProxies): boolean {
  return !trusted.empty && trusted.list.check(addr, isIP(addr) === 6 ? 'ipv6' : 'ipv4');
}

/**
 * The client's address: `peer` unless it is trusted; then X-Forwarded-For from the right, skipping
 * trusted hops, to the first untrusted one (all trusted: the left-most). An entry that is not an
 * address stops the walk at the hop before it, which the caller trusts.
 */
export function resolveClientAddress(peer: string, forwardedFor: string | undefined, trusted: TrustedProxies): string {
  const from = normalize(peer) ?? peer;
  if (!forwardedFor || !isTrusted(from, trusted)) return from;
  let client = from;
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = normalize(hops[i] ?? '');
    if (hop === null) break;
    client = hop;
    if (!isTrusted(hop, trusted)) break;
  }
  return client;
}

