import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import type { AppDeps, Caller, RequestContext } from '../../subgraphs/kernel/index.js';
import { requestIdFrom } from '../../subgraphs/kernel/logging.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      requestId: string;
      caller: Caller | null;
    }
  }
}

/** The process's logger, kept on each request for `requestLog`. */
export const BASE_LOG = Symbol('svc.baseLog');
/** The request's own logger, made by `requestLog` the first time it is asked for. */
export const REQUEST_LOG = Symbol('svc.requestLog');
type Logged = Request & { [BASE_LOG]?: Logger; [REQUEST_LOG]?: Logger };

/**
 * Request id (`requestIdFrom`: the caller's `x-request-id` when well-formed, else a UUID) on the request,
 * the response and every log line written while serving it (the request's context carries it: `requestLogger`), and
 * one line per answer when it is finished or its connection closed: `request completed` at `info`, or
 * `request errored` at `error` for a 5xx, with `req` (`id`, `method`, the path without its query), `res`
 * (`statusCode`), `responseTime` (ms) and `requestId`. Nothing is made for a line the level does not write, and the
 * request's own logger (`requestLog`) only when something asks for it.
 */
export function requestLogging(log: Logger): RequestHandler {
  return (req, res, next) => {
    const id = requestIdFrom(req.headers['x-request-id']);
    res.setHeader('x-request-id', id);
    req.requestId = id;
    req.caller = null;
    (req as Logged)[BASE_LOG] = log;
    const started = Date.now();
    let logged = false;
    const complete = () => {
      if (logged) return;
      logged = true;
      const failed = res.statusCode >= 500;
      if (!log.isLevelEnabled(failed ? 'error' : 'info')) return;
      const line = { req: requestFields(req), res: { statusCode: res.statusCode }, responseTime: Date.now() - started, requestId: id };
      if (failed) log.error({ ...line, err: new Error(`failed with status code ${res.statusCode}`) }, 'request errored');
      else log.info(line, 'request completed');
    };
    res.once('finish', complete);
    res.once('close', complete);
    next();
  };
}

/** What a request's log lines say of it: its id, method and path (a query may carry what is not for logs). */
const requestFields = (req: Request) => ({ id: req.requestId, method: req.method, url: req.originalUrl.split('?')[0] });

/** The logger of a request's own lines (`req` and `requestId` bound), made the first time it is asked for. */
export function requestLog(req: Request): Logger | undefined {
  const logged = req as Logged;
  if (logged[REQUEST_LOG] || !logged[BASE_LOG]) return logged[REQUEST_LOG];
  return (logged[REQUEST_LOG] = logged[BASE_LOG].child({ req: requestFields(req), requestId: req.requestId }));
}

/** The service context of an HTTP request. */
export const contextOf = (app: AppDeps, req: Request): RequestContext => ({
  app,
  caller: req.caller,
  requestId: req.requestId,
  // `trust proxy` is off (app.ts), so this is what `req.ip` answers, without proxy-addr parsing X-Forwarded-For into
  // a list of addresses at every read to drop all but this one.
  clientAddress: req.socket.remoteAddress,
});

/** Wraps an async handler (Express 5 forwards rejections; this keeps handler signatures short). */
export const handle =
  (fn: (req: Request, res: Response) => Promise<unknown> | unknown): RequestHandler =>
  async (req: Request, res: Response, next: NextFunction) => {
    try {
      await fn(req, res);
    } catch (error) {
      next(error);
    }
  };
