// The key a per-address limit counts a client under (ADR 1430): an IPv4 address itself, an IPv6
// address its /64. One IPv6 subscriber (a home, a VM, a cloud instance) is usually given a whole
// /64 (RFC 6177, RFC 7934), so keying on the full address would let one network count as 2^64
// clients; a /64 is the smallest block one party is assumed to hold.
import ipaddr from 'ipaddr.js';

/** The prefix length an IPv6 client is counted on. */
export const IPV6_LIMIT_PREFIX = 64;

/** `192.0.2.1` → `192.0.2.1`; `2001:db8:1:2::7` → `2001:db8:1:2::/64`; anything else as it is. */
export function addressLimitKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address); // An IPv4-mapped IPv6 address counts as its IPv4 address.
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, IPV6_LIMIT_PREFIX / 16);
  const network = new ipaddr.IPv6([...parts, 0, 0, 0, 0]);
  return `${network.toString()}/${IPV6_LIMIT_PREFIX}`;
}
