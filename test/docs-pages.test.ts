// The reference pages of issue 16 over HTTP: /docs (Scalar over /openapi.json), /docs/webhooks (the guide and the
// verification examples), GraphiQL at GET /graphql for a browser, their locally served assets, and the explorer's
// switch (on except in production, GRAPHQL_EXPLORER overrides) and our page when it or introspection is off. The same pages in a real browser:
// test/browser/docs.browser.test.ts.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { APP_CSP, DOCS_DIR, GUIDE_CSP } from '../rest-facade/src/portal/docs.js';
import { startService, testConfig, type TestService } from './support.js';

/** Every src= and href= of a page. */
const references = (html: string) => [...html.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);
const scripts = (html: string) => [...html.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1]!);
const assetOf = (html: string, name: string) => references(html).find((r) => new RegExp(`^/docs/assets/${name}\\.[0-9a-f]{12}\\.(js|css)$`).test(r));

/** What every page must show: HTML, its policy, no inline script, nothing from another origin. */
function expectPage(res: { status: number; headers: Record<string, string>; text: string }, csp: string) {
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.headers['content-security-policy']).toBe(csp);
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['x-frame-options']).toBe('DENY');
  for (const attributes of scripts(res.text)) expect(attributes).toMatch(/\bsrc="\/docs\/assets\//); // no inline script
  for (const ref of references(res.text)) expect(ref).toMatch(/^(\/|#)/); // this origin only
  expect(res.text).not.toMatch(/\bstyle="/);
}

describe('reference pages (issue 16)', () => {
  let t: TestService;

  beforeAll(async () => {
    const build = spawnSync(process.execPath, ['scripts/build-docs.mjs'], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
    if (build.status !== 0) throw new Error(`scripts/build-docs.mjs failed: ${build.stderr}`);
    t = await startService();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('the policies allow no inline script and no eval, and connect only to this origin', () => {
    for (const csp of [APP_CSP, GUIDE_CSP]) {
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-eval');
      expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
      expect(csp).not.toMatch(/https?:|\*/);
    }
    expect(APP_CSP).toContain("script-src 'self'");
    expect(APP_CSP).toContain("connect-src 'self'");
    expect(GUIDE_CSP).not.toContain('script-src'); // the guide runs no script at all (default-src 'none')
    expect(GUIDE_CSP).not.toContain('unsafe-inline');
  });

  it('GET /docs: Scalar and our script from /docs/assets over /openapi.json, under the strict policy', async () => {
    const res = await t.api.get('/docs').set('accept', 'text/html');
    expectPage(res, APP_CSP);
    expect(res.headers['cache-control']).toBe('no-cache');
    // Both documents: the Platform API's and the resource API's (Scalar shows one at a time, with a picker).
    expect(res.text).toContain('<div id="reference" data-openapi-url="/openapi.json" data-resource-openapi-url="/openapi/resource.json">');
    expect(res.text).toMatch(/<title>API reference: Tribes Platform API<\/title>/);
    const order = scripts(res.text).map((a) => /\/docs\/assets\/([a-z-]+)\./.exec(a)?.[1]);
    expect(order).toEqual(['reference', 'scalar']); // deferred, run in this order: ours sets Zod's jitless switch first
    expect(res.text).toContain('<a href="/docs/webhooks">');
    expect(res.text).toContain('<a href="/graphql">GraphQL explorer</a>');
    expect((await t.api.get('/docs/')).status).toBe(200);
  });

  it('GET /docs configures Scalar with both sources: the Platform API and the resource API (Bearer JWT)', async () => {
    const docs = (await t.api.get('/docs')).text;
    const script = await t.api.get(assetOf(docs, 'reference')!);
    expect(script.status).toBe(200);
    for (const text of ['Platform API', 'Resource API', 'resourceOpenapiUrl', '/openapi/resource.json', 'BearerAuth', 'ApiKey']) expect(script.text).toContain(text);
    const resource = await t.api.get('/openapi/resource.json');
    expect(resource.status).toBe(200);
    expect(resource.body.components.securitySchemes.BearerAuth.scheme).toBe('bearer');
  });

  it('the contract carries the sections the reference shows: authentication, paging, rate limit, errors', async () => {
    const spec = (await t.api.get('/openapi.json')).body as { info: { description: string }; tags: Array<{ name: string }> };
    for (const heading of ['## Authentication', '## Rate limit', '## Lists and paging', '## Errors']) expect(spec.info.description).toContain(heading);
    expect(spec.tags.map((tag) => tag.name)).toEqual(['Key', 'Members', 'Posts', 'Events', 'Orders']);
  });

  it('assets are served locally with immutable caching under hashed names; others are 404', async () => {
    const docs = (await t.api.get('/docs')).text;
    const explorer = (await t.api.get('/graphql').set('accept', 'text/html')).text;
    const cases: Array<[string, string, RegExp]> = [
      [docs, 'scalar', /^text\/javascript|^application\/javascript/],
      [docs, 'reference', /javascript/],
      [docs, 'style', /^text\/css/],
      [explorer, 'react', /javascript/],
      [explorer, 'react-dom', /javascript/],
      [explorer, 'graphiql', /javascript|css/],
      [explorer, 'explorer', /javascript/],
    ];
    for (const [html, name, type] of cases) {
      const path = assetOf(html, name);
      expect(path).toBeDefined();
      const res = await t.api.get(path!).buffer(true);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(type);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      const onDisk = readFileSync(`${DOCS_DIR}${path!.slice('/docs/assets/'.length)}`);
      expect(Number(res.headers['content-length'])).toBe(onDisk.length);
    }
    // Our own scripts stay small (a few KB); the renderers are npm's files as shipped.
    for (const name of ['reference', 'explorer']) {
      const path = assetOf(name === 'reference' ? docs : explorer, name)!;
      expect(readFileSync(`${DOCS_DIR}${path.slice('/docs/assets/'.length)}`).length).toBeLessThan(4096);
    }
    for (const bad of ['/docs/assets/manifest.json', '/docs/assets/webhooks.html', '/docs/assets/nothing.0123456789ab.js', '/docs/assets/..%2Fmanifest.json']) {
      const res = await t.api.get(bad);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ error: 'not_found' });
    }
  });

  it('GET /docs/webhooks: events, body, headers, signature and retries, and the Express and Fetch examples, with no script', async () => {
    const res = await t.api.get('/docs/webhooks');
    expectPage(res, GUIDE_CSP);
    expect(scripts(res.text)).toEqual([]);
    for (const heading of ['2. Events', '3. What a delivery looks like', '4. The signature', '5. Delivery, retries and timing', 'Verification examples']) {
      expect(res.text).toMatch(new RegExp(`<h2 id="[a-z0-9-]+">${heading.replace(/[.]/g, '\\.')}</h2>`));
    }
    for (const term of ['x-svc-signature', 'x-svc-delivery', 'member.joined', 'whsec_']) expect(res.text).toContain(term);
    // The examples, as the files of the repository (escaped).
    const express = readFileSync('verifier/examples/express.ts', 'utf8').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
    const fetchExample = readFileSync('verifier/examples/fetch.ts', 'utf8').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
    expect(res.text).toContain(express);
    expect(res.text).toContain(fetchExample);
    expect(res.text).toContain('Hono, Next.js route handlers, Cloudflare Workers');
  });

  it('GET /docs/changelog: CHANGELOG.md of the repository, rendered, with no script', async () => {
    const res = await t.api.get('/docs/changelog');
    expectPage(res, GUIDE_CSP);
    expect(scripts(res.text)).toEqual([]);
    expect(res.text).toContain('<a href="/docs/changelog" aria-current="page">Changelog</a>');
    const changelog = readFileSync(new URL('../CHANGELOG.md', import.meta.url), 'utf8');
    const headings = [...changelog.matchAll(/^## (.+)$/gm)].map((m) => m[1]!);
    expect(headings).toContain('[Unreleased]');
    for (const heading of headings) expect(res.text).toContain(`>${heading}</h2>`);
  });

  it('GET /docs/webhooks/webhook-verifier-<version>.tgz: the packed verifier; other names are 404', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../verifier/package.json', import.meta.url), 'utf8'));
    const build = spawnSync(process.execPath, ['scripts/pack-verifier.mjs'], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
    expect(build.stderr).toBe('');
    const res = await t.api.get(`/docs/webhooks/webhook-verifier-${version}.tgz`).buffer(true).parse((r, cb) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c)).on('end', () => cb(null, Buffer.concat(chunks)));
    });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/gzip');
    expect((res.body as Buffer).subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    expect((await t.api.get('/docs/webhooks/webhook-verifier-9.9.9.tgz')).status).toBe(404);
    expect((await t.api.get('/docs/webhooks/package.json')).status).toBe(404);
    const guide = await t.api.get('/docs/webhooks');
    expect(guide.text).toContain(`<a href="/docs/webhooks/webhook-verifier-${version}.tgz">`);
  }, 120_000);

  it('GET /graphql in a browser: GraphiQL with the session cookie; POST and JSON GETs answer as before', async () => {
    const page = await t.api.get('/graphql').set('accept', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8');
    expectPage(page, APP_CSP);
    expect(page.text).toContain('<div id="graphiql" data-endpoint="/graphql">');
    expect(scripts(page.text).map((a) => /\/docs\/assets\/([a-z-]+)\./.exec(a)?.[1])).toEqual(['react', 'react-dom', 'graphiql', 'explorer']);
    const explorerJs = (await t.api.get(assetOf(page.text, 'explorer')!)).text;
    expect(explorerJs).toContain('same-origin'); // the session cookie goes with each query

    const post = await t.api.post('/graphql').send({ query: '{ __typename }' });
    expect(post.status).toBe(200);
    expect(post.body).toEqual({ data: { __typename: 'Query' }, extensions: { cost: expect.any(Object) } });
    const json = await t.api.get('/graphql').query({ query: '{ __typename }' }).set('accept', 'application/json').set('apollo-require-preflight', '1');
    expect(json.status).toBe(200);
    expect(json.body).toEqual({ data: { __typename: 'Query' }, extensions: { cost: expect.any(Object) } });
  });

  describe('the explorer switch', () => {
    const services: TestService[] = [];
    afterAll(async () => {
      for (const s of services) await s.stop();
    });
    const htmlGet = (s: TestService) => s.api.get('/graphql').set('accept', 'text/html');

    it('GRAPHQL_EXPLORER, else on except in production', () => {
      expect(testConfig().graphql.explorer).toBe(true);
      expect(testConfig({ NODE_ENV: 'test' }).graphql.explorer).toBe(true);
      expect(testConfig({ NODE_ENV: 'production' }).graphql.explorer).toBe(false);
      expect(testConfig({ GRAPHQL_EXPLORER: 'false' }).graphql.explorer).toBe(false);
      expect(testConfig({ NODE_ENV: 'production', GRAPHQL_EXPLORER: 'true' }).graphql.explorer).toBe(true);
    });

    it('off in production: the browser GET /graphql is our page naming GRAPHQL_EXPLORER and GRAPHQL_INTROSPECTION; /docs has no explorer link', async () => {
      const off = await startService({ NODE_ENV: 'production' });
      services.push(off);
      const res = await htmlGet(off);
      expectPage(res, GUIDE_CSP);
      expect(res.text).not.toContain('id="graphiql"');
      expect(res.text).toContain('<h1>GraphQL explorer is off</h1>');
      expect(res.text).toContain('<code>NODE_ENV=production</code>');
      expect(res.text).toContain('<pre tabindex="0"><code>GRAPHQL_EXPLORER=true GRAPHQL_INTROSPECTION=true npm start</code></pre>');
      expect(res.text).toContain('<code>npm run dev</code>');
      expect(res.text).not.toContain('href="/graphql"'); // no link to itself in the bar
      // The endpoint answers as before.
      expect((await off.api.post('/graphql').send({ query: '{ __typename }' })).body).toEqual({ data: { __typename: 'Query' }, extensions: { cost: expect.any(Object) } });
      const docs = await off.api.get('/docs');
      expect(docs.status).toBe(200);
      expect(docs.text).not.toContain('href="/graphql"');
    });

    it('on in production with GRAPHQL_EXPLORER=true but introspection off: the page says to set GRAPHQL_INTROSPECTION=true', async () => {
      const on = await startService({ NODE_ENV: 'production', GRAPHQL_EXPLORER: 'true' });
      services.push(on);
      const res = await htmlGet(on);
      expectPage(res, GUIDE_CSP);
      expect(res.text).not.toContain('id="graphiql"');
      expect(res.text).toContain('introspection is off');
      expect(res.text).toContain('<pre tabindex="0"><code>GRAPHQL_INTROSPECTION=true npm start</code></pre>');
      expect(res.text).not.toContain('GRAPHQL_EXPLORER=true');
      // What GraphiQL would have met: the refused introspection query.
      const introspection = await on.api.post('/graphql').send({ query: '{ __schema { queryType { name } } }' });
      expect(introspection.body.errors?.[0]?.message).toMatch(/introspection/i);
    });

    it('on in production with GRAPHQL_EXPLORER=true and GRAPHQL_INTROSPECTION=true: GraphiQL, and introspection answers', async () => {
      const on = await startService({ NODE_ENV: 'production', GRAPHQL_EXPLORER: 'true', GRAPHQL_INTROSPECTION: 'true' });
      services.push(on);
      const res = await htmlGet(on);
      expectPage(res, APP_CSP);
      expect(res.text).toContain('id="graphiql"');
      const introspection = await on.api.post('/graphql').send({ query: '{ __schema { queryType { name } } }' });
      expect(introspection.body.data).toEqual({ __schema: { queryType: { name: 'Query' } } });
    });
  });
});
