import { describe, expect, it } from '@jest/globals';
import { nonPublicReason } from './ssrf.js';

describe(nonPublicReason.name, () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.10', 'documentation'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fc00::1', 'unique local'],
    ['fd12:3456::1', 'unique local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:10.1.2.3', 'IPv4-mapped private'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped link-local'],
    ['64:ff9b::a00:1', 'NAT64'],
    ['2002:c0a8:101::1', '6to4'],
    ['2001:db8::1', 'documentation'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(nonPublicReason(address)).toBe(reason);
  });

  it.each([
    ['192.0.0.8', 'IETF protocol assignment'],
    ['192.88.99.1', '6to4 relay'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.5', 'documentation'],
    ['::10.0.0.1', 'IPv4-compatible'],
    ['::8.8.8.8', 'IPv4-compatible'],
    ['::2', 'IPv4-compatible'],
    ['100::1', 'discard-only'],
    ['2001:0:4136:e378::1', 'Teredo'],
    ['64:ff9b:1::1', 'NAT64'],
    ['fec0::1', 'site-local'],
    ['febf::1', 'link-local'],
  ])('refuses the rarer range %s (%s)', (address, reason) => {
    expect(nonPublicReason(address)).toBe(reason);
  });

  it.each([
    ['FE80::1', 'link-local'],
    ['FC00::1', 'unique local'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::ffff:c0a8:101', 'IPv4-mapped private'],
    ['::ffff:192.168.0.1', 'IPv4-mapped private'],
    ['::ffff:0:0', 'IPv4-mapped unspecified'],
  ])('reads IPv6 in any spelling: %s (%s)', (address, reason) => {
    expect(nonPublicReason(address)).toBe(reason);
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '198.20.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2a00:1450:4001::1'])(
    'accepts the public address %s',
    (address) => {
      expect(nonPublicReason(address)).toBeNull();
    },
  );

  it.each([
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '126.255.255.255',
    '128.0.0.0',
    '169.253.255.255',
    '169.255.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.0.1.1',
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '223.255.255.255',
    'fbff::1',
    'fe7f::1',
    '2001:db9::1',
    '2003::1',
    '::ffff:1.1.1.1',
  ])('accepts %s, just outside a refused range', (address) => {
    expect(nonPublicReason(address)).toBeNull();
  });

  it.each(['example.com', '', '256.1.1.1', '1.2.3', '127.1', '0177.0.0.1', '[::1]', ' 1.1.1.1', '1.1.1.1 '])(
    'refuses %p as not an IP address (shorthand and octal forms are never guessed at)',
    (text) => {
      expect(nonPublicReason(text)).toBe('not an IP address');
    },
  );
});
