import { describe, it, expect } from '@jest/globals';
import { anySignatureMatches, bytesToHex, constantTimeEqual, formatSignatureHeader, parseSignatureHeader } from '../src/core.js';
import { WebhookVerificationError } from '../src/errors.js';

const HEX = 'ab'.repeat(32);
const OTHER = 'cd'.repeat(32);

/** The error code and the start of the message `parseSignatureHeader` throws for `value`. */
function refusal(value: string): { code: string; message: string } {
  try {
    parseSignatureHeader(value);
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    return { code: error.code, message: error.message };
  }
  throw new Error(`expected ${JSON.stringify(value)} to be refused`);
}

describe(parseSignatureHeader.name, () => {
  it('reads what formatSignatureHeader writes', () => {
    expect(parseSignatureHeader(formatSignatureHeader(1_700_000_000, HEX))).toEqual({ timestamp: 1_700_000_000, signatures: [HEX] });
  });

  it('keeps every v1 in order, and the whole value after the first "="', () => {
    expect(parseSignatureHeader(`v1=${OTHER},t=7,v1=${HEX}`)).toEqual({ timestamp: 7, signatures: [OTHER, HEX] });
    expect(parseSignatureHeader('t=7,v1=a=b')).toEqual({ timestamp: 7, signatures: ['a=b'] });
  });

  it('accepts the same t repeated (a header sent twice arrives joined by a comma)', () => {
    expect(parseSignatureHeader(`t=7,v1=${HEX}, t=7,v1=${OTHER}`)).toEqual({ timestamp: 7, signatures: [HEX, OTHER] });
  });

  it('skips empty entries, entries without "=", empty v1 values and other keys, including V1 and T in capitals', () => {
    expect(parseSignatureHeader(`,,t=7,,junk,v1=,V1=${OTHER},T=9,v2=${OTHER},v1=${HEX},`)).toEqual({ timestamp: 7, signatures: [HEX] });
  });

  it('accepts t=0 and the largest safe integer (the replay window is checked later)', () => {
    expect(parseSignatureHeader(`t=0,v1=${HEX}`).timestamp).toBe(0);
    expect(parseSignatureHeader(`t=${Number.MAX_SAFE_INTEGER},v1=${HEX}`).timestamp).toBe(Number.MAX_SAFE_INTEGER);
  });

  it.each([
    ['t=7,t=8', `t=7,v1=${HEX},t=8`, /t= entries that disagree/],
    ['no t', `v1=${HEX}`, /no t= entry/],
    ['an empty string', '', /no t= entry/],
    ['no v1', 't=7,v0=aa', /no v1= entry/],
    ['only empty v1', 't=7,v1=, v1= ', /no v1= entry/],
    ['an empty t', `t=,v1=${HEX}`, /not unix seconds/],
    ['a fractional t', `t=7.5,v1=${HEX}`, /not unix seconds/],
    ['a negative t', `t=-7,v1=${HEX}`, /not unix seconds/],
    ['an exponent t', `t=1e9,v1=${HEX}`, /not unix seconds/],
    ['a hex t', `t=0x10,v1=${HEX}`, /not unix seconds/],
    ['a t beyond the safe integers', `t=${'9'.repeat(16)},v1=${HEX}`, /not unix seconds/],
  ])('refuses %s as malformed_header', (_what, value, message) => {
    const { code, message: text } = refusal(value);
    expect(code).toBe('malformed_header');
    expect(text).toMatch(message);
    expect(text).toContain('expected "t=<unix seconds>,v1=<lowercase hex>"');
  });

  it('quotes at most 20 characters of a bad t', () => {
    expect(refusal(`t=${'x'.repeat(500)},v1=${HEX}`).message).toContain(`t=${'x'.repeat(20)} is not`);
  });
});

describe(anySignatureMatches.name, () => {
  const expected = Uint8Array.from(Buffer.from(HEX, 'hex'));

  it('matches when any candidate is the expected signature', () => {
    expect(anySignatureMatches(expected, [OTHER, HEX], constantTimeEqual)).toBe(true);
    expect(anySignatureMatches(expected, [OTHER], constantTimeEqual)).toBe(false);
    expect(anySignatureMatches(expected, [], constantTimeEqual)).toBe(false);
  });

  it('refuses upper-case hex and candidates of another length without comparing them', () => {
    const compared: string[] = [];
    const equal = (a: Uint8Array, b: Uint8Array) => {
      compared.push(bytesToHex(b));
      return constantTimeEqual(a, b);
    };
    expect(anySignatureMatches(expected, [HEX.toUpperCase(), HEX.slice(2), `${HEX}ab`, `${HEX.slice(2)}zz`], equal)).toBe(false);
    expect(compared).toEqual([]);
  });

  it('compares every well-formed candidate, even after a match', () => {
    const compared: string[] = [];
    const equal = (a: Uint8Array, b: Uint8Array) => {
      compared.push(bytesToHex(b));
      return constantTimeEqual(a, b);
    };
    expect(anySignatureMatches(expected, [HEX, OTHER], equal)).toBe(true);
    expect(compared).toEqual([HEX, OTHER]);
  });
});

describe(constantTimeEqual.name, () => {
  it('is true only for the same bytes and the same length', () => {
    expect(constantTimeEqual(Uint8Array.of(1, 2, 3), Uint8Array.of(1, 2, 3))).toBe(true);
    expect(constantTimeEqual(Uint8Array.of(1, 2, 3), Uint8Array.of(1, 2, 4))).toBe(false);
    expect(constantTimeEqual(Uint8Array.of(1, 2, 3), Uint8Array.of(1, 2))).toBe(false);
    expect(constantTimeEqual(new Uint8Array(0), new Uint8Array(0))).toBe(true);
  });
});
