import type { Request } from 'express';
import { characterCount, isUuid } from '../../../subgraphs/kernel/index.js';
import { HttpError } from '../errors.js';

const one = (req: Request, name: string): string | undefined => {
  const v = req.query[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new HttpError(400, 'invalid_query', `${name} must be given once.`);
  return v;
};

/** An optional positive-integer query parameter. */
export function intParam(req: Request, name: string): number | undefined {
  const v = one(req, name);
  if (v === undefined) return undefined;
  if (!/^\d{1,9}$/.test(v)) throw new HttpError(400, 'invalid_query', `${name} must be a positive integer.`);
  return Number(v);
}

/** The `page` and per-page query parameters (`per_page` on the resource API), as subgraph variables. */
export function pageParams(req: Request, perPageName = 'per_page'): { page: number | undefined; perPage: number | undefined } {
  return { page: intParam(req, 'page'), perPage: intParam(req, perPageName) };
}

/** An optional `true`/`false` query parameter. */
export function boolParam(req: Request, name: string): boolean | undefined {
  const v = one(req, name);
  if (v === undefined) return undefined;
  if (v !== 'true' && v !== 'false') throw new HttpError(400, 'invalid_query', `${name} must be true or false.`);
  return v === 'true';
}

/** An optional string query parameter. */
export const stringParam = (req: Request, name: string, max = 100): string | undefined => {
  const v = one(req, name);
  if (v !== undefined && characterCount(v) > max) throw new HttpError(400, 'invalid_query', `${name} must be at most ${max} characters.`);
  return v;
};

/** An optional UUID query parameter. */
export function uuidParam(req: Request, name: string): string | undefined {
  const v = one(req, name);
  if (v !== undefined && !isUuid(v)) throw new HttpError(400, 'invalid_query', `${name} must be a UUID.`);
  return v;
}

/** An optional query parameter that must be one of `allowed`. */
export function choiceParam<T extends string>(req: Request, name: string, allowed: readonly T[]): T | undefined {
  const v = one(req, name);
  if (v !== undefined && !(allowed as readonly string[]).includes(v)) {
    throw new HttpError(400, 'invalid_query', `${name} must be one of ${allowed.join(', ')}.`);
  }
  return v as T | undefined;
}

/** The JSON object body of a request, or 400. */
export function objectBody(req: Request): Record<string, unknown> {
  const body = req.body;
  if (body === undefined) return {};
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new HttpError(400, 'invalid_input', 'The request body must be a JSON object.');
  }
  return body as Record<string, unknown>;
}

/** Copies the keys present in `body` under new names (`snake` → `camel`), leaving absent ones absent. */
export function pick(body: Record<string, unknown>, names: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [from, to] of Object.entries(names)) if (from in body) out[to] = body[from];
  return out;
}
