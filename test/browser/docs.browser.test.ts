// The reference pages (issue 16) in a real browser: /docs (Scalar over /openapi.json and /openapi/resource.json), /docs/webhooks and the
// GraphiQL explorer at /graphql, served by the real service on a port, offline (every request stays on the origin).
// Each page: rendered, no console error, no CSP violation, axe without serious or critical violations, a screenshot
// under test-artifacts/screenshots/. /docs "try it": a key pasted in the Authentication box calls GET /v1/me on this
// service and shows its 200; GraphiQL runs a query with the session cookie.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import type { Browser, Page } from 'playwright-core';
import { createKey, createTribe, signupUser, type TestUser } from '../factory.js';
import { startService, type TestService } from '../support.js';
import { axe, launchBrowser, newPage, screenshot } from './browser.js';

describe('reference pages in a browser', () => {
  let t: TestService;
  let browser: Browser;
  let baseURL: string;
  let owner: TestUser;
  let handle: string;
  let key: string;
  /** Every URL the pages asked for, to show nothing leaves the origin. */
  const requested: string[] = [];

  const open = async (path: string) => {
    const opened = await newPage(browser, { baseURL });
    // GraphiQL's and Scalar's bundles start slowly while both cores are busy with the suite (15 s was once too short).
    opened.context.setDefaultTimeout(40_000);
    opened.page.on('request', (r) => requested.push(r.url()));
    const res = await opened.page.goto(path);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toContain("default-src 'none'");
    return opened;
  };
  const checked = async (page: Page, problems: string[], name: string) => {
    expect(await axe(page)).toEqual([]);
    await screenshot(page, name);
    expect(problems).toEqual([]);
  };

  beforeAll(async () => {
    const build = spawnSync(process.execPath, ['scripts/build-docs.mjs'], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
    if (build.status !== 0) throw new Error(`scripts/build-docs.mjs failed: ${build.stderr}`);
    t = await startService();
    baseURL = `http://127.0.0.1:${await t.listen(0, '127.0.0.1')}`;
    owner = await signupUser(t);
    handle = (await createTribe(t, owner)).handle;
    key = (await createKey(t, owner, handle)).key;
    browser = await launchBrowser();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it('/docs renders the contract with its authentication, rate-limit, paging and error sections', async () => {
    const { page, problems, context } = await open('/docs');
    await page.getByRole('heading', { level: 1, name: 'Platform API' }).waitFor();
    for (const section of ['Authentication', 'Rate limit', 'Lists and paging', 'Errors']) {
      await expect(page.getByRole('heading', { name: section, exact: true }).first().isVisible()).resolves.toBe(true);
    }
    await checked(page, problems, 'docs-1-reference');
    await context.close();
  });

  it('/docs "Test Request" calls this service with the pasted key and shows the answer', async () => {
    const { page, problems, context } = await open('/docs');
    await page.getByLabel('Bearer Token').first().fill(key);
    await page.getByText('The API key making the request').first().click();
    await page.getByRole('button', { name: /Test Request.*get \/v1\/me/i }).click();
    const answered = page.waitForResponse((r) => r.url() === `${baseURL}/v1/me`);
    await page.getByRole('button', { name: /^Send/ }).first().click();
    const res = await answered;
    expect(res.status()).toBe(200);
    expect(res.request().headers()['authorization']).toBe(`Bearer ${key}`);
    await page.getByText(handle).first().waitFor();
    await screenshot(page, 'docs-2-try-it');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('/docs, resource API: its reference renders and "Test Request" sends the pasted access token (Bearer JWT)', async () => {
    const login = await t.api.post('/v1/auth/login').send({ email: owner.email, password: owner.password });
    const token = login.body.data.access_token as string;
    const { page, problems, context } = await open('/docs?api=resource-api'); // Scalar's document picker, by slug
    await page.getByRole('heading', { level: 1, name: 'Tribes resource API' }).waitFor();
    await expect(page.getByRole('heading', { name: 'Errors', exact: true }).first().isVisible()).resolves.toBe(true);
    await checked(page, problems, 'docs-5-resource-api');
    await page.getByLabel('Bearer Token').first().fill(token);
    await page.getByText('The signed-in user').first().click();
    await page.getByRole('button', { name: /Test Request.*get \/v1\/auth\/me/i }).click();
    const answered = page.waitForResponse((r) => r.url() === `${baseURL}/v1/auth/me`);
    await page.getByRole('button', { name: /^Send/ }).first().click();
    const res = await answered;
    expect(res.status()).toBe(200);
    expect(res.request().headers()['authorization']).toBe(`Bearer ${token}`);
    await page.getByText(owner.email).first().waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });

  it('/docs/webhooks: the guide and both verification examples, no script', async () => {
    const { page, problems, context } = await open('/docs/webhooks');
    await page.getByRole('heading', { level: 1 }).waitFor();
    for (const heading of ['4. The signature', '5. Delivery, retries and timing', 'Verification examples']) {
      await expect(page.getByRole('heading', { name: heading }).isVisible()).resolves.toBe(true);
    }
    await expect(page.locator('script').count()).resolves.toBe(0);
    await expect(page.getByLabel('verifier/examples/express.ts').textContent()).resolves.toContain('expressWebhook(');
    await expect(page.getByLabel('verifier/examples/fetch.ts').textContent()).resolves.toContain('verifyRequest(');
    await checked(page, problems, 'docs-3-webhooks');
    await context.close();
  });

  it('/graphql: GraphiQL runs a query as the signed-in user (session cookie)', async () => {
    const { page, problems, context } = await open('/graphql');
    const [name, value] = owner.cookie.split('=');
    await context.addCookies([{ name: name!, value: value!, url: baseURL }]);
    await page.reload();
    await page.locator('.graphiql-container').waitFor();
    // The default query is in the editor once CodeMirror has started (slow on a loaded machine).
    await page.locator('.graphiql-query-editor .CodeMirror-line', { hasText: 'username' }).first().waitFor();
    const answered = page.waitForResponse((r) => r.url() === `${baseURL}/graphql` && r.request().method() === 'POST' && (r.request().postData() ?? '').includes('username'));
    await page.getByRole('button', { name: /Execute query/i }).click();
    const res = await answered;
    expect(await res.json()).toEqual({ data: { me: { id: owner.id, username: owner.username } }, extensions: { cost: expect.any(Object) } });
    await page.locator('.graphiql-response').getByText(owner.username).waitFor();
    await checked(page, problems, 'docs-4-graphql');
    await context.close();
  });

  it('nothing was requested from another origin', () => {
    expect(requested.length).toBeGreaterThan(10);
    expect(requested.filter((u) => !u.startsWith(`${baseURL}/`) && !u.startsWith('data:'))).toEqual([]);
  });
});
