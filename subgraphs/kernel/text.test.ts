import { describe, expect, it } from '@jest/globals';
import { characterCount, fieldOf, findBadText, text, textProblem } from './text.js';

const HIGH = String.fromCharCode(0xd800);
const LOW = String.fromCharCode(0xdc00);

describe('textProblem', () => {
  it('refuses NUL and the other C0 control characters except tab, line feed and carriage return', () => {
    for (let c = 0; c < 0x20; c += 1) {
      const allowed = c === 0x09 || c === 0x0a || c === 0x0d;
      expect([c, textProblem(`a${String.fromCharCode(c)}b`)]).toEqual([c, allowed ? null : 'control_character']);
      expect([c, textProblem(`${'a'.repeat(100)}${String.fromCharCode(c)}`)]).toEqual([c, allowed ? null : 'control_character']);
    }
  });

  it('allows DEL, C1 controls, accents, CJK and emoji (a valid surrogate pair)', () => {
    expect(textProblem('\u007f \u0085 é 漢字 😀 👩‍👩‍👧')).toBeNull();
  });

  it('refuses a lone high surrogate, a lone low one and a reversed pair', () => {
    expect(textProblem(`x${HIGH}`)).toBe('lone_surrogate');
    expect(textProblem(`${HIGH}y`)).toBe('lone_surrogate');
    expect(textProblem(`${LOW}`)).toBe('lone_surrogate');
    expect(textProblem(`${LOW}${HIGH}`)).toBe('lone_surrogate');
  });
});

describe('findBadText', () => {
  it('answers null for clean values of every JSON type', () => {
    expect(findBadText({ a: 'tab\there', b: [1, true, null, 'line\r\nbreak'], c: { d: 2.5 } })).toBeNull();
    expect(findBadText('plain')).toBeNull();
    expect(findBadText(undefined)).toBeNull();
    expect(findBadText(Buffer.from([0]))).toBeNull();
  });

  it('names the path of the first offending string in document order', () => {
    const value = { input: { title: 'ok', content: 'a\u0000b', media: ['x', `y${HIGH}`] } };
    const found = findBadText(value);
    expect(found).toEqual({ path: ['input', 'content'], problem: 'control_character' });
    expect(fieldOf(found!)).toBe('input.content');
    expect(findBadText({ input: { media: ['x', `y${HIGH}`] } })).toEqual({ path: ['input', 'media', 1], problem: 'lone_surrogate' });
    expect(findBadText('\u0001')).toEqual({ path: [], problem: 'control_character' });
  });

  it('checks object keys too', () => {
    expect(findBadText({ outer: { 'bad\u0000key': 1 } })).toEqual({ path: ['outer', 'bad\u0000key'], problem: 'control_character' });
  });

  it('walks 100,000 levels of nesting without overflowing the stack', () => {
    let deep: unknown = 'x\u0000';
    for (let i = 0; i < 100_000; i += 1) deep = [deep];
    const found = findBadText(deep);
    expect(found?.path).toHaveLength(100_000);
    expect(found?.problem).toBe('control_character');
  });
});

describe('characterCount', () => {
  it('counts code points: an emoji is one character, a lone surrogate is one', () => {
    expect(characterCount('')).toBe(0);
    expect(characterCount('abc')).toBe(3);
    expect(characterCount('😀😀')).toBe(2);
    expect(characterCount(`a${HIGH}`)).toBe(2);
    expect(characterCount(`${HIGH}${HIGH}${LOW}`)).toBe(2);
  });
});

describe('text', () => {
  const name = text({ max: 5, min: 1, trim: true, required: 'name is required' });

  it('accepts max emoji and refuses one more, counted in characters', () => {
    expect(name.safeParse('😀😀😀😀😀').success).toBe(true);
    const over = name.safeParse('😀😀😀😀😀😀');
    expect(over.success).toBe(false);
    expect(over.error?.issues[0].message).toBe('at most 5 characters');
  });

  it('trims first, then applies min and max', () => {
    expect(name.parse('  ab  ')).toBe('ab');
    expect(name.safeParse('   ').error?.issues[0].message).toBe('name is required');
    expect(name.safeParse(5).error?.issues[0].message).toBe('name is required');
  });

  it('refuses control characters and lone surrogates with the rule', () => {
    expect(name.safeParse('a\u0000').error?.issues[0].message).toMatch(/control characters/);
    expect(name.safeParse(`a${LOW}`).error?.issues[0].message).toMatch(/surrogates/);
    expect(name.safeParse('a\tb').success).toBe(true);
  });
});
