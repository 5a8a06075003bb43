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

const NAT64_WELL_KNOWN = ipaddr.IPv6.parse('64:ff9b::');

function isPublicIPv4(address: ipaddr.IPv4): boolean {
  return address.range() === 'unicast';
}

/** A public unicast IPv6 address; one that carries an IPv4 address only if that one is public too. */
function isPublicIPv6(address: ipaddr.IPv6): boolean {
  const b = address.toByteArray();
  const carried = (from: number, invert = 0) => new ipaddr.IPv4(b.slice(from, from + 4).map((x) => x ^ invert));
  switch (address.range()) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // SIIT, ::ffff:0:a.b.c.d
      return isPublicIPv4(carried(12));
    // NAT64: the well-known prefix carries it last. Local-use (64:ff9b:1::/48, RFC 8215) never
    // passes: where it carries the IPv4 is the operator's choice.
    case 'rfc6052':
      return address.match(NAT64_WELL_KNOWN, 96) && isPublicIPv4(carried(12));
    case '6to4': // 2002:AABB:CCDD::/48
      return isPublicIPv4(carried(2));
    case 'teredo': // 2001:0:<server>:<flags>:<port>:<client, bits inverted>
      return isPublicIPv4(carried(4)) && isPublicIPv4(carried(12, 0xff));
    case 'unicast': // IPv4-compatible ::a.b.c.d is deprecated, and ipaddr.js counts it unicast
      return b.slice(0, 12).some((x) => x !== 0) || isPublicIPv4(carried(12));
    default:
      return false;
  }
}

/** Whether an IP address (v4, v6 in any spelling, bracketed or not) lies outside the public internet. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  // Only the standard spellings (node:net's); ipaddr.js also reads `0x7f.1`, `127.1` and the like.
  if (isIP(bare) === 0) return true; // not an address: never treat it as public
  const parsed = ipaddr.parse(bare);
  return !(parsed.kind() === 'ipv4' ? isPublicIPv4(parsed as ipaddr.IPv4) : isPublicIPv6(parsed as ipaddr.IPv6));
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
