import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from 'pino';
import type { AppDeps, Caller, RequestContext } from '../../subgraphs/kernel/index.js';
import { WELL_FORMED_REQUEST_ID, withRequestId } from '../../subgraphs/kernel/logging.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      requestId: string;
      caller: Caller | null;
    }
  }
}

/**
 * Request id (the caller's `x-request-id` when well-formed, see `WELL_FORMED_REQUEST_ID`, else a UUID) on the request,
 * the response and every log line written while serving it (`withRequestId`: service code logging on `app.log` too).
 */
export function requestLogging(log: Logger): RequestHandler {
  const http = pinoHttp({
    logger: log,
    genReqId: (req, res) => {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && WELL_FORMED_REQUEST_ID.test(given) ? given : randomUUID();
      res.setHeader('x-request-id', id);
      return id;
    },
    customProps: (req) => ({ requestId: String(req.id) }),
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    // Only what is needed: response headers carry Set-Cookie (session tokens), request URLs may carry queries.
    serializers: {
      req: (req) => ({ id: req.id, method: req.method, url: req.url?.split('?')[0] }),
      res: (res) => ({ statusCode: res.statusCode }),
    },
  });
  return (req, res, next) => {
    http(req, res);
    req.requestId = String(req.id);
    req.caller = null;
    withRequestId(req.requestId, next);
  };
}

/** The service context of an HTTP request. */
export const contextOf = (app: AppDeps, req: Request): RequestContext => ({
  app,
  caller: req.caller,
  requestId: req.requestId,
  clientAddress: req.ip ?? req.socket.remoteAddress,
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
