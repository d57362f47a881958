import { existsSync, readFileSync } from 'node:fs';
import { Router, type Response } from 'express';
import type { OperationRunner } from '../../../gateway/src/graph.js';
import type { AppDeps } from '../../../subgraphs/kernel/index.js';
import { ApiKeyDocs } from '../application/api-keys.js';
import { sessionAuth } from '../auth.js';
import { toHttpError, unwrap } from '../errors.js';
import { contextOf, handle } from '../http.js';

/**
 * The pages' policy: our own script and stylesheet only (no inline script or style, no eval), calls to this origin
 * only, forms and framing nowhere else. Replaces the deny-all policy `securityHeaders` sets for JSON.
 */
export const PORTAL_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The built assets: `npm run build` (scripts/build-console.ts) bundles portal/console/client/ with esbuild into
 * dist/portal/console/. Compiled, this module is dist/rest-facade/src/portal/; from the sources, rest-facade/src/portal/.
 */
const ASSETS = new URL(import.meta.url.includes('/dist/rest-facade/') ? '../../../portal/console/' : '../../../dist/portal/console/', import.meta.url);

const ASSET_TYPES: Record<string, string> = { 'console.js': 'text/javascript; charset=utf-8', 'console.css': 'text/css; charset=utf-8' };

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

/** A whole page: our stylesheet, our one script (deferred), the body given. `data-*` carries what the script needs. */
function page(title: string, data: Record<string, string>, body: string): string {
  const attributes = Object.entries(data)
    .map(([k, v]) => ` data-${k}="${escapeHtml(v)}"`)
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/assets/console.css">
<script src="/console/assets/console.js" defer></script>
</head>
<body${attributes}>
<a class="skip" href="#main">Skip to content</a>
${body}
</body>
</html>
`;
}

const signInPage = (handle: string) =>
  signInShell(`Sign in: ${handle} console`, { page: 'signin', handle }, `Sign in to the console of <span class="handle">${escapeHtml(handle)}</span>`, "The creator console is for the tribe's owner and admins.");

/** The sign-in and sign-up forms; after either, the script reloads the page (the same address, now signed in). */
const signInShell = (title: string, data: Record<string, string>, headingHtml: string, intro: string) =>
  page(title, data, `<main id="main" class="narrow">
<h1>${headingHtml}</h1>
<p>${escapeHtml(intro)}</p>
<p id="auth-status" class="status" role="status" aria-live="polite"></p>
<form id="signin-form" class="card" novalidate>
<h2>Sign in</h2>
<label for="signin-email">Email</label>
<input id="signin-email" name="email" type="email" autocomplete="username" required>
<label for="signin-password">Password</label>
<input id="signin-password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>
<form id="signup-form" class="card" novalidate>
<h2>New here? Create an account</h2>
<label for="signup-email">Email</label>
<input id="signup-email" name="email" type="email" autocomplete="email" required>
<label for="signup-username">Username</label>
<input id="signup-username" name="username" autocomplete="username" required>
<label for="signup-name">Display name</label>
<input id="signup-name" name="displayName" autocomplete="name" required>
<label for="signup-password">Password</label>
<input id="signup-password" name="password" type="password" autocomplete="new-password" required>
<button type="submit">Create account</button>
</form>
</main>`);

const messagePage = (handle: string, heading: string, text: string, extra = '') =>
  page(`${heading}: ${handle} console`, { page: 'message', handle }, `<main id="main" class="narrow">
<h1>${escapeHtml(heading)}</h1>
<p>${escapeHtml(text)}</p>
<p id="auth-status" class="status" role="status" aria-live="polite"></p>
${extra}<p><button type="button" id="signout">Sign out</button></p>
</main>`);

/** Where a signed-in user lists their tribes and creates one (`GET /console`). */
export const HOME_PATH = '/console';

/**
 * The "Create a tribe" form, with the fields createCommunity needs (name, handle, public or private). The script
 * sends it to `/graphql` (createCommunity) and then opens `/console/<handle>`; a refused field shows the API's
 * message (`handle: handle must be 3 to 40 of a-z, ...`) under that field.
 */
const createForm = (handle = '') => `<form id="create-form" class="card" novalidate>
<h2 id="create-heading">Create a tribe</h2>
<label for="create-name">Name</label>
<input id="create-name" name="name" required maxlength="100" aria-describedby="create-name-error">
<p id="create-name-error" class="field-error"></p>
<label for="create-handle">Handle</label>
<p id="create-handle-hint" class="hint">3 to 40 of a-z, 0-9 and -, starting and ending with a letter or digit; its console is at /console/&lt;handle&gt;.</p>
<input id="create-handle" name="handle" required maxlength="40" value="${escapeHtml(handle)}" aria-describedby="create-handle-hint create-handle-error">
<p id="create-handle-error" class="field-error"></p>
<fieldset>
<legend>Who can see it</legend>
<span class="choice"><input type="radio" id="create-public" name="visibility" value="public" checked><label for="create-public">Public: anyone can find and join it</label></span>
<span class="choice"><input type="radio" id="create-private" name="visibility" value="private"><label for="create-private">Private: members join with an invite</label></span>
</fieldset>
<p id="create-error" class="error" role="alert"></p>
<button type="submit">Create tribe</button>
</form>`;

/** An unknown handle: "No such tribe", a way to the tribe list and the create form with that handle filled in. */
const notFoundPage = (handle: string) =>
  messagePage(handle, 'No such tribe', `There is no tribe with the handle ${handle}.`, `<p><a href="${HOME_PATH}">Your tribes</a></p>
${createForm(handle)}
`);

/** `GET /console` signed in: the tribes the user owns or administers (filled by the script) and the create form. */
const homePage = () =>
  page('Console: your tribes', { page: 'home' }, `<header class="bar">
<p class="brand">Creator console</p>
<p class="who"><span id="who"></span> <a href="${SETTINGS_PATH}">Account settings</a> <button type="button" id="signout" class="link">Sign out</button></p>
</header>
<main id="main">
<h1>Your tribes</h1>
<p>The tribes you own or administer; open one to manage its API keys and webhooks.</p>
<p id="status" class="status" role="status" aria-live="polite"></p>
<p id="error" class="error" role="alert"></p>
<ul id="tribes" aria-label="Your tribes"></ul>
${createForm()}
</main>`);

const consolePage = (handle: string) =>
  page(`Console: ${handle}`, { page: 'console', handle }, `<header class="bar">
<p class="brand">Creator console · <span class="handle">${escapeHtml(handle)}</span></p>
<p class="who"><span id="who"></span> <a href="/console">Your tribes</a> <a href="/console/-/settings">Account settings</a> <button type="button" id="signout" class="link">Sign out</button></p>
</header>
<main id="main">
<h1>Keys and webhooks of <span class="handle">${escapeHtml(handle)}</span></h1>
<p id="status" class="status" role="status" aria-live="polite"></p>
<p id="error" class="error" role="alert"></p>

<section aria-labelledby="keys-heading">
<h2 id="keys-heading">API keys</h2>
<form id="key-form" class="card" novalidate>
<h3>Create a key</h3>
<label for="key-name">Name</label>
<input id="key-name" name="name" required maxlength="100">
<fieldset id="key-scopes"><legend>Scopes</legend></fieldset>
<button type="submit">Create key</button>
</form>
<div id="new-key" class="card notice" hidden tabindex="-1">
<h3>Your new key</h3>
<p>Copy it now: it is shown only once.</p>
<label for="new-key-value">Key</label>
<input id="new-key-value" readonly>
<button type="button" id="copy-key">Copy key</button>
<span id="copy-status" role="status" aria-live="polite"></span>
</div>
<table id="keys-table">
<caption class="sr-only">API keys</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">State</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
<tbody></tbody>
</table>
</section>

<section aria-labelledby="hooks-heading">
<h2 id="hooks-heading">Webhook endpoints</h2>
<form id="hook-form" class="card" novalidate>
<h3>Add an endpoint</h3>
<label for="hook-url">HTTPS URL</label>
<input id="hook-url" name="url" type="url" required placeholder="https://example.com/webhooks">
<label for="hook-description">Description (optional)</label>
<input id="hook-description" name="description" maxlength="140">
<fieldset id="hook-events"><legend>Events</legend></fieldset>
<button type="submit">Add endpoint</button>
</form>
<div id="hooks"></div>
</section>

<section id="log" aria-labelledby="log-heading" hidden>
<h2 id="log-heading">Delivery log</h2>
<p id="log-endpoint"></p>
<div class="filters">
<label for="filter-status">Status</label>
<select id="filter-status"><option value="">any</option><option>pending</option><option>success</option><option>failed</option></select>
<label for="filter-event">Event</label>
<select id="filter-event"><option value="">any</option></select>
<button type="button" id="log-refresh">Refresh</button>
</div>
<table id="log-table">
<caption class="sr-only">Deliveries, newest first</caption>
<thead><tr><th scope="col">Created</th><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Response</th><th scope="col">Time</th><th scope="col">Last error</th><th scope="col">Body</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
<tbody></tbody>
</table>
<p><button type="button" id="log-more" hidden>Load older deliveries</button></p>
</section>
</main>`);

/** Where a signed-in user manages their personal API keys: `-` is no tribe handle, so no tribe's console is hidden. */
export const SETTINGS_PATH = '/console/-/settings';

const settingsSignInPage = () =>
  signInShell('Sign in: account settings', { page: 'signin' }, 'Sign in to your account settings', 'Account settings hold your personal API keys of the resource API.');

/** The account settings (spec 5.3, "created in the dashboard under admin settings"): the user's personal API keys. */
const settingsPage = () =>
  page('Account settings: personal API keys', { page: 'settings' }, `<header class="bar">
<p class="brand">Account settings</p>
<p class="who"><span id="who"></span> <button type="button" id="signout" class="link">Sign out</button></p>
</header>
<main id="main">
<h1>Personal API keys</h1>
<p>A personal key calls the resource API (<code>/v1/communities/...</code>, <code>/v1/auth/me</code>, <code>/v1/media</code>)
as you, with your permissions, within its scopes: <strong>read</strong> (GET) and <strong>write</strong> (POST, PATCH, DELETE).
Send it as <code>Authorization: Bearer svc_pk_...</code> from a server, never from client-side code. It does not work on the
Platform API: a tribe's Platform API keys are in that tribe's console. At most 10 active keys.</p>
<p id="status" class="status" role="status" aria-live="polite"></p>
<p id="error" class="error" role="alert"></p>

<section aria-labelledby="pkeys-heading">
<h2 id="pkeys-heading">Your keys</h2>
<form id="pkey-form" class="card" novalidate>
<h3>Create a key</h3>
<label for="pkey-name">Name</label>
<input id="pkey-name" name="name" required maxlength="60">
<fieldset id="pkey-scopes"><legend>Scopes</legend></fieldset>
<button type="submit">Create key</button>
</form>
<div id="new-key" class="card notice" hidden tabindex="-1">
<h3>Your new key</h3>
<p>Copy it now: it is shown only once.</p>
<label for="new-key-value">Key</label>
<input id="new-key-value" readonly>
<button type="button" id="copy-key">Copy key</button>
<span id="copy-status" role="status" aria-live="polite"></span>
</div>
<table id="pkeys-table">
<caption class="sr-only">Personal API keys</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">State</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
<tbody></tbody>
</table>
</section>
</main>`);

function sendHtml(res: Response, status: number, html: string) {
  res.status(status).set('Content-Security-Policy', PORTAL_CSP).type('html').send(html);
}

/**
 * `GET /console/:handle`: the creator console (issue 16). The page is a shell; its script uses only the control-plane
 * routes (`/communities/:handle/api-keys`, `/communities/:handle/webhooks/...`) and `/auth/*`. The shell is decided by
 * the same rule as those routes (the API-key list, owner or admin): no session is the sign-in page, another
 * member or a stranger the 403 page, an unknown tribe the 404 page (with a link to `/console` and the create form,
 * its handle filled in). `GET /console`: the signed-in user's tribes and "Create a tribe" (signed out: sign-in).
 */
export function consoleRouter(app: AppDeps, run: OperationRunner): Router {
  const r = Router();
  const assets = new Map<string, string>();
  r.get('/console/assets/:file', (req, res, next) => {
    const file = String(req.params.file);
    const type = ASSET_TYPES[file];
    if (!type) return next();
    let body = assets.get(file);
    if (body === undefined) {
      const path = new URL(file, ASSETS);
      if (!existsSync(path)) return next();
      body = readFileSync(path, 'utf8');
      if (app.config.nodeEnv === 'production') assets.set(file, body);
    }
    res.set('Cache-Control', 'public, max-age=300').type(type).send(body);
  });
  // Before `/console/:handle`: `-` cannot be a handle. The page's script uses `/account/api-keys` and `/auth/*`.
  r.get(SETTINGS_PATH, sessionAuth(app), (req, res) => {
    res.set('Cache-Control', 'no-store');
    sendHtml(res, 200, req.caller ? settingsPage() : settingsSignInPage());
  });
  r.get(HOME_PATH, sessionAuth(app), (req, res) => {
    res.set('Cache-Control', 'no-store');
    sendHtml(res, 200, req.caller ? homePage() : signInShell('Sign in: creator console', { page: 'signin' }, 'Sign in to the creator console', 'Sign in or create an account to open your tribes\' consoles or create a tribe.'));
  });
  r.get('/console/:handle', sessionAuth(app), handle(async (req, res) => {
    const handleParam = String(req.params.handle);
    res.set('Cache-Control', 'no-store');
    if (!req.caller) return sendHtml(res, 200, signInPage(handleParam));
    try {
      unwrap(await run(contextOf(app, req), ApiKeyDocs.list, { handle: handleParam }));
    } catch (error) {
      const e = toHttpError(error);
      if (e.status === 401) return sendHtml(res, 200, signInPage(handleParam));
      if (e.status === 403) return sendHtml(res, 403, messagePage(handleParam, 'Not allowed', 'Only the owner and admins of this tribe can open its console.'));
      if (e.status === 404 || e.status === 400) return sendHtml(res, 404, notFoundPage(handleParam));
      throw error;
    }
    sendHtml(res, 200, consolePage(handleParam));
  }));
  return r;
}
