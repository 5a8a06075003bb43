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

  it('lets everything through when private targets are allowed, and names the resolved address otherwise', async () => {
    expect(await privateTargetReason(new URL('https://127.0.0.1/x'), true)).toBeNull();
    expect(await privateTargetReason(new URL('https://localhost/x'), false)).toMatch(/resolves to (127\.0\.0\.1|::1)/);
    expect(await privateTargetReason(new URL('https://93.184.215.14/x'), false)).toBeNull();
  });
});
