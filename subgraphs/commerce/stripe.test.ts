import { describe, expect, it } from '@jest/globals';
import { STRIPE_TOLERANCE_SECONDS, verifyStripeSignature } from './stripe.js';

const SECRET = 'whsec_test_0123456789abcdefghijklmnopqrstuv';
const payload = Buffer.from('{"id":"evt_1","type":"ping"}');
const T = 1_700_000_000;
const now = new Date(T * 1000);
// Known answers, computed outside this code base:
//   printf '%s' '1700000000.{"id":"evt_1","type":"ping"}' | openssl dgst -sha256 -hmac '<secret>'
const V1 = 'f6e73e9c65787eff17a305e7e20e504aad40cc964cd8bef147a798bced98edc9';
const V1_OF_OLD_SECRET = 'dc44e7509157a6487211c0c0ec3460e0b35973b334f618085e227f912fd95a7c';

const check = (header: string | undefined, overrides: Partial<Parameters<typeof verifyStripeSignature>[0]> = {}) =>
  verifyStripeSignature({ header, payload, secret: SECRET, now, ...overrides });

describe(verifyStripeSignature.name, () => {
  describe('signature', () => {
    it('accepts the known answer', () => {
      expect(check(`t=${T},v1=${V1}`)).toBeNull();
    });

    it('refuses a signature of another payload, another secret or another timestamp', () => {
      expect(check(`t=${T},v1=${V1}`, { payload: Buffer.from('{"id":"evt_1","type":"ping"} ') })).toBe('no_matching_signature');
      expect(check(`t=${T},v1=${V1}`, { secret: 'whsec_old_secret' })).toBe('no_matching_signature');
      expect(check(`t=${T + 1},v1=${V1}`)).toBe('no_matching_signature');
    });

    it('accepts a header with several v1 when any one matches (secret rotation), in any position', () => {
      expect(check(`t=${T},v1=${V1_OF_OLD_SECRET},v1=${V1}`)).toBeNull();
      expect(check(`t=${T},v1=${V1},v1=${V1_OF_OLD_SECRET}`)).toBeNull();
      expect(check(`t=${T},v1=${V1_OF_OLD_SECRET}`)).toBe('no_matching_signature');
    });

    it('accepts upper-case hex, and skips candidates that are not 64 hex digits', () => {
      expect(check(`t=${T},v1=${V1.toUpperCase()}`)).toBeNull();
      expect(check(`t=${T},v1=${V1.slice(0, 63)}`)).toBe('no_matching_signature');
      expect(check(`t=${T},v1=${V1}00`)).toBe('no_matching_signature');
      expect(check(`t=${T},v1=${'z'.repeat(64)},v1=${V1}`)).toBeNull();
    });

    it('ignores other schemes: a v0 signature alone does not verify', () => {
      expect(check(`t=${T},v0=${V1}`)).toBe('malformed_header');
      expect(check(`t=${T},v0=${V1_OF_OLD_SECRET},v1=${V1}`)).toBeNull();
    });
  });

  describe('header', () => {
    it('says missing_header for an absent or empty header', () => {
      expect(check(undefined)).toBe('missing_header');
      expect(check('')).toBe('missing_header');
    });

    it('trims spaces around keys and values', () => {
      expect(check(` t = ${T} , v1 = ${V1} `)).toBeNull();
    });

    it('takes the first t when the header repeats it', () => {
      expect(check(`t=${T},t=${T + 1000},v1=${V1}`)).toBeNull();
      expect(check(`t=${T + 1000},t=${T},v1=${V1}`)).toBe('timestamp_out_of_tolerance');
    });

    it.each([
      ['garbage', 'garbage'],
      ['no t', `v1=${V1}`],
      ['no v1', `t=${T}`],
      ['an empty t', `t=,v1=${V1}`],
      ['a negative t', `t=-${T},v1=${V1}`],
      ['a fractional t', `t=${T}.5,v1=${V1}`],
      ['a t in milliseconds beyond 12 digits', `t=${T}000,v1=${V1}`],
      ['an entry without a key', `=${T},v1=${V1}`],
      ['keys in upper case', `T=${T},V1=${V1}`],
      ['more than 4096 characters', `t=${T},v1=${V1},${'x'.repeat(4096)}`],
    ])('says malformed_header for %s', (_what, header) => {
      expect(check(header)).toBe('malformed_header');
    });
  });

  describe('tolerance', () => {
    const at = (ms: number) => new Date(now.getTime() + ms);

    it(`allows ${STRIPE_TOLERANCE_SECONDS} s either way, inclusive, in whole seconds`, () => {
      expect(STRIPE_TOLERANCE_SECONDS).toBe(300);
      expect(check(`t=${T},v1=${V1}`, { now: at(300_000) })).toBeNull();
      expect(check(`t=${T},v1=${V1}`, { now: at(300_999) })).toBeNull();
      expect(check(`t=${T},v1=${V1}`, { now: at(-300_000) })).toBeNull();
      expect(check(`t=${T},v1=${V1}`, { now: at(301_000) })).toBe('timestamp_out_of_tolerance');
      expect(check(`t=${T},v1=${V1}`, { now: at(-300_001) })).toBe('timestamp_out_of_tolerance');
    });

    it('takes another tolerance when given one', () => {
      expect(check(`t=${T},v1=${V1}`, { now: at(11_000), toleranceSeconds: 10 })).toBe('timestamp_out_of_tolerance');
      expect(check(`t=${T},v1=${V1}`, { now: at(10_000), toleranceSeconds: 10 })).toBeNull();
    });

    it('checks the timestamp before the signature', () => {
      expect(check(`t=${T},v1=${'0'.repeat(64)}`, { now: at(301_000) })).toBe('timestamp_out_of_tolerance');
    });
  });
});
