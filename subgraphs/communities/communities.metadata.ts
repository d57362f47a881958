import { z } from 'zod';

/**
 * The rules of a tribe's `metadata` (spec 2.6, issue 31): a small free-form JSON object its owner or admins set for
 * integrations, readable by whoever can see the tribe (never put a secret in it). Documented in the GraphQL schema,
 * the resource API's OpenAPI and docs/roles.md.
 */
export const METADATA_LIMITS = {
  /** Keys of the top-level object. */
  keys: 50,
  /** Characters of a key (at every level). */
  keyChars: 40,
  /** Levels of nesting: the metadata object is level 1, an object or array inside it level 2, and so on. */
  depth: 3,
  /** Bytes of the whole object serialised as JSON (UTF-8). */
  bytes: 4096,
} as const;

/** A key, at every level: 1 to 40 of A-Z a-z 0-9 _ . : - */
export const METADATA_KEY = /^[A-Za-z0-9_.:-]{1,40}$/;
/** Keys refused at every level: JavaScript's object prototype names. */
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

type Issue = { path: Array<string | number>; message: string };

/** Walks a value: keys and depth (the first problem only, with its path under `metadata`). */
function firstProblem(value: unknown, path: Array<string | number>, level: number): Issue | null {
  if (value === null || typeof value !== 'object') return null;
  if (level > METADATA_LIMITS.depth) return { path, message: `nesting deeper than ${METADATA_LIMITS.depth} levels (objects and arrays count)` };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = firstProblem(value[i], [...path, i], level + 1);
      if (found) return found;
    }
    return null;
  }
  for (const [key, inner] of Object.entries(value)) {
    if (!METADATA_KEY.test(key)) return { path: [...path, key], message: `key must be 1 to ${METADATA_LIMITS.keyChars} of A-Z a-z 0-9 _ . : -` };
    // Harmless as own properties of parsed JSON, but a trap for any later merge into a plain object.
    if (RESERVED_KEYS.has(key)) return { path: [...path, key], message: `key ${key} is reserved` };
    const found = firstProblem(inner, [...path, key], level + 1);
    if (found) return found;
  }
  return null;
}

/**
 * The `metadata` input: a JSON object (not an array or null) of at most 50 keys, keys matching `METADATA_KEY` at
 * every level, nested at most 3 levels, at most 4096 bytes serialised. It replaces the stored object whole (`{}`
 * clears it). Each refusal names the field and the rule.
 */
export const metadataInput = z.unknown().transform((value, ctx) => {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    ctx.addIssue({ code: 'custom', message: 'must be a JSON object ({} clears it)' });
    return z.NEVER;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).length;
  if (keys > METADATA_LIMITS.keys) {
    ctx.addIssue({ code: 'custom', message: `at most ${METADATA_LIMITS.keys} keys (got ${keys})` });
    return z.NEVER;
  }
  const problem = firstProblem(record, [], 1);
  if (problem) {
    ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
    return z.NEVER;
  }
  let serialised: string;
  try {
    serialised = JSON.stringify(record);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be plain JSON' });
    return z.NEVER;
  }
  const bytes = Buffer.byteLength(serialised, 'utf8');
  if (bytes > METADATA_LIMITS.bytes) {
    ctx.addIssue({ code: 'custom', message: `at most ${METADATA_LIMITS.bytes} bytes serialised as JSON (got ${bytes})` });
    return z.NEVER;
  }
  return JSON.parse(serialised) as Record<string, unknown>;
});
