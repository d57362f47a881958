import { isIP } from 'node:net';

/**
 * The address a counter keys on: an IPv4 address as is (an IPv4-mapped IPv6 address as its IPv4 one), an IPv6 address
 * as its /64 prefix (one subscriber usually holds a whole /64, so single addresses would cost an attacker nothing), and
 * `unknown` when there is none.
 */
export function addressKey(address: string | undefined): string {
  if (!address) return 'unknown';
  const bare = address.trim().toLowerCase().replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  if (mapped) return mapped[1];
  if (isIP(bare) !== 6) return bare;
  const [head, tail = ''] = bare.split('::');
  const left = head ? head.split(':') : [];
  const right = bare.includes('::') && tail ? tail.split(':') : [];
  // A dotted IPv4 tail holds two groups; the first four groups are all a /64 needs, and they never come from it.
  const missing = 8 - left.length - right.length - (right.at(-1)?.includes('.') ? 1 : 0);
  const groups = bare.includes('::') ? [...left, ...Array<string>(Math.max(0, missing)).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => (g.includes('.') ? g : g.replace(/^0+(?=.)/, ''))).join(':')}::/64`;
}
