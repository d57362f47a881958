/**
 * The one-click unsubscribe of mail (RFC 8058), no session: the signed token is the authority.
 * `POST /unsubscribe?token=...` (what a mail client sends for `List-Unsubscribe-Post: List-Unsubscribe=One-Click`, body
 * `List-Unsubscribe=One-Click`) turns the token's kinds' email off and answers 200; `GET /unsubscribe?token=...` (a
 * person following the link) changes nothing (link scanners fetch links) and shows a page whose button POSTs. A bad
 * token is 400 on both. Pages are plain HTML without scripts or styles (the deny-all CSP holds).
 */
import express, { Router, type Response } from 'express';
import { KIND_LABELS, readUnsubscribeToken, unsubscribe } from '../../../subgraphs/digest/index.js';
import { DomainError, type AppDeps } from '../../../subgraphs/kernel/index.js';

const escape = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const page = (res: Response, status: number, title: string, body: string) =>
  res
    .status(status)
    .type('text/html; charset=utf-8')
    .send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title></head><body><h1>${escape(title)}</h1>${body}</body></html>`);
const INVALID = '<p>This unsubscribe link is not valid. You can choose which emails you get in your notification settings.</p>';

export function unsubscribeRouter(app: AppDeps): Router {
  const r = Router();
  const token = (req: express.Request): unknown => req.query.token;

  r.get('/unsubscribe', (req, res) => {
    let kinds: string[];
    try {
      kinds = readUnsubscribeToken(app, token(req)).kinds.map((k) => KIND_LABELS[k]);
    } catch {
      page(res, 400, 'Link not valid', INVALID);
      return;
    }
    const action = `/unsubscribe?token=${encodeURIComponent(String(token(req)))}`;
    page(
      res,
      200,
      'Unsubscribe',
      `<p>Stop emails about ${escape(kinds.join(', '))}?</p>` +
        `<form method="post" action="${escape(action)}"><input type="hidden" name="List-Unsubscribe" value="One-Click">` +
        `<button type="submit">Unsubscribe</button></form>`,
    );
  });

  r.post('/unsubscribe', express.urlencoded({ extended: false, limit: 1024 }), async (req, res, next) => {
    try {
      const kinds = await unsubscribe(app, token(req));
      page(res, 200, 'Unsubscribed', `<p>You will no longer get emails about ${escape(kinds.map((k) => KIND_LABELS[k]).join(', '))}.</p>`);
    } catch (error) {
      if (error instanceof DomainError && error.code === 'invalid_token') page(res, 400, 'Link not valid', INVALID);
      else next(error);
    }
  });
  return r;
}
