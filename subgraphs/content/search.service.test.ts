import { describe, expect, it } from '@jest/globals';
import { MAX_QUERY_CHARS, normaliseQuery, renderSnippet } from './search.service.js';

const S = '\u0002';
const E = '\u0003';

describe('renderSnippet', () => {
  it('decodes the stored entities, escapes everything, and keeps only <mark> around the marked words', () => {
    expect(renderSnippet(`Tom &amp; Jerry &lt;script&gt;x&lt;/script&gt; ${S}run${E} "now" it's`)).toBe(
      'Tom &amp; Jerry &lt;script&gt;x&lt;/script&gt; <mark>run</mark> &quot;now&quot; it&#39;s',
    );
  });

  it('never lets a decoded entity open or close a mark, nor pass a control character', () => {
    expect(renderSnippet(`a &#2;b&#3; ${S}c${E} d`)).toBe('a b <mark>c</mark> d');
    // &#0; is U+FFFD in HTML, not NUL.
    expect(renderSnippet('x &#0; y')).toBe('x \uFFFD y');
  });

  it('balances marks whatever the input', () => {
    expect(renderSnippet(`${S}a ${S}b`)).toBe('<mark>a b</mark>');
    expect(renderSnippet(`a${E} b`)).toBe('a b');
  });

  it('collapses white space left by removed tags', () => {
    expect(renderSnippet('  one   two \n three ')).toBe('one two three');
  });
});

describe('normaliseQuery', () => {
  it('collapses and trims white space', () => {
    expect(normaliseQuery('  a \t b\n')).toBe('a b');
  });

  it(`cuts to ${MAX_QUERY_CHARS} code points without splitting an emoji`, () => {
    const cut = normaliseQuery('🎉'.repeat(10_000));
    expect(Array.from(cut)).toHaveLength(MAX_QUERY_CHARS);
    expect(cut).toBe('🎉'.repeat(MAX_QUERY_CHARS));
  });
});
