// Builds the reference pages' browser assets (issue 16: /docs, /docs/webhooks, the /graphql explorer) into
// dist/portal/docs/, part of `npm run build`; tests run it too (they run from the sources).
//
// - Renderers, copied as their authors ship them: Scalar's standalone bundle (vendor/scalar, a copy of
//   @scalar/api-reference's, see its README), GraphiQL's UMD bundle and stylesheet (graphiql), React and ReactDOM's
//   UMD bundles (react, react-dom), from npm.
// - Our own scripts (portal/docs/client/*.ts), bundled and minified with esbuild (one IIFE each, no eval), and our
//   stylesheet (portal/docs/style.css).
// - docs/webhooks.md rendered to HTML with markdown-it (raw HTML off), followed by the verification examples
//   (verifier/examples/*.ts) as code; CHANGELOG.md rendered the same way (changelog.html, served at /docs/changelog).
//
// Every asset is written under a name carrying a hash of its content (served with immutable caching); manifest.json
// maps the logical names to those files, and webhooks.html is the rendered guide the service puts in its page.
import { build } from 'esbuild';
import MarkdownIt from 'markdown-it';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const OUT = `${ROOT}dist/portal/docs`;
const require = createRequire(import.meta.url);

/** Logical name → the npm file it is, or a file of this repository (`./...`). */
const VENDOR = {
  'scalar.js': './vendor/scalar/standalone.js',
  'graphiql.js': 'graphiql/graphiql.min.js',
  'graphiql.css': 'graphiql/graphiql.min.css',
  'react.js': 'react/umd/react.production.min.js',
  'react-dom.js': 'react-dom/umd/react-dom.production.min.js',
};

/** Our scripts: logical name → source. */
const OURS = {
  'reference.js': 'portal/docs/client/reference.ts',
  'explorer.js': 'portal/docs/client/explorer.ts',
};

/** The examples shown on /docs/webhooks, in order. */
const EXAMPLES = [
  {
    file: 'verifier/examples/express.ts',
    title: 'Express',
    text: 'Express 4 or 5 (also Connect and a plain <code>node:http</code> server): the middleware reads the raw body itself, so mount the route before any JSON parser.',
  },
  {
    file: 'verifier/examples/fetch.ts',
    title: 'Fetch API: Hono, Next.js route handlers, Cloudflare Workers, Deno, Bun',
    text: 'One handler for every runtime with a Fetch <code>Request</code> and Web Crypto: it imports <code>@svc/webhook-verifier/web</code>, which uses no <code>node:*</code> module. The comments at its end show how each framework mounts it.',
  },
];

/** A file inside an installed package, past its exports map (the browser bundles are not exported), or of this repository. */
function packageFile(spec) {
  if (spec.startsWith('./')) return ROOT + spec.slice(2);
  const [, name, rest] = /^((?:@[^/]+\/)?[^/]+)\/(.+)$/.exec(spec);
  for (const dir of require.resolve.paths(name) ?? []) {
    if (existsSync(`${dir}/${name}/package.json`)) return `${dir}/${name}/${rest}`;
  }
  throw new Error(`${name} is not installed (npm ci)`);
}

const hash = (bytes) => createHash('sha256').update(bytes).digest('hex').slice(0, 12);
const hashed = (name, bytes) => name.replace(/\.(\w+)$/, `.${hash(bytes)}.$1`);
const escapeHtml = (s) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
const slug = (text) =>
  text
    .toLowerCase()
    .replace(/<[^>]*>/g, '')
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .trim()
    .replace(/\s+/g, '-');

/** Markdown as HTML: headings get ids (GitHub's slugs, so a page's own #links work), links to repo files become plain text. */
function renderMarkdown(file) {
  const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
  // Code blocks scroll sideways: keyboard users reach them with Tab (axe: scrollable-region-focusable).
  const fence = md.renderer.rules.fence;
  md.renderer.rules.fence = (...args) => fence(...args).replace(/^<pre>/, '<pre tabindex="0">');
  md.core.ruler.push('heading_ids', (state) => {
    const tokens = state.tokens;
    for (let i = 0; i < tokens.length; i++) {
      if (tokens[i].type === 'heading_open') tokens[i].attrSet('id', slug(tokens[i + 1].content));
    }
  });
  const source = readFileSync(`${ROOT}${file}`, 'utf8');
  // Links into the repository (../verifier/README.md, docs/webhooks.md) mean nothing on the served page: keep their text only.
  return md.render(source.replace(/\[([^\]]+)\]\((?!https?:|#|\/)[^)]*\)/g, '$1'));
}

/** The verifier's version: the served tarball is /docs/webhooks/webhook-verifier-<version>.tgz (scripts/pack-verifier.mjs). */
const verifierVersion = () => JSON.parse(readFileSync(`${ROOT}verifier/package.json`, 'utf8')).version;

/** docs/webhooks.md as HTML, followed by the verification examples. */
function renderGuide() {
  const html = renderMarkdown('docs/webhooks.md');
  const tarball = `/docs/webhooks/webhook-verifier-${verifierVersion()}.tgz`;
  const examples = EXAMPLES.map(({ file, title, text }) => {
    const code = readFileSync(`${ROOT}${file}`, 'utf8');
    const id = slug(title.split(':')[0]);
    return `<section aria-labelledby="example-${id}">
<h3 id="example-${id}">${escapeHtml(title)}</h3>
<p>${text} Source: <code>${escapeHtml(file)}</code>.</p>
<pre class="example" tabindex="0" aria-label="${escapeHtml(file)}"><code>${escapeHtml(code)}</code></pre>
</section>`;
  }).join('\n');
  return `${html}
<h2 id="verification-examples">Verification examples</h2>
<p>Each example below is a file of the repository that the test suite type-checks and runs against a real signed
delivery from the service (<code>test/docs-examples.test.ts</code>). Install the verifier from this service,
<code>npm install https://&lt;this host&gt;${tarball}</code> (<a href="${tarball}">the package</a>; it is not on the npm registry),
and give it the endpoint's <code>whsec_</code> secret.</p>
${examples}
`;
}

/** Writes a file atomically (a test file may read the folder while another builds it). */
function put(name, bytes) {
  const path = `${OUT}/${name}`;
  writeFileSync(`${path}.${process.pid}.tmp`, bytes);
  renameSync(`${path}.${process.pid}.tmp`, path);
}

export async function buildDocs() {
  mkdirSync(OUT, { recursive: true });
  const assets = {};
  for (const [name, spec] of Object.entries(VENDOR)) {
    const bytes = readFileSync(packageFile(spec));
    assets[name] = hashed(name, bytes);
    put(assets[name], bytes);
  }
  for (const [name, source] of Object.entries(OURS)) {
    const out = await build({
      entryPoints: [`${ROOT}${source}`],
      write: false,
      bundle: true,
      minify: true,
      format: 'iife',
      target: 'es2020',
      platform: 'browser',
      legalComments: 'none',
      logLevel: 'warning',
    });
    const bytes = Buffer.from(out.outputFiles[0].contents);
    assets[name] = hashed(name, bytes);
    put(assets[name], bytes);
  }
  for (const name of ['style.css', 'favicon.svg']) {
    const bytes = readFileSync(`${ROOT}portal/docs/${name}`);
    assets[name] = hashed(name, bytes);
    put(assets[name], bytes);
  }
  put('webhooks.html', renderGuide());
  put('changelog.html', renderMarkdown('CHANGELOG.md'));
  put('manifest.json', JSON.stringify({ assets }, null, 2));
  // Older hashed files of earlier builds go.
  const keep = new Set([...Object.values(assets), 'manifest.json', 'webhooks.html', 'changelog.html']);
  for (const name of readdirSync(OUT)) if (!keep.has(name) && !name.endsWith('.tmp')) rmSync(`${OUT}/${name}`, { force: true });
  return assets;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const assets = await buildDocs();
  console.log(`docs assets: ${Object.values(assets).join(', ')}`);
}
