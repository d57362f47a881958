import { Router } from 'express';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { trackClick } from '../../../subgraphs/affiliate/index.js';
import type { AppDeps } from '../../../subgraphs/kernel/index.js';
import { HttpError } from '../errors.js';
import { handle } from '../http.js';

/** Tracking requests accepted per client IP per fixed 60-second window (counted whatever their outcome). */
export const AFFILIATE_TRACK_PER_MINUTE = 30;

/**
 * `POST /affiliate/track` (spec 4.3): public, no authentication. `{code}` records a click for a known
 * affiliate code and answers `{}`; an unknown or malformed code (or a body that is not `{code}`) is 400 `invalid_code`; more than
 * `AFFILIATE_TRACK_PER_MINUTE` requests from one IP in a minute are 429 `rate_limited` with Retry-After,
 * before anything is read or written. Errors are flat (`{"error": "<code>"}`).
 */
export function affiliateRouter(app: AppDeps): Router {
  const r = Router();
  // Per process and in memory: one instance's budget; enough to keep one client from flooding the table.
  const limiter = new RateLimiterMemory({ points: AFFILIATE_TRACK_PER_MINUTE, duration: 60, keyPrefix: 'affiliate_track' });
  r.post('/affiliate/track', handle(async (req, res) => {
    try {
      await limiter.consume(req.ip ?? req.socket.remoteAddress ?? 'unknown');
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      res.setHeader('Retry-After', String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000))));
      throw new HttpError(429, 'rate_limited', 'Too many tracking requests from this address; retry later.');
    }
    const body: unknown = req.body;
    const code = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as { code?: unknown }).code : undefined;
    await trackClick(app, code);
    res.json({});
  }));
  return r;
}
