import { describe, expect, it } from '@jest/globals';
import { MAX_MENTIONS, mentionedUsernames } from './mentions.js';

describe(mentionedUsernames.name, () => {
  it('reads @usernames at the start, after spaces, punctuation and tags, lowercased, in order', () => {
    expect(mentionedUsernames('@alice hi @bob_2, (@Carol) and <b>@dave</b>!')).toEqual(['alice', 'bob_2', 'carol', 'dave']);
  });

  it('accepts a sentence full stop, colon or question mark right after the name', () => {
    expect(mentionedUsernames('thanks @alice. @bob: ok? @carol?')).toEqual(['alice', 'bob', 'carol']);
  });

  it('returns each name once', () => {
    expect(mentionedUsernames('@alice @ALICE @alice')).toEqual(['alice']);
  });

  it('ignores e-mail addresses', () => {
    expect(mentionedUsernames('write to a@b.com, alice@example.org, first.last@bob.io or x+y@carol.dev')).toEqual([]);
  });

  it('ignores names inside URLs, in text and in attributes', () => {
    expect(mentionedUsernames('see https://x.example/@alice and www.example.com/@bob')).toEqual([]);
    expect(mentionedUsernames('<a href="https://x.example/@carol">link</a> <img src="https://x/@dave.png" alt="@erin">')).toEqual([]);
    expect(mentionedUsernames('<a href="https://x.example/">@frank</a>')).toEqual(['frank']);
  });

  it('ignores names that break the username rule', () => {
    expect(mentionedUsernames('@ab @' + 'a'.repeat(31) + ' @bob-smith @bob.example @über @')).toEqual([]);
    expect(mentionedUsernames('@' + 'a'.repeat(30))).toEqual(['a'.repeat(30)]);
  });

  it('ignores a doubled @ and an @ glued to a word', () => {
    expect(mentionedUsernames('@@alice word@bob')).toEqual([]);
  });

  it(`keeps at most ${MAX_MENTIONS} distinct names`, () => {
    const text = Array.from({ length: 30 }, (_, i) => `@user_${i}`).join(' ');
    const names = mentionedUsernames(text);
    expect(names).toHaveLength(MAX_MENTIONS);
    expect(names[0]).toBe('user_0');
    expect(names[19]).toBe('user_19');
  });

  it('reads sanitized HTML entities as text around a name', () => {
    expect(mentionedUsernames('Tom &amp; @jerry &lt;3')).toEqual(['jerry']);
  });
});
