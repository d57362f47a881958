import express, { Router, type ErrorRequestHandler } from 'express';
import type { OperationRunner } from '../../../gateway/src/graph.js';
import * as identity from '../../../subgraphs/identity/index.js';
import type { AppDeps } from '../../../subgraphs/kernel/index.js';
import { ROLES } from '../../../subgraphs/members/index.js';
import { requireCaller, requireKeyScope, resourceAuth } from '../auth.js';
import { HttpError, present, toHttpError, unwrap } from '../errors.js';
import type { RequestRunner } from '../typed-document.js';
import { contextOf, handle, requestLog } from '../http.js';
import { jsonOnly, refuseBadText } from '../input.js';
import { Docs } from './documents.js';
import { mountChallenges } from './challenges.js';
import { mountCourses } from './courses.js';
import { mountEvents } from './events.js';
import { boolParam, choiceParam, objectBody, pageParams, pick, stringParam, uuidParam } from './params.js';
import { commentRecord, communityRecord, fullCommunityRecord, listBody, memberRecord, postRecord, userRecord } from './shapes.js';
import { tribeByIdOrHandle } from './tribe-ref.js';
import { webhookResources } from './webhooks.js';

/** Resource-API error envelope: `{"error": {"code", "message", "details"?, "request_id"}}` (`request_id`: as `x-request-id`). */
export const resourceErrors: ErrorRequestHandler = (error, req, res, _next) => {
  const e = toHttpError(error);
  if (e.status >= 500) requestLog(req)?.error({ err: error }, 'unexpected error');
  const details = e.details === undefined ? {} : { details: e.details };
  res.status(e.status).set(e.headers).json({ error: { code: e.code, message: e.message, ...details, request_id: req.requestId } });
};

/**
 * The token-authenticated resource API (spec 4.5): `/v1/auth/*` and `/v1/communities/*`,
 * snake_case records in a `data` envelope, pages with `pagination`.
 */
export function resourceRouter(app: AppDeps, run: OperationRunner): Router {
  const r = Router();
  r.use(jsonOnly, express.json({ limit: app.config.bodyLimitBytes }), refuseBadText(), resourceAuth(app));

  const exec: RequestRunner = async (req, doc, variables) => unwrap(await run(contextOf(app, req), doc, variables));
  // An access token or a personal API key (svc_pk_...); a personal key also needs its method's scope.
  const signedIn = [requireCaller('Send a valid access token or personal API key: Authorization: Bearer <token>.'), requireKeyScope];

  // ---- auth ----
  r.post('/auth/login', handle(async (req, res) => {
    const out = await identity.loginWithTokens(app, objectBody(req), contextOf(app, req).clientAddress);
    res.json({
      data: {
        access_token: out.accessToken,
        refresh_token: out.refreshToken,
        expires_in: out.expiresIn,
        user: { id: out.user.id, email: out.user.email, username: out.user.username },
      },
    });
  }));
  r.post('/auth/refresh', handle(async (req, res) => {
    const out = await identity.refreshTokensFor(app, objectBody(req));
    res.json({ data: { access_token: out.accessToken, refresh_token: out.refreshToken, expires_in: out.expiresIn } });
  }));
  r.get('/auth/me', signedIn, handle(async (req, res) => {
    res.json({ data: userRecord(await identity.me(contextOf(app, req))) });
  }));

  // ---- communities ----
  const c = Router({ mergeParams: true });
  r.use('/communities', signedIn, c);
  c.use(tribeByIdOrHandle(app)); // `/communities/{id or handle}/...`: the routes below see the id
  const communityFields = { name: 'name', handle: 'handle', description: 'description', is_public: 'isPublic', category: 'category', metadata: 'metadata' };

  c.get('/', handle(async (req, res) => {
    const vars = { search: stringParam(req, 'search'), ...pageParams(req) };
    res.json(listBody((await exec(req, Docs.listCommunities, vars)).communities, communityRecord));
  }));
  c.post('/', handle(async (req, res) => {
    const data = await exec(req, Docs.createCommunity, { input: pick(objectBody(req), communityFields) });
    res.status(201).json({ data: fullCommunityRecord(data.createCommunity) });
  }));
  c.get('/:id', handle(async (req, res) => {
    res.json({ data: fullCommunityRecord(present((await exec(req, Docs.getCommunity, { id: String(req.params.id) })).community)) });
  }));
  c.patch('/:id', handle(async (req, res) => {
    const data = await exec(req, Docs.updateCommunity, { id: String(req.params.id), input: pick(objectBody(req), communityFields) });
    res.json({ data: fullCommunityRecord(data.updateCommunity) });
  }));
  c.delete('/:id', handle(async (req, res) => {
    await exec(req, Docs.deleteCommunity, { id: String(req.params.id) });
    res.status(204).end();
  }));

  // ---- members ----
  c.get('/:cid/members', handle(async (req, res) => {
    const vars = {
      communityId: String(req.params.cid),
      role: choiceParam(req, 'role', ROLES),
      search: stringParam(req, 'search'),
      ...pageParams(req),
    };
    res.json(listBody((await exec(req, Docs.listMembers, vars)).members, memberRecord));
  }));
  c.get('/:cid/members/:uid', handle(async (req, res) => {
    res.json({ data: memberRecord(present((await exec(req, Docs.getMember, { communityId: String(req.params.cid), userId: String(req.params.uid) })).member)) });
  }));
  c.patch('/:cid/members/:uid', handle(async (req, res) => {
    const { role } = objectBody(req);
    // The service checks the caller's rights first, then the role (a non-string is "no valid role").
    const vars = { communityId: String(req.params.cid), userId: String(req.params.uid), role: typeof role === 'string' ? role : null };
    const data = await exec(req, Docs.updateMemberRole, vars);
    res.json({ data: memberRecord(data.updateMemberRole) });
  }));
  c.delete('/:cid/members/:uid', handle(async (req, res) => {
    await exec(req, Docs.removeMember, { communityId: String(req.params.cid), userId: String(req.params.uid) });
    res.status(204).end();
  }));

  // ---- posts and comments ----
  // `body` is the text's name; `content` (the spec's first name) stays accepted, deprecated (issue 31).
  const postFields = { body: 'body', content: 'content', media_urls: 'mediaUrls', is_pinned: 'isPinned', visibility: 'visibility', status: 'status' };
  const postInput = (body: Record<string, unknown>) => {
    // GraphQL would quietly turn a lone string into a one-item list; the REST contract says array.
    if ('media_urls' in body && !Array.isArray(body.media_urls)) {
      throw new HttpError(400, 'invalid_input', 'media_urls: must be an array of URLs.', [{ field: 'media_urls', message: 'must be an array of URLs' }]);
    }
    return pick(body, postFields);
  };
  c.get('/:cid/posts', handle(async (req, res) => {
    const vars = {
      communityId: String(req.params.cid),
      pinned: boolParam(req, 'pinned'),
      authorId: uuidParam(req, 'author_id'),
      ...pageParams(req),
    };
    res.json(listBody((await exec(req, Docs.listPosts, vars)).posts, postRecord));
  }));
  c.post('/:cid/posts', handle(async (req, res) => {
    const data = await exec(req, Docs.createPost, { communityId: String(req.params.cid), input: postInput(objectBody(req)) });
    res.status(201).json({ data: postRecord(data.createPost) });
  }));
  c.get('/:cid/posts/:id', handle(async (req, res) => {
    res.json({ data: postRecord(present((await exec(req, Docs.getPost, { id: String(req.params.id), communityId: String(req.params.cid) })).post)) });
  }));
  c.patch('/:cid/posts/:id', handle(async (req, res) => {
    const vars = { id: String(req.params.id), communityId: String(req.params.cid), input: postInput(objectBody(req)) };
    res.json({ data: postRecord((await exec(req, Docs.updatePost, vars)).updatePost) });
  }));
  c.delete('/:cid/posts/:id', handle(async (req, res) => {
    await exec(req, Docs.deletePost, { id: String(req.params.id), communityId: String(req.params.cid) });
    res.status(204).end();
  }));
  c.get('/:cid/posts/:pid/comments', handle(async (req, res) => {
    const vars = { postId: String(req.params.pid), communityId: String(req.params.cid), ...pageParams(req) };
    res.json(listBody((await exec(req, Docs.listComments, vars)).comments, commentRecord));
  }));
  c.post('/:cid/posts/:pid/comments', handle(async (req, res) => {
    const input = pick(objectBody(req), { body: 'body', content: 'content', parent_id: 'parentId' });
    const data = await exec(req, Docs.createComment, { postId: String(req.params.pid), communityId: String(req.params.cid), input });
    res.status(201).json({ data: commentRecord(data.createComment) });
  }));

  // ---- courses and challenges ----
  mountCourses(c, exec);
  mountChallenges(c, exec);

  // ---- events ----
  mountEvents(c, exec);

  // ---- webhooks ----
  c.use('/:cid/webhooks', webhookResources(app, run));

  r.use((_req, _res, next) => next(new HttpError(404, 'not_found', 'No such route.')));
  r.use(resourceErrors);
  return r;
}
