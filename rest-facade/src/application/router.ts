import express, { Router, type ErrorRequestHandler } from 'express';
import type { OperationRunner } from '../../../gateway/src/graph.js';
import * as identity from '../../../subgraphs/identity/index.js';
import type { AppDeps } from '../../../subgraphs/kernel/index.js';
import * as onboarding from '../../../subgraphs/onboarding/index.js';
import { SESSION_COOKIE, requireCaller, sessionAuth, sessionCookie } from '../auth.js';
import { present, toHttpError, unwrap } from '../errors.js';
import { contextOf, handle } from '../http.js';
import { jsonOnly, refuseBadText } from '../input.js';
import { objectBody } from '../resource/params.js';
import { affiliateRouter } from './affiliate.js';
import { webhookRoutes } from './webhooks.js';
import { apiKeysRouter } from './api-keys.js';
import { restDocument } from '../typed-document.js';

/** Application-API error envelope: flat `{"error": "<code>"}`. */
export const flatErrors: ErrorRequestHandler = (error, req, res, _next) => {
  const e = toHttpError(error);
  if (e.status >= 500) req.log?.error({ err: error }, 'unexpected error');
  res.status(e.status).set(e.headers).json({ error: e.code });
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

  r.get('/posts/:postId', signedIn, handle(async (req, res) => {
    const post = present(unwrap(await run(contextOf(app, req), AppDocs.post, { id: String(req.params.postId) })).post);
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
  r.use('/communities/:handle/webhooks', signedIn, webhookRoutes(app, run));
  return r;
}
