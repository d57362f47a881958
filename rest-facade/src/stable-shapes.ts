import type { Express } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { BASE_LOG, REQUEST_LOG } from './http.js';

/** The router's key of the matched route's pattern (router 2, Express 5's router), set on every request it routes. */
const { matchedRoute } = createRequire(import.meta.url)('router/lib/symbols.js') as { matchedRoute: symbol };
/** The router's key of the errors it has reported for a request (a registered symbol: router/lib/tracing.js). */
const seenErrors = Symbol.for('router.tracing.publishedErrors');

/**
 * What Express, its router and our middleware add to every request, in one order: the router's (`next`, `baseUrl`,
 * `originalUrl`, `params`, `route`, the matched pattern, the errors reported), parseurl's cache, cookie-parser's
 * (`secret`, `cookies`, `signedCookies`), the JSON parser's `body`, ours (`requestId`, `caller`, `personalKey`, the
 * loggers: http.ts, auth.ts), and the listener count EventEmitter keeps on the prototype (0) until a first listener.
 * The values are what reading them before gave (`undefined`, and 0 for the count).
 */
export const REQUEST_PROPERTIES: ReadonlyArray<readonly [string | symbol, unknown]> = [
  ['_eventsCount', 0],
  ['next', undefined],
  ['baseUrl', undefined],
  ['originalUrl', undefined],
  ['_parsedUrl', undefined],
  [matchedRoute, undefined],
  ['params', undefined],
  ['route', undefined],
  [seenErrors, undefined],
  ['requestId', undefined],
  ['caller', undefined],
  [BASE_LOG, undefined],
  [REQUEST_LOG, undefined],
  ['secret', undefined],
  ['cookies', undefined],
  ['signedCookies', undefined],
  ['body', undefined],
  ['personalKey', undefined],
];

/** Likewise for responses: Express's `locals`, and the status line `ServerResponse`'s prototype holds until set. */
export const RESPONSE_PROPERTIES: ReadonlyArray<readonly [string, unknown]> = [
  ['locals', undefined],
  ['statusCode', 200],
  ['statusMessage', undefined],
];

/**
 * Gives every request and response of the app one chain of hidden classes. Express sets the prototype of each
 * request and response (`Object.setPrototypeOf` in `app.handle`), and V8 keeps no transitions from the hidden class
 * a prototype change makes: every property added afterwards made a new hidden class, for every request. Each read or
 * write of a request's or a response's property then met a class it had never seen, in Express, the router, Node's
 * HTTP code and ours (about a hundred lookups a request missed V8's caches). The properties added here, before the
 * prototype changes, are only assigned afterwards. A property left out still works; from the request that adds it
 * on, that request's classes are its own again.
 */
export function stableShapes(http: Express): void {
  const app = http as unknown as { handle(req: IncomingMessage, res: ServerResponse, callback?: unknown): void };
  const handle = app.handle.bind(app);
  app.handle = (req, res, callback) => {
    const request = req as unknown as Record<string | symbol, unknown>;
    for (const [key, value] of REQUEST_PROPERTIES) if (!Object.hasOwn(request, key)) request[key] = value;
    const response = res as unknown as Record<string, unknown>;
    for (const [key, value] of RESPONSE_PROPERTIES) if (!Object.hasOwn(response, key)) response[key] = value;
    handle(req, res, callback);
  };
}
