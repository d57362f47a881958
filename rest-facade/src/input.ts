/**
 * The input rule at the REST edges (see `subgraphs/kernel/text.ts`): every surface mounts these in its own router,
 * so the refusal comes out in that surface's envelope through its error handler.
 */
import type { Request, RequestHandler } from 'express';
import { describeTextProblem, fieldOf, findBadText, type TextFinding } from '../../subgraphs/kernel/index.js';
import { HttpError } from './errors.js';

/**
 * 415 `unsupported_media_type` for a request that carries a body in anything but `application/json`, instead of
 * reading it as an empty body. A request without a body (no Content-Length or 0, no Transfer-Encoding) passes.
 */
export const jsonOnly: RequestHandler = (req, _res, next) => {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (hasBody && !req.is('application/json')) {
    next(new HttpError(415, 'unsupported_media_type', 'Send JSON with content-type application/json.'));
    return;
  }
  next();
};

const refusal = (status: number, code: string, finding: TextFinding, fallback: string): HttpError => {
  const field = fieldOf(finding) || fallback;
  const message = describeTextProblem(finding.problem);
  return new HttpError(status, code, `${field}: ${message}`, [{ field, message }]);
};

/** The first path segment that does not decode, or decodes to text the rule refuses. */
function badPathSegment(req: Request): boolean {
  for (const segment of req.path.split('/')) {
    if (!segment.includes('%')) continue; // a raw control character cannot pass Node's HTTP parser
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return true; // not valid percent-encoding (or encodes an unpaired surrogate): it names nothing
    }
    if (findBadText(decoded)) return true;
  }
  return false;
}

/**
 * Refuses a request whose text breaks the input rule, before authentication and before any work: a JSON body
 * (400 `invalid_input`, naming the field), a query parameter (400 `invalid_query`, naming it), or a path segment
 * (404 `not_found`: no resource has such a name; also when the segment is not valid percent-encoding).
 * Mount after the JSON parser. `query: false` leaves the query string to the routes (the Platform API ignores
 * values it cannot use, as its contract has no 400).
 */
export function refuseBadText(options: { query?: boolean } = {}): RequestHandler {
  const checkQuery = options.query ?? true;
  return (req, _res, next) => {
    if (badPathSegment(req)) return next(new HttpError(404, 'not_found', 'No such resource.'));
    if (checkQuery) {
      const inQuery = findBadText(req.query);
      if (inQuery) return next(refusal(400, 'invalid_query', inQuery, 'query'));
    }
    const inBody = findBadText(req.body);
    if (inBody) return next(refusal(400, 'invalid_input', inBody, 'body'));
    next();
  };
}
