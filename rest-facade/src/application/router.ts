import express, { Router, type ErrorRequestHandler } from 'express';
import type { OperationRunner } from '../../../gateway/src/graph.js';
import * as identity from '../../../subgraphs/identity/index.js';
import type { AppDeps } from '../../../subgraphs/kernel/index.js';
import * as onboarding from '../../../subgraphs/onboarding/index.js';
import { SESSION_COOKIE, requireCaller, sessionAuth, sessionCookie } from '../auth.js';
import { HttpError, present, toHttpError, unwrap } from '../errors.js';
import { contextOf, handle, requestLog } from '../http.js';
import { jsonOnly, refuseBadText } from '../input.js';
import { objectBody } from '../resource/params.js';
import { affiliateRouter } from './affiliate.js';
import { webhookRoutes } from './webhooks.js';
import { apiKeysRouter } from './api-keys.js';
import { personalKeysRouter } from './personal-keys.js';
import { restDocument } from '../typed-document.js';

/**
 * Application-API error envelope: flat `{"error": "<code>", "message", "requestId"}`. `error` is the stable machine
 * code; `message` says what to change, naming the field and its rule when one field is at fault
 * (`password: 10 to 256 characters`), as the resource API's messages do; `requestId` is the `x-request-id`.
 */
export const flatErrors: ErrorRequestHandler = (error, req, res, _next) => {
  const e = toHttpError(error);
  if (e.status >= 500) requestLog(req)?.error({ err: error }, 'unexpected error');
  res.status(e.status).set(e.headers).json({ error: e.code, message: e.message, requestId: req.requestId });
};

/** Fixed GraphQL documents of the Application REST routes. */
export const AppDocs = {
  post: restDocument(`query AppPost($id: ID!) { post(id: $id) { id community { id } author { id } body pinnedAt createdAt } }`),
} as const;

const userBody = (u: identity.User) => ({ id: u.id, email: u.email, username: u.username, displayName: u.displayName });

/** Application REST routes of the web app (session cookie, flat errors). */
export function applicationRouter(app: AppDeps, run: OperationRunner): Router {
  const r = Router();
  r.use(jsonOnly, express.json({ limit: app.config.bodyLimitBytes }), refuseBadText());
  // Public and rate limited: mounted before the session lookup, so a flood of tracking requests reads no session.
  r.use(affiliateRouter(app));
  r.use(sessionAuth(app));
  const signedIn = requireCaller('Sign in first.');

  r.post('/auth/signup', handle(async (req, res) => {
    const { user, sessionToken } = await onboarding.signup(app, objectBody(req));
    res.cookie(SESSION_COOKIE, sessionToken, sessionCookie(app)).status(201).json({ user: userBody(user) });
  }));
  r.post('/auth/login', handle(async (req, res) => {
    const user = await identity.checkPassword(app, objectBody(req), contextOf(app, req).clientAddress);
    const token = await identity.openSession(app, user.id);
    res.cookie(SESSION_COOKIE, token, sessionCookie(app)).json({ user: userBody(user) });
  }));
  r.post('/auth/logout', handle(async (req, res) => {
    const token = req.cookies?.[SESSION_COOKIE];
    if (typeof token === 'string') await identity.closeSession(app, token);
    const { maxAge: _m, ...attributes } = sessionCookie(app);
    res.clearCookie(SESSION_COOKIE, attributes).json({ ok: true });
  }));
  r.get('/auth/me', signedIn, handle(async (req, res) => {
    res.json({ user: userBody(await identity.me(contextOf(app, req))) });
  }));

  // Anyone, signed in or not, by GraphQL's read rules (`post(id)`): a published public post of a public tribe is
  // readable without a session. A post the caller may not read, or none, is 404 when signed in and 401 when signed out
  // (signing in may show it); the two causes answer alike, so the route does not reveal which posts exist.
  r.get('/posts/:postId', handle(async (req, res) => {
    let post;
    try {
      post = present(unwrap(await run(contextOf(app, req), AppDocs.post, { id: String(req.params.postId) })).post);
    } catch (error) {
      if (!req.caller && error instanceof HttpError && error.status === 404) {
        throw new HttpError(401, 'unauthorized', 'Sign in first: the post is not public, or there is no such post.');
      }
      throw error;
    }
    res.json({
      id: post.id,
      communityId: post.community.id,
      authorId: post.author?.id ?? null,
      body: post.body,
      pinnedAt: post.pinnedAt,
      createdAt: post.createdAt,
    });
  }));
  r.use(apiKeysRouter(app, run));
  r.use('/account/api-keys', signedIn, personalKeysRouter(app, run));
  r.use('/communities/:handle/webhooks', signedIn, webhookRoutes(app, run));
  return r;
}
