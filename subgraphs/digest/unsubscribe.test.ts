import { describe, expect, it } from '@jest/globals';
import { signUnsubscribe, verifyUnsubscribe } from './unsubscribe.js';

const SECRET = 'test-secret-test-secret-test-secret-0123';
const USER = '6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b';

describe(verifyUnsubscribe.name, () => {
  it('verifies what it signed: the user and the kinds, sorted and without repeats', () => {
    const token = signUnsubscribe(SECRET, { userId: USER, kinds: ['mention', 'reply', 'mention'] });
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(verifyUnsubscribe(SECRET, token)).toEqual({ userId: USER, kinds: ['mention', 'reply'] });
  });

  it('refuses a token signed with another secret', () => {
    expect(verifyUnsubscribe(SECRET, signUnsubscribe(`${SECRET}x`, { userId: USER, kinds: ['reply'] }))).toBeNull();
  });

  it('refuses a changed payload or signature', () => {
    const [payload, signature] = signUnsubscribe(SECRET, { userId: USER, kinds: ['reply'] }).split('.');
    const widened = Buffer.from(`${USER}:message,reply`).toString('base64url');
    expect(verifyUnsubscribe(SECRET, `${widened}.${signature}`)).toBeNull();
    const flipped = `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
    expect(verifyUnsubscribe(SECRET, `${payload}.${flipped}`)).toBeNull();
  });

  it('refuses malformed input: not a string, too long, no signature, unknown kinds, no user id', () => {
    for (const bad of [undefined, 42, '', 'x', 'a.b', 'a'.repeat(700), `${USER}.sig`]) expect(verifyUnsubscribe(SECRET, bad)).toBeNull();
    const sign = (payload: string) => {
      const [, sig] = signUnsubscribe(SECRET, { userId: USER, kinds: ['reply'] }).split('.');
      return `${Buffer.from(payload).toString('base64url')}.${sig}`;
    };
    expect(verifyUnsubscribe(SECRET, sign(`${USER}:everything`))).toBeNull();
    expect(() => signUnsubscribe(SECRET, { userId: USER, kinds: [] })).toThrow();
  });
});
