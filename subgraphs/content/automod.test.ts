import { describe, expect, it } from '@jest/globals';
import { findBlockedDomain, findBlockedWord, normaliseDomain, normaliseWords, textOf } from './automod.js';

describe('automod matching', () => {
  describe('findBlockedWord', () => {
    it('matches whole words case-insensitively in the text, not inside other words or tags', () => {
      expect(findBlockedWord('<p>Buy CHEAP pills</p>', ['cheap'])).toBe('cheap');
      expect(findBlockedWord('<p>cheapest</p>', ['cheap'])).toBeNull();
      expect(findBlockedWord('<p class="cheap">fine</p>', ['cheap'])).toBeNull();
      expect(findBlockedWord('<p>so<b>cheap</b>!</p>', ['cheap'])).toBe('cheap');
      expect(findBlockedWord('<p>free   money now</p>', ['free money'])).toBe('free money');
      expect(findBlockedWord('<p>Ärger und ärger</p>', ['ärger'])).toBe('ärger');
      expect(findBlockedWord('<p>a.b+c</p>', ['b+c'])).toBe('b+c');
      expect(findBlockedWord('<p>anything</p>', [])).toBeNull();
    });
  });

  describe('findBlockedDomain', () => {
    it('matches the domain and its subdomains in links, images and text, not look-alikes', () => {
      const blocked = ['spam.example'];
      expect(findBlockedDomain('<a href="https://spam.example/x">x</a>', blocked)).toBe('spam.example');
      expect(findBlockedDomain('<a href="http://www.Spam.Example">x</a>', blocked)).toBe('spam.example');
      expect(findBlockedDomain('<p>visit cdn.spam.example today</p>', blocked)).toBe('spam.example');
      expect(findBlockedDomain('<img src="https://img.spam.example/a.png">', blocked)).toBe('spam.example');
      expect(findBlockedDomain('<a href="https://notspam.example">x</a>', blocked)).toBeNull();
      expect(findBlockedDomain('<a href="https://spam.example.org">x</a>', blocked)).toBeNull();
      expect(findBlockedDomain('<a href="https://spam.examples">x</a>', blocked)).toBeNull();
    });
  });

  describe('normalising', () => {
    it('normalises words and domains as stored', () => {
      expect(normaliseWords([' Spam ', 'spam', '', 'Free  Money'])).toEqual(['spam', 'free money']);
      expect(normaliseDomain('https://www.Spam.example/path?q=1')).toBe('spam.example');
      expect(normaliseDomain('*.bad.example:8080')).toBe('bad.example');
      expect(normaliseDomain('localhost')).toBeNull();
      expect(normaliseDomain('not a domain')).toBeNull();
    });

    it('reads text out of HTML', () => {
      expect(textOf('<p>a &amp; b</p>')).toBe(' a & b ');
    });
  });
});
