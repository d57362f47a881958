import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Router, type RequestHandler, type Response } from 'express';
import type { AppDeps } from '../../../subgraphs/kernel/index.js';

/**
 * The reference pages (issue 16): `GET /docs` (the API reference, Scalar over `/openapi.json` and `/openapi/resource.json`), `GET /docs/webhooks`
 * (the webhook guide and verification examples), GraphiQL at `GET /graphql` for a browser, and their assets at
 * `/docs/assets/<name>.<hash>.<ext>`. Every asset comes from npm and is built into dist/portal/docs/ by
 * `npm run build` (scripts/build-docs.mjs): nothing is loaded from another origin.
 */

/** The built assets: dist/portal/docs/, from the compiled module (dist/rest-facade/src/portal/) or from the sources. */
export const DOCS_DIR = fileURLToPath(
  new URL(import.meta.url.includes('/dist/rest-facade/') ? '../../../portal/docs/' : '../../../dist/portal/docs/', import.meta.url),
);

/** The packed verifier: dist/portal/verifier/webhook-verifier-<version>.tgz (scripts/pack-verifier.mjs). */
export const VERIFIER_DIR = fileURLToPath(new URL('../verifier/', `file://${DOCS_DIR}`));

const COMMON = ["default-src 'none'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'", "object-src 'none'"];

/**
 * /docs/webhooks: our script-free page and our stylesheet only. No script at all, no inline style.
 */
export const GUIDE_CSP = [...COMMON, "style-src 'self'", "img-src 'self'"].join('; ');

/**
 * /docs and the /graphql explorer: scripts from this origin only (no inline script, no eval: neither Scalar's
 * standalone bundle nor GraphiQL's need 'unsafe-eval'), requests to this origin only (Scalar's "Test Request" and
 * GraphiQL's queries; no proxy). Styles need 'unsafe-inline': Scalar injects its stylesheet as <style> elements at
 * run time (only its first one takes a nonce) and GraphiQL's editors set style attributes. Inline style cannot run
 * script, and with img-src/font-src/connect-src limited to 'self' (and data: images and fonts, which Scalar's icons
 * and GraphiQL's stylesheet use) an injected style has nowhere to send anything.
 */
export const APP_CSP = [
  ...COMMON,
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self'",
].join('; ');

interface Built {
  /** Logical name (`scalar.js`) → the hashed file name (`scalar.3f9a0c1b2d4e.js`). */
  assets: Record<string, string>;
  files: Set<string>;
  guide: string;
  /** CHANGELOG.md as HTML (changelog.html). */
  changelog: string;
}

let cached: Built | undefined;

/** The build's manifest and rendered guide; read once in production, on each request otherwise (a rebuild shows). */
function built(app: AppDeps): Built | undefined {
  if (cached && app.config.nodeEnv === 'production') return cached;
  const manifest = `${DOCS_DIR}manifest.json`;
  if (!existsSync(manifest)) return undefined;
  const { assets } = JSON.parse(readFileSync(manifest, 'utf8')) as { assets: Record<string, string> };
  const changelog = existsSync(`${DOCS_DIR}changelog.html`) ? readFileSync(`${DOCS_DIR}changelog.html`, 'utf8') : '<p>Not built: run <code>npm run build</code>.</p>';
  cached = { assets, files: new Set(Object.values(assets)), guide: readFileSync(`${DOCS_DIR}webhooks.html`, 'utf8'), changelog };
  return cached;
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

type Current = 'reference' | 'webhooks' | 'changelog' | 'graphql';

const LINKS: Array<[Current, string, string]> = [
  ['reference', '/docs', 'API reference'],
  ['webhooks', '/docs/webhooks', 'Webhooks'],
  ['changelog', '/docs/changelog', 'Changelog'],
  ['graphql', '/graphql', 'GraphQL explorer'],
];

function bar(current: Current, explorer: boolean): string {
  const items = LINKS.filter(([key]) => key !== 'graphql' || explorer)
    .map(([key, href, text]) => `<li><a href="${href}"${key === current ? ' aria-current="page"' : ''}>${text}</a></li>`)
    .join('');
  return `<header class="portal-bar"><p class="brand">Tribes developer docs</p><nav aria-label="Developer docs"><ul>${items}</ul></nav></header>`;
}

interface PageParts {
  title: string;
  current: Current;
  styles: string[];
  scripts: string[];
  bodyClass?: string;
  body: string;
}

function page(b: Built, explorer: boolean, p: PageParts): string {
  const asset = (name: string) => `/docs/assets/${b.assets[name]}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(p.title)}</title>
<link rel="icon" href="${asset('favicon.svg')}" type="image/svg+xml">
${p.styles.map((s) => `<link rel="stylesheet" href="${asset(s)}">`).join('\n')}
${p.scripts.map((s) => `<script src="${asset(s)}" defer></script>`).join('\n')}
</head>
<body${p.bodyClass ? ` class="${p.bodyClass}"` : ''}>
<a class="skip" href="#main">Skip to content</a>
${bar(p.current, explorer)}
${p.body}
</body>
</html>
`;
}

function sendPage(res: Response, csp: string, html: string) {
  res.set('Content-Security-Policy', csp).set('Cache-Control', 'no-cache').type('html').send(html);
}

function notBuilt(res: Response) {
  res.status(503).set('Retry-After', '60').type('text/plain').send('The documentation pages are not built: run `npm run build`.\n');
}

/** The explorer is on where config says so: `GRAPHQL_EXPLORER`, else everywhere but production. */
const explorerOn = (app: AppDeps) => app.config.graphql.explorer;

/** `/docs`, `/docs/webhooks` and `/docs/assets/*`. */
export function docsRouter(app: AppDeps): Router {
  const r = Router();
  r.get('/docs/assets/:file', (req, res, next) => {
    const b = built(app);
    const file = String(req.params.file);
    if (!b || !b.files.has(file)) return next(); // the app's 404
    // A hashed name never changes content: cache for a year. sendFile sets the type from the extension.
    res.set('Cache-Control', 'public, max-age=31536000, immutable');
    res.sendFile(file, { root: DOCS_DIR, cacheControl: false });
  });
  // The verifier package as receivers install it: `npm install <this URL>` (docs/webhooks.md). The name carries the
  // version, so the URL of a release never changes; a rebuild of the same version may, so caches revalidate.
  r.get('/docs/webhooks/:file', (req, res, next) => {
    const file = String(req.params.file);
    if (!/^webhook-verifier-\d+\.\d+\.\d+\.tgz$/.test(file) || !existsSync(`${VERIFIER_DIR}${file}`)) return next(); // the app's 404
    res.set('Cache-Control', 'no-cache').type('application/gzip');
    res.sendFile(file, { root: VERIFIER_DIR, cacheControl: false, lastModified: true });
  });
  r.get(['/docs', '/docs/'], (_req, res) => {
    const b = built(app);
    if (!b) return notBuilt(res);
    sendPage(res, APP_CSP, page(b, explorerOn(app), {
      title: 'API reference: Tribes Platform API',
      current: 'reference',
      styles: ['style.css'],
      scripts: ['reference.js', 'scalar.js'], // ours first: it sets Zod's jitless switch before Scalar loads
      body: `<p class="portal-note">To try a Platform API request, create an API key in your tribe's console (<code>/console/&lt;handle&gt;</code>), then paste it under
<strong>Authentication</strong> of any operation and press <strong>Test Request</strong>. For the resource API (pick it at the top of the reference), paste the <code>access_token</code> of <code>POST /v1/auth/login</code> instead. Receiving events: <a href="/docs/webhooks">the webhook guide</a>.</p>
<main id="main"><noscript><p>The reference needs JavaScript. The contracts themselves are at <a href="/openapi.json">/openapi.json</a> (Platform API) and <a href="/openapi/resource.json">/openapi/resource.json</a> (resource API).</p></noscript><div id="reference" data-openapi-url="/openapi.json" data-resource-openapi-url="/openapi/resource.json"></div></main>`,
    }));
  });
  // CHANGELOG.md of the repository, rendered by the build: additions and deprecations of every API, by release.
  r.get('/docs/changelog', (_req, res) => {
    const b = built(app);
    if (!b) return notBuilt(res);
    sendPage(res, GUIDE_CSP, page(b, explorerOn(app), {
      title: 'Changelog: Tribes developer docs',
      current: 'changelog',
      styles: ['style.css'],
      scripts: [],
      body: `<main id="main" class="guide">\n${b.changelog}</main>`,
    }));
  });
  r.get('/docs/webhooks', (_req, res) => {
    const b = built(app);
    if (!b) return notBuilt(res);
    sendPage(res, GUIDE_CSP, page(b, explorerOn(app), {
      title: 'Webhooks: Tribes developer docs',
      current: 'webhooks',
      styles: ['style.css'],
      scripts: [],
      body: `<main id="main" class="guide">\n${b.guide}</main>`,
    }));
  });
  return r;
}

/**
 * `GET /graphql` asking for HTML (the rule `securityHeaders` uses): GraphiQL when the explorer and introspection are
 * on; otherwise a page of ours saying what is off and which variable turns it on (`GRAPHQL_EXPLORER`,
 * `GRAPHQL_INTROSPECTION`), rather than Apollo's landing page or GraphiQL failing on a refused introspection query.
 * Anything else (POST, JSON GETs) goes on to the GraphQL endpoint unchanged.
 */
export function graphqlExplorer(app: AppDeps): RequestHandler {
  return (req, res, next) => {
    if (req.accepts(['application/json', 'text/html']) !== 'text/html') return next();
    const b = built(app);
    if (!b) return notBuilt(res);
    const { explorer, introspection } = app.config.graphql;
    if (!explorer || !introspection) {
      sendPage(res, GUIDE_CSP, page(b, false, {
        title: 'GraphQL explorer is off: Tribes',
        current: 'graphql',
        styles: ['style.css'],
        scripts: [],
        body: `<main id="main" class="guide">\n${explorerOffNotice(app)}</main>`,
      }));
      return;
    }
    sendPage(res, APP_CSP, page(b, true, {
      title: 'GraphQL explorer: Tribes',
      current: 'graphql',
      styles: ['graphiql.css', 'style.css'],
      scripts: ['react.js', 'react-dom.js', 'graphiql.js', 'explorer.js'],
      bodyClass: 'explorer-page',
      body: `<main id="main"><h1 class="skip">GraphQL explorer</h1><noscript><p>GraphiQL needs JavaScript.</p></noscript><div id="graphiql" data-endpoint="/graphql"></div></main>`,
    }));
  };
}

/** What the browser's `GET /graphql` says when GraphiQL cannot run here: which switch is off and how to turn it on. */
function explorerOffNotice(app: AppDeps): string {
  const { explorer, introspection } = app.config.graphql;
  const production = app.config.nodeEnv === 'production';
  const missing = [...(explorer ? [] : ['GRAPHQL_EXPLORER=true']), ...(introspection ? [] : ['GRAPHQL_INTROSPECTION=true'])];
  const why = !explorer
    ? `<p>The GraphQL explorer (GraphiQL) is off on this server${production ? ' (<code>NODE_ENV=production</code>, which <code>npm start</code> sets, turns it off by default)' : ' (<code>GRAPHQL_EXPLORER=false</code>)'}.</p>`
    : `<p>The GraphQL explorer is on (<code>GRAPHQL_EXPLORER</code>), but introspection is off${production ? ' (<code>NODE_ENV=production</code> turns it off by default)' : ' (<code>GRAPHQL_INTROSPECTION=false</code>)'}, and GraphiQL needs the schema that introspection gives.</p>`;
  return `<h1>GraphQL explorer is off</h1>
${why}
<p>To use it, start the service with ${missing.map((v) => `<code>${v}</code>`).join(' and ')}, for example:</p>
<pre tabindex="0"><code>${missing.join(' ')} npm start</code></pre>
<p>or run <code>npm run dev</code> (development mode: the explorer and introspection are on). Keep both off on a public production server unless you mean to publish the schema.</p>
<p>The GraphQL endpoint itself works: send <code>POST /graphql</code> with a JSON body <code>{"query": "..."}</code>. The quick start (<code>docs/quickstart.md</code> in the repository) has queries to paste; the REST APIs are in the <a href="/docs">API reference</a>.</p>`;
}
