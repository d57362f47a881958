import { z } from 'zod';

/**
 * The one input rule for text, on every surface: a string may hold any Unicode character except the C0 control
 * characters other than tab, line feed and carriage return (U+0000 to U+0008, U+000B, U+000C, U+000E to U+001F;
 * PostgreSQL cannot store U+0000 at all), and it must be well-formed UTF-16 (no lone surrogate, which has no
 * UTF-8 form). DEL (U+007F) and the C1 range are ordinary characters. Lengths are counted in characters (code
 * points): a limit of 500 accepts 500 emoji.
 */
export type TextProblem = 'control_character' | 'lone_surrogate';

/** Where a refused string sits in a JSON value (object keys and array indices, outermost first) and why. */
export interface TextFinding {
  path: Array<string | number>;
  problem: TextProblem;
}

const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]/;

/** Why `value` breaks the input rule, or null when it is acceptable text. */
export function textProblem(value: string): TextProblem | null {
  if (value.length < 64 ? hasControlShort(value) : CONTROL.test(value)) return 'control_character';
  // Node 20 has String.prototype.isWellFormed (ES2024); the compiler's lib is ES2023.
  if (!(value as unknown as { isWellFormed(): boolean }).isWellFormed()) return 'lone_surrogate';
  return null;
}

/** A plain loop beats the regular expression on short strings (most keys and values); the reverse on long ones. */
function hasControlShort(value: string): boolean {
  for (let i = 0; i < value.length; i += 1) {
    const c = value.charCodeAt(i);
    if (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return true;
  }
  return false;
}

/** The human words for a problem, as a validation message says them. */
export function describeTextProblem(problem: TextProblem): string {
  return problem === 'control_character'
    ? 'must not contain control characters (only tab, line feed and carriage return are allowed)'
    : 'must not contain unpaired UTF-16 surrogates';
}

interface Pending {
  value: object;
  key: string | number | undefined;
  parent: Pending | undefined;
}

const pathOf = (p: Pending | undefined, last?: string | number): Array<string | number> => {
  const path: Array<string | number> = last === undefined ? [] : [last];
  for (let at = p; at?.key !== undefined; at = at.parent) path.push(at.key);
  return path.reverse();
};

/**
 * The first string (or object key) in a JSON-like value that breaks the input rule, or null. Within one object or
 * array its own strings are checked before its nested values. Walks iteratively, so a deeply nested body cannot
 * overflow the stack, and allocates only for nested objects; numbers, booleans, null and non-plain values such as
 * Buffers are not text and pass.
 */
export function findBadText(value: unknown): TextFinding | null {
  if (typeof value === 'string') {
    const problem = textProblem(value);
    return problem ? { path: [], problem } : null;
  }
  if (value === null || typeof value !== 'object') return null;
  const stack: Pending[] = [{ value, key: undefined, parent: undefined }];
  const nested: Pending[] = [];
  while (stack.length) {
    const at = stack.pop()!;
    const v = at.value;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i += 1) {
        const item: unknown = v[i];
        if (typeof item === 'string') {
          const problem = textProblem(item);
          if (problem) return { path: pathOf(at, i), problem };
        } else if (item !== null && typeof item === 'object') nested.push({ value: item, key: i, parent: at });
      }
    } else if (isPlainObject(v)) {
      for (const key in v) {
        const keyProblem = textProblem(key);
        if (keyProblem) return { path: pathOf(at, key), problem: keyProblem };
        const item: unknown = (v as Record<string, unknown>)[key];
        if (typeof item === 'string') {
          const problem = textProblem(item);
          if (problem) return { path: pathOf(at, key), problem };
        } else if (item !== null && typeof item === 'object') nested.push({ value: item, key, parent: at });
      }
    }
    // Nested values in document order: pushed last-first, so the first is popped next.
    while (nested.length) stack.push(nested.pop()!);
  }
  return null;
}

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** A finding's path as a field name: `input.content`, `media_urls.0`. */
export const fieldOf = (finding: TextFinding, prefix: Array<string | number> = []): string => [...prefix, ...finding.path].join('.');

/** The number of characters (code points) in a string: an emoji counts 1, not 2. */
export function characterCount(value: string): number {
  let n = 0;
  for (let i = 0; i < value.length; i += 1) {
    const c = value.charCodeAt(i);
    // A high surrogate followed by a low one is one character.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < value.length) {
      const d = value.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i += 1;
    }
    n += 1;
  }
  return n;
}

/** Options of a `text()` schema. */
export interface TextOptions {
  /** Most characters (code points) allowed, after trimming when `trim` is set. */
  max: number;
  /** Fewest characters; `min: 1` makes the field required-non-empty. */
  min?: number;
  /** Trim surrounding white space first. */
  trim?: boolean;
  /** Message when the value is not a string, and (unless `tooShort` is given) when it is shorter than `min`. */
  required?: string;
  /** Message when shorter than `min`. */
  tooShort?: string;
  /** Message when longer than `max` (default `at most <max> characters`). */
  tooLong?: string;
}

/**
 * The zod schema of a user-visible text field: the input rule (no control characters, no lone surrogates) and
 * length limits counted in characters (code points), not UTF-16 units or bytes.
 */
export function text(options: TextOptions): z.ZodString {
  const { max, min, trim, required, tooLong = `at most ${max} characters` } = options;
  const tooShort = options.tooShort ?? required ?? `at least ${min} characters`;
  let schema = required ? z.string({ error: required }) : z.string();
  if (trim) schema = schema.trim();
  schema = schema.superRefine((value, ctx) => {
    const problem = textProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: describeTextProblem(problem) });
  });
  // Code units bound code points from above, so the count runs only for strings that might be too long.
  schema = schema.refine((value) => value.length <= max || characterCount(value) <= max, tooLong);
  if (min !== undefined) {
    schema = schema.refine((value) => value.length >= min * 2 || characterCount(value) >= min, tooShort);
  }
  return schema;
}

/** Bidirectional embedding, override and isolate controls (U+202A to U+202E, U+2066 to U+2069): they reorder what follows. */
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/;
/** A character that shows something: not white space, not a default-ignorable or format character, not a mark alone. */
const VISIBLE = /[^\p{White_Space}\p{Default_Ignorable_Code_Point}\p{Cc}\p{Cf}\p{M}\u2800]/u;

/**
 * Why `value` cannot be a name (a display name, a tribe's name) beyond the text rule, or null: a name must show at
 * least one character (not only spaces, zero-width or format characters: "\u200B mentioned you" impersonates
 * nobody), and must not hold bidi controls, which make a name read differently from what it is. Text bodies keep
 * what people write; handles and usernames are ASCII already.
 */
export function nameProblem(value: string): string | null {
  if (BIDI_CONTROL.test(value)) return 'must not contain bidirectional override or isolate controls (U+202A to U+202E, U+2066 to U+2069)';
  if (!VISIBLE.test(value)) return 'must contain at least one visible character';
  return null;
}

/** `text()` for a name: the text rule, its lengths, and `nameProblem`'s rule. */
export function nameText(options: TextOptions): z.ZodString {
  return text(options).superRefine((value, ctx) => {
    const problem = nameProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
}
