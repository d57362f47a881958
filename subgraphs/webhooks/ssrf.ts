import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';

/** One address a host name resolves to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (injectable: tests answer with private addresses). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** The system resolver (`getaddrinfo`, like every other client on the machine). */
export const systemResolver: Resolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

/**
 * Which rule a refused URL broke: `malformed` (not an absolute URL), `https` (another scheme), `userinfo`
 * (`user:password@`), `host` (a name that is not a public domain: localhost, `.internal`, no dot), `private_address`
 * (the host is, or resolves to, an address that is not public), `unresolvable` (no address at all).
 */
export type BlockRule = 'malformed' | 'https' | 'userinfo' | 'host' | 'private_address' | 'unresolvable';

/**
 * Why a URL or address was refused: `reason` is a short phrase fit for a log row; `rule` names the rule broken and
 * `subject` what broke it (`localhost: loopback`, `10.0.0.1: private`), for an error message.
 */
export class BlockedError extends Error {
  readonly code = 'ERR_SVC_BLOCKED_ADDRESS';
  constructor(
    readonly reason: string,
    readonly rule: BlockRule = 'private_address',
    readonly subject?: string,
  ) {
    super(reason);
    this.name = 'BlockedError';
  }
}

// ---- address classes ----

type Range = readonly [prefix: bigint, bits: number, label: string];

const v4 = (a: string): bigint => a.split('.').reduce((n, part) => (n << 8n) | BigInt(Number(part)), 0n);

/** IPv4 ranges that are not the public internet (RFC 6890 and friends). */
const V4_BLOCKED: Range[] = [
  [v4('0.0.0.0'), 8, 'unspecified'],
  [v4('10.0.0.0'), 8, 'private'],
  [v4('100.64.0.0'), 10, 'carrier-grade NAT'],
  [v4('127.0.0.0'), 8, 'loopback'],
  [v4('169.254.0.0'), 16, 'link-local'],
  [v4('172.16.0.0'), 12, 'private'],
  [v4('192.0.0.0'), 24, 'IETF protocol assignment'],
  [v4('192.0.2.0'), 24, 'documentation'],
  [v4('192.88.99.0'), 24, '6to4 relay'],
  [v4('192.168.0.0'), 16, 'private'],
  [v4('198.18.0.0'), 15, 'benchmarking'],
  [v4('198.51.100.0'), 24, 'documentation'],
  [v4('203.0.113.0'), 24, 'documentation'],
  [v4('224.0.0.0'), 4, 'multicast'],
  [v4('240.0.0.0'), 4, 'reserved'],
];

/** Parses an IPv6 literal (with `::` and an optional trailing dotted quad) to a 128-bit integer. */
function v6(address: string): bigint {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (quad) {
    const n = v4(quad[1]);
    text = text.slice(0, quad.index) + `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g || '0', 16)), 0n);
}

const V6_BLOCKED: Range[] = [
  [v6('::'), 128, 'unspecified'],
  [v6('::1'), 128, 'loopback'],
  [v6('::'), 96, 'IPv4-compatible'],
  [v6('64:ff9b::'), 96, 'NAT64'],
  [v6('64:ff9b:1::'), 48, 'NAT64'],
  [v6('100::'), 64, 'discard-only'],
  [v6('2001::'), 32, 'Teredo'],
  [v6('2001:db8::'), 32, 'documentation'],
  [v6('2002::'), 16, '6to4'],
  [v6('fc00::'), 7, 'unique local'],
  [v6('fe80::'), 10, 'link-local'],
  [v6('fec0::'), 10, 'site-local'],
  [v6('ff00::'), 8, 'multicast'],
];
const V4_MAPPED: Range = [v6('::ffff:0:0'), 96, 'IPv4-mapped'];

const inRange = (n: bigint, width: number, [prefix, bits]: Range) => n >> BigInt(width - bits) === prefix >> BigInt(width - bits);

/**
 * Why `address` (an IP literal) is not a public internet address, or null when it is.
 * IPv4-mapped IPv6 is judged by the IPv4 address inside it.
 */
export function nonPublicReason(address: string): string | null {
  const family = isIP(address);
  if (family === 4) return V4_BLOCKED.find((r) => inRange(v4(address), 32, r))?.[2] ?? null;
  if (family === 6) {
    const n = v6(address);
    if (inRange(n, 128, V4_MAPPED)) {
      const inner = n & 0xffffffffn;
      const dotted = [24n, 16n, 8n, 0n].map((s) => String((inner >> s) & 0xffn)).join('.');
      const reason = nonPublicReason(dotted);
      return reason ? `IPv4-mapped ${reason}` : null;
    }
    // ::/128 and ::1/128 sit inside ::/96; the narrower label wins.
    const hit = V6_BLOCKED.filter((r) => inRange(n, 128, r)).sort((a, b) => b[1] - a[1])[0];
    return hit?.[2] ?? null;
  }
  return 'not an IP address';
}

// ---- policy ----

/** The SSRF policy: addresses must be public unless the host or the IP is allow-listed. */
export class AddressPolicy {
  private readonly allowed: Set<string>;

  constructor(
    allowedPrivateHosts: readonly string[],
    private readonly resolve: Resolver = systemResolver,
  ) {
    this.allowed = new Set(allowedPrivateHosts.map(normaliseHost));
  }

  /** True when the operator allow-listed this host name or IP (`WEBHOOK_ALLOWED_PRIVATE_HOSTS`). */
  isAllowed(host: string): boolean {
    return this.allowed.has(normaliseHost(host));
  }

  /** Throws `BlockedError` unless `address` is public or allow-listed. */
  checkAddress(address: string): void {
    if (this.isAllowed(address)) return;
    const reason = nonPublicReason(address);
    if (reason) throw new BlockedError(`blocked address ${address} (${reason})`, 'private_address', `${address}: ${reason}`);
  }

  /**
   * Checks a URL without touching the network: HTTPS, no user info, and a host that is not loopback,
   * private, link-local or an internal name. Returns the host to resolve, or null for an IP literal.
   */
  checkUrlShape(raw: string): { url: URL; hostname: string; literal: boolean } {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new BlockedError('not a valid absolute URL', 'malformed');
    }
    if (url.protocol !== 'https:') throw new BlockedError('the URL must use https', 'https', url.protocol);
    if (url.username || url.password) throw new BlockedError('the URL must not contain user:password@', 'userinfo');
    const hostname = normaliseHost(url.hostname);
    const literal = isIP(hostname) !== 0;
    if (literal) {
      this.checkAddress(hostname);
    } else if (!this.isAllowed(hostname)) {
      const blockedHost = (why: string) => new BlockedError(`blocked host ${hostname} (${why})`, 'host', `${hostname}: ${why}`);
      if (hostname === 'localhost' || hostname.endsWith('.localhost')) throw blockedHost('loopback');
      if (/(^|\.)(local|internal|localdomain|home\.arpa)$/.test(hostname)) throw blockedHost('internal name');
      if (!hostname.includes('.')) throw blockedHost('not a public domain name');
    }
    return { url, hostname, literal };
  }

  /**
   * The registration check: the URL's shape, then every address its host resolves to must be public
   * (unless the host is allow-listed). Throws `BlockedError` with the reason.
   */
  async checkUrl(raw: string): Promise<URL> {
    const { url, hostname, literal } = this.checkUrlShape(raw);
    if (literal || this.isAllowed(hostname)) return url;
    await this.resolvePublic(hostname);
    return url;
  }

  /** Every address of `hostname`, after checking each one; throws `BlockedError` if any is not public. */
  async resolvePublic(hostname: string): Promise<ResolvedAddress[]> {
    let addresses: ResolvedAddress[];
    try {
      addresses = await this.resolve(hostname);
    } catch (error) {
      const code = (error as { code?: string }).code ?? 'DNS error';
      throw new BlockedError(`host ${hostname} does not resolve (${code})`, 'unresolvable', `${hostname}: ${code}`);
    }
    if (addresses.length === 0) throw new BlockedError(`host ${hostname} does not resolve`, 'unresolvable', hostname);
    if (this.isAllowed(hostname)) return addresses;
    for (const a of addresses) this.checkAddress(a.address);
    return addresses;
  }

  /**
   * A `lookup` for `net.connect`/`tls.connect` (undici's `connect` options): it resolves with the
   * policy's resolver and refuses to hand a non-public address to the socket, so a DNS answer that
   * changed after registration (rebinding) is caught at dial time.
   */
  connectLookup(): LookupFunction {
    return (hostname, options, callback) => {
      this.resolvePublic(normaliseHost(hostname)).then(
        (addresses) => {
          const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
          if (wanted.length === 0) return callback(Object.assign(new Error(`no IPv${options.family} address for ${hostname}`), { code: 'ENOTFOUND' }), '', 4);
          if (options.all) return (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, wanted);
          callback(null, wanted[0].address, wanted[0].family);
        },
        (error: Error) => callback(error as NodeJS.ErrnoException, '', 4),
      );
    };
  }
}

/** Lower case, no brackets around IPv6, no trailing dot. */
function normaliseHost(host: string): string {
  return host.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}
