import { describe, expect, it } from '@jest/globals';
import { addressKey } from './sign-in-throttle.js';

describe('addressKey', () => {
  it('keys an IPv4 address as is, and an IPv4-mapped IPv6 address as its IPv4 one', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it('keys an IPv6 address by its /64, however it is written', () => {
    const key = '2001:db8:0:12::/64';
    expect(addressKey('2001:db8:0:12::1')).toBe(key);
    expect(addressKey('2001:0db8:0000:0012:ffff:0000:0000:0001')).toBe(key);
    expect(addressKey('[2001:DB8:0:12:abcd::9]')).toBe(key);
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressKey('2001:db8::1')).not.toBe(addressKey('2001:db8:0:1::1'));
  });

  it('keys a missing address as unknown', () => {
    expect(addressKey(undefined)).toBe('unknown');
    expect(addressKey('')).toBe('unknown');
  });
});
