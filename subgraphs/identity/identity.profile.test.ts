import { describe, expect, it } from '@jest/globals';
import { DomainError } from '../kernel/index.js';
import { checkNewPassword, isProfileUrl, parseProfileChanges } from './identity.profile.js';

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    const e = error as DomainError;
    return { code: e.code, fields: Array.isArray(e.details) ? e.details.map((d: { field: string }) => d.field) : undefined };
  }
  throw new Error('expected a refusal');
};

describe('isProfileUrl', () => {
  it.each([
    'https://example.com',
    'https://example.com/',
    'HTTPS://Example.com/a?b=c#d',
    'https://例え.jp/パス',
    'https://[::1]:8443/x',
    'https://127.0.0.1/x',
  ])('accepts %s', (url) => {
    expect(isProfileUrl(url)).toBe(true);
  });

  it.each([
    ['http:', 'http://example.com'],
    ['javascript:', 'javascript:alert(1)'],
    ['javascript: dressed as a path', 'javascript://example.com/%0aalert(1)'],
    ['data:', 'data:text/html,<script>alert(1)</script>'],
    ['credentials', 'https://user:pass@example.com'],
    ['a user name', 'https://user@example.com'],
    ['an empty user name and password', 'https://:@example.com'],
    ['no host', 'https:///path'],
    ['no slashes', 'https:example.com'],
    ['backslashes', 'https:\\\\example.com'],
    ['a relative URL', '/profile'],
    ['a scheme-relative URL', '//example.com'],
    ['leading white space', ' https://example.com'],
    ['a tab inside', 'https://exa\tmple.com'],
    ['a bad port', 'https://example.com:99999'],
    ['over 2048 characters', `https://example.com/${'a'.repeat(2030)}`],
    ['the empty string', ''],
  ])('refuses %s', (_what, url) => {
    expect(isProfileUrl(url)).toBe(false);
  });
});

describe('parseProfileChanges', () => {
  it('keeps exactly the fields sent, trimming names, bio and location', () => {
    expect(parseProfileChanges({ bio: '  hi  ' })).toEqual({ bio: 'hi' });
    expect(parseProfileChanges({ displayName: ' Ada ', links: [] })).toEqual({ displayName: 'Ada', links: [] });
  });

  it('keeps an explicit null for avatarUrl and location, and an empty location is null', () => {
    expect(parseProfileChanges({ avatarUrl: null, location: null })).toEqual({ avatarUrl: null, location: null });
    expect(parseProfileChanges({ location: '   ' })).toEqual({ location: null });
  });

  it('ignores fields that are undefined (not sent)', () => {
    expect(parseProfileChanges({ bio: 'x', avatarUrl: undefined })).toEqual({ bio: 'x' });
  });

  it('refuses an input with nothing sent as empty', () => {
    expect(refusal(() => parseProfileChanges({}))).toEqual({ code: 'empty', fields: undefined });
    expect(refusal(() => parseProfileChanges({ bio: undefined }))).toEqual({ code: 'empty', fields: undefined });
  });

  it('counts the bio in code points: 500 emoji pass, 501 do not', () => {
    expect(parseProfileChanges({ bio: '😀'.repeat(500) }).bio).toHaveLength(1000);
    expect(refusal(() => parseProfileChanges({ bio: '😀'.repeat(501) }))).toEqual({ code: 'invalid_input', fields: ['bio'] });
  });

  it('refuses control characters and lone surrogates (the kernel text rule)', () => {
    expect(refusal(() => parseProfileChanges({ bio: 'a\u0000b' }))).toEqual({ code: 'invalid_input', fields: ['bio'] });
    expect(refusal(() => parseProfileChanges({ location: `x${String.fromCharCode(0xd800)}` }))).toEqual({ code: 'invalid_input', fields: ['location'] });
  });

  it('names every refused field, with the index of a refused link', () => {
    expect(refusal(() => parseProfileChanges({ displayName: null, links: ['https://ok.example', 'http://no.example'] }))).toEqual({
      code: 'invalid_input',
      fields: ['displayName', 'links.1'],
    });
  });
});

describe('checkNewPassword', () => {
  it('accepts 10 to 256 characters and refuses the rest as weak_password, naming the field', () => {
    expect(() => checkNewPassword('x'.repeat(10))).not.toThrow();
    expect(() => checkNewPassword('x'.repeat(256))).not.toThrow();
    expect(refusal(() => checkNewPassword('x'.repeat(9)))).toEqual({ code: 'weak_password', fields: ['password'] });
    expect(refusal(() => checkNewPassword('x'.repeat(257)))).toEqual({ code: 'weak_password', fields: ['password'] });
  });
});
