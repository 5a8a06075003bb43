// Which addresses count as inside a private network for tenant-chosen targets (alert webhooks).
import { describe, expect, it } from 'vitest';
import { isPrivateAddress, privateTargetReason } from '../../api/src/lib/outbound-target.ts';

describe('isPrivateAddress', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.255.0.9', true],
    ['10.0.0.1', true],
    ['172.16.0.1', true],
    ['172.31.255.255', true],
    ['172.32.0.1', false],
    ['192.168.0.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['224.0.0.1', true],
    ['255.255.255.255', true],
    ['8.8.8.8', false],
    ['93.184.215.14', false],
    ['::1', true],
    ['::', true],
    ['fd12:3456::1', true],
    ['fe80::1', true],
    ['ff02::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:8.8.8.8', false],
    ['64:ff9b::7f00:1', true],
    ['2606:4700:4700::1111', false],
    ['[::1]', true],
    ['not-an-address', true],
  ])('%s → %s', (address, expected) => {
    expect(isPrivateAddress(address)).toBe(expected);
  });

  // IPv6 forms that carry an IPv4 address: each is judged by the address it carries (issue 40,
  // defect 9: these reached loopback, private and metadata addresses through the hand list).
  it.each([
    ['::7f00:1', 'IPv4-compatible ::127.0.0.1'],
    ['::a9fe:a9fe', 'IPv4-compatible ::169.254.169.254'],
    ['::ffff:7f00:1', 'IPv4-mapped, hex spelling'],
    ['::ffff:0:7f00:1', 'SIIT ::ffff:0:127.0.0.1'],
    ['::ffff:0:a00:1', 'SIIT ::ffff:0:10.0.0.1'],
    ['2002:7f00:1::1', '6to4 of 127.0.0.1'],
    ['2002:a9fe:a9fe::', '6to4 of 169.254.169.254'],
    ['2002:c0a8:101:1::5', '6to4 of 192.168.1.1'],
    ['64:ff9b::a00:1', 'NAT64 well-known prefix, 10.0.0.1'],
    ['64:ff9b:1::a9fe:a9fe', 'NAT64 local-use prefix'],
    ['64:ff9b:1:808:8:800::', 'NAT64 local-use prefix, even for a public IPv4'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'Teredo, client 127.0.0.1'],
    ['2001:0:a00:1:8000:63bf:f7f7:f7f7', 'Teredo, server 10.0.0.1'],
  ])('%s (%s) is inside', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  // The rest of the special-purpose registries (IANA), beyond the hand list's rows.
  it.each([
    '192.88.99.1', // 6to4 relay anycast (deprecated)
    '192.175.48.1', // AS112
    '192.52.193.1', // AMT
    '198.18.0.1', // benchmarking
    '100::1', // discard
    '2001:2::1', // benchmarking
    '2001:3::1', // AMT
    '2001:4:112::1', // AS112
    '2001:20::1', // ORCHIDv2
    '2001:db8::1', // documentation
    '3fff::1', // documentation (2024)
    '5f00::1', // segment routing
    'fec0::1', // site-local (deprecated)
  ])('%s is not a public unicast address', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each([
    ['1.1.1.1', 'IPv4'],
    ['2606:4700:4700::1111', 'IPv6'],
    ['::ffff:8.8.8.8', 'IPv4-mapped'],
    ['::ffff:808:808', 'IPv4-mapped, hex spelling'],
    ['64:ff9b::808:808', 'NAT64 well-known prefix (what DNS64 answers)'],
    ['2002:808:808::1', '6to4 of 8.8.8.8'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'Teredo, server and client public'],
  ])('%s (%s) is public', (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });

  it('lets everything through when private targets are allowed, and names the resolved address otherwise', async () => {
    expect(await privateTargetReason(new URL('https://127.0.0.1/x'), true)).toBeNull();
    expect(await privateTargetReason(new URL('https://localhost/x'), false)).toMatch(/resolves to (127\.0\.0\.1|::1)/);
    expect(await privateTargetReason(new URL('https://93.184.215.14/x'), false)).toBeNull();
  });
});
