import { describe, expect, it } from '@jest/globals';
import { lookup } from 'node:dns';
import { AddressPolicy, BlockedError } from '../subgraphs/webhooks/index.js';
import { plantedResolver } from './support.js';

describe('webhook SSRF guard', () => {
  describe('AddressPolicy.checkUrl', () => {
    const resolver = plantedResolver({
      'hooks.example.com': ['93.184.216.34'],
      'evil.example.com': ['10.0.0.5'],
      'half.example.com': ['93.184.216.34', '192.168.0.10'],
      'v6.example.com': ['2606:4700::1', 'fd00::1'],
    });
    const policy = new AddressPolicy([], resolver);

    it('accepts an https URL whose every address is public, normalised', async () => {
      expect((await policy.checkUrl('https://Hooks.Example.com/a?b=1')).href).toBe('https://hooks.example.com/a?b=1');
    });

    it.each([
      ['http://hooks.example.com/', /https/],
      ['ftp://hooks.example.com/', /https/],
      ['not a url', /valid/],
      ['https://user:pass@hooks.example.com/', /user:password/],
      ['https://user@hooks.example.com/', /user:password/],
      ['https://localhost/', /loopback/],
      ['https://api.localhost/', /loopback/],
      ['https://printer.local/', /internal/],
      ['https://db.internal/', /internal/],
      ['https://intranet/', /public domain/],
      ['https://127.0.0.1/', /loopback/],
      ['https://0x7f.1/', /loopback/],
      ['https://2130706433/', /loopback/],
      ['https://0.0.0.0/', /unspecified/],
      ['https://10.1.2.3/', /private/],
      ['https://172.20.0.1/', /private/],
      ['https://192.168.0.1/', /private/],
      ['https://169.254.169.254/latest/meta-data', /link-local/],
      ['https://100.64.1.1/', /carrier-grade/],
      ['https://198.18.0.1/', /benchmarking/],
      ['https://224.0.0.1/', /multicast/],
      ['https://[::1]/', /loopback/],
      ['https://[fe80::1]/', /link-local/],
      ['https://[fc00::1]/', /unique local/],
      ['https://[::ffff:127.0.0.1]/', /IPv4-mapped loopback/],
      ['https://[64:ff9b::7f00:1]/', /NAT64/],
      ['https://[2002:7f00:1::1]/', /6to4/],
      ['https://evil.example.com/', /10\.0\.0\.5 \(private\)/],
      ['https://half.example.com/', /192\.168\.0\.10/],
      ['https://v6.example.com/', /fd00::1/],
    ])('refuses %s', async (url, reason) => {
      const error = await policy.checkUrl(url).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BlockedError);
      expect((error as BlockedError).reason).toMatch(reason);
    });

    it('refuses a host that does not resolve', async () => {
      const error = await new AddressPolicy([]).checkUrl('https://no-such-host.invalid/').catch((e: unknown) => e);
      expect((error as BlockedError).reason).toMatch(/does not resolve/);
    });

    it('lets allow-listed hosts and IPs through (WEBHOOK_ALLOWED_PRIVATE_HOSTS)', async () => {
      const allowing = new AddressPolicy(['localhost', '127.0.0.1', '::1', 'evil.example.com'], resolver);
      await expect(allowing.checkUrl('https://localhost:8443/')).resolves.toBeInstanceOf(URL);
      await expect(allowing.checkUrl('https://127.0.0.1:8443/')).resolves.toBeInstanceOf(URL);
      await expect(allowing.checkUrl('https://[::1]:8443/')).resolves.toBeInstanceOf(URL);
      await expect(allowing.checkUrl('https://evil.example.com/')).resolves.toBeInstanceOf(URL);
      await expect(allowing.checkUrl('https://10.0.0.5/')).rejects.toBeInstanceOf(BlockedError);
      await expect(allowing.checkUrl('http://localhost/')).rejects.toBeInstanceOf(BlockedError);
    });
  });

  describe('AddressPolicy.connectLookup', () => {
    const call = (fn: ReturnType<AddressPolicy['connectLookup']>, host: string, options: { all?: boolean; family?: number }) =>
      new Promise<{ error: Error | null; result: unknown }>((resolve) => {
        fn(host, options as never, (error: Error | null, address: unknown, family?: number) =>
          resolve({ error, result: options.all ? address : { address, family } }),
        );
      });

    it('hands public addresses to the socket, in both callback forms', async () => {
      const fn = new AddressPolicy([], plantedResolver({ 'hooks.example.com': ['93.184.216.34', '2606:4700::1'] })).connectLookup();
      expect(await call(fn, 'hooks.example.com', {})).toEqual({ error: null, result: { address: '93.184.216.34', family: 4 } });
      expect(await call(fn, 'hooks.example.com', { family: 6 })).toEqual({ error: null, result: { address: '2606:4700::1', family: 6 } });
      expect(await call(fn, 'hooks.example.com', { all: true })).toEqual({
        error: null,
        result: [
          { address: '93.184.216.34', family: 4 },
          { address: '2606:4700::1', family: 6 },
        ],
      });
    });

    it('refuses at dial time when the answer turned private after registration (DNS rebinding)', async () => {
      const resolver = plantedResolver({ 'rebind.example.com': ['93.184.216.34'] });
      const policy = new AddressPolicy([], resolver);
      await policy.checkUrl('https://rebind.example.com/');
      resolver.answers['rebind.example.com'] = ['127.0.0.1'];
      const { error } = await call(policy.connectLookup(), 'rebind.example.com', { all: true });
      expect(error).toBeInstanceOf(BlockedError);
      expect((error as BlockedError).message).toBe('blocked address 127.0.0.1 (loopback)');
    });

    it('has the signature of dns.lookup', () => {
      const fn: typeof lookup = new AddressPolicy([]).connectLookup() as never;
      expect(typeof fn).toBe('function');
    });
  });
});
