// Where Flowport may send a request a tenant chose (alert webhooks, OAuth client metadata
// documents): not into the network it runs in. A URL whose host is, or resolves to, anything but
// a public unicast address is refused unless the deployment allows private targets (sandbox mode
// does, so a receiver on this machine works in development and tests).
//
// The special-purpose ranges are ipaddr.js's tables (IANA's IPv4 and IPv6 special-purpose
// registries), not a list kept here: only its `unicast` class is public. An IPv6 address that
// carries an IPv4 one (mapped, compatible, SIIT, NAT64, 6to4, Teredo) is judged by the IPv4 it
// carries, which is where a translator or tunnel sends the request. docs/adr/1103.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

function v4(bytes: number[]): IPv4 {
  return new ipaddr.IPv4(bytes);
}

/**
 * The IPv4 addresses an IPv6 address carries, or null when it carries none. Throws for a
 * translation prefix whose layout the deployment chooses (NAT64 local-use, RFC 8215), which
 * cannot be read and so is never public.
 */
function embeddedIPv4(address: IPv6): IPv4[] | null {
  const b = address.toByteArray();
  const tail = v4(b.slice(12, 16));
  switch (address.range()) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // SIIT, ::ffff:0:a.b.c.d
      return [tail];
    case 'rfc6052': // NAT64: the well-known prefix 64:ff9b::/96 carries it last
      if (address.match(ipaddr.IPv6.parse('64:ff9b::'), 96)) return [tail];
      throw new RangeError('local-use NAT64 prefix');
    case '6to4': // 2002:AABB:CCDD::/48
      return [v4(b.slice(2, 6))];
    case 'teredo': // 2001:0:<server>:<flags>:<port>:<client, inverted>
      return [v4(b.slice(4, 8)), v4(b.slice(12, 16).map((x) => x ^ 0xff))];
    case 'unicast': // IPv4-compatible, ::a.b.c.d (deprecated; ipaddr.js counts it unicast)
      return b.slice(0, 12).every((x) => x === 0) ? [tail] : null;
    default:
      return null;
  }
}

function isPublic(address: IPv4 | IPv6): boolean {
  if (address.kind() === 'ipv4') return address.range() === 'unicast';
  let carried: IPv4[] | null;
  try {
    carried = embeddedIPv4(address as IPv6);
  } catch {
    return false;
  }
  return carried === null ? address.range() === 'unicast' : carried.every(isPublic);
}

/** Whether an IP address (v4, v6 in any spelling, bracketed or not) lies outside the public internet. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  // Only the standard spellings (node:net's); ipaddr.js also reads `0x7f.1`, `127.1` and the like.
  if (isIP(bare) === 0) return true; // not an address: never treat it as public
  return !isPublic(ipaddr.parse(bare));
}

/**
 * Why `url` may not be the target of a request Flowport sends for a tenant, or null when it may.
 * Resolves the host (every address it has must be public, by the same check as a literal).
 * Checked when the target is chosen and again before each send, as a name can be re-pointed.
 */
export async function privateTargetReason(url: URL, allowPrivate: boolean): Promise<string | null> {
  if (allowPrivate) return null;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch {
      return `${url.host} does not resolve.`;
    }
  }
  const inside = addresses.find(isPrivateAddress);
  return inside === undefined
    ? null
    : `${url.host} is${inside === host ? '' : ` (resolves to ${inside})`} a loopback, private or reserved address; this deployment sends alerts only to the public internet.`;
}
