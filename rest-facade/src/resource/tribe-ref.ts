import type { RequestHandler } from 'express';
import { isUuid, type AppDeps } from '../../../subgraphs/kernel/index.js';
import { getCommunityByHandle } from '../../../subgraphs/tribes/index.js';
import { contextOf } from '../http.js';

/**
 * Lets every `/v1/communities/{id}` path, and every path below it (`/{cid}/posts`, `/{cid}/webhooks`...), name the
 * tribe by its id or by its handle (as the control plane and the console do): mounted at the top of the communities
 * router, it reads the first path segment and, when it is not a UUID, looks it up as a handle (any letter case) and
 * puts the tribe's id in its place, so each route and document keeps taking an id. An unknown handle is 404
 * `not_found`, `Community not found: no tribe with handle "<handle>"`; an unknown id is answered by the route,
 * `Community not found: no tribe with id "<id>"`. A tribe's record is visible to everyone, so resolving a handle
 * reveals nothing the id would not.
 */
export function tribeByIdOrHandle(app: AppDeps): RequestHandler {
  return async (req, _res, next) => {
    const match = /^\/([^/?]+)(.*)$/s.exec(req.url);
    if (!match) return next();
    let segment: string;
    try {
      segment = decodeURIComponent(match[1]);
    } catch {
      return next(); // not a handle either: the route answers it as the unknown id it is
    }
    if (isUuid(segment)) return next();
    try {
      const community = await getCommunityByHandle(contextOf(app, req), segment);
      req.url = `/${community.id}${match[2]}`;
      next();
    } catch (error) {
      next(error);
    }
  };
}
