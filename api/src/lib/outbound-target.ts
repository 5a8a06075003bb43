// Where Flowport may send a request a tenant chose (alert webhooks): not into the network it
// runs in. A URL whose host is, or resolves to, a loopback, private, link-local, shared,
// multicast or reserved address is refused unless the deployment allows private targets
// (sandbox mode does, so a receiver on this machine works in development and tests).
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  PRIVATE.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96], // NAT64 of any IPv4 address
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const)
  PRIVATE.addSubnet(net, prefix, 'ipv6');

/** Whether an IP address (v4, v6, or IPv4-mapped v6) lies outside the public internet. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return PRIVATE.check(mapped[1] as string, 'ipv4');
  const family = isIP(bare);
  if (family === 4) return PRIVATE.check(bare, 'ipv4');
  if (family === 6) return PRIVATE.check(bare, 'ipv6');
  return true; // not an address: never treat it as public
}

/**
 * Why `url` may not be the target of a request Flowport sends for a tenant, or null when it may.
 * Resolves the host (every address it has must be public). Checked when the target is chosen
 * and again before each send, as a name can be re-pointed.
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
