// The creator console (issue 16) in a real browser: Chromium through playwright-core (test/browser/browser.ts)
// against the real service listening on a port, a real HTTPS webhook receiver, the real database. The steps run in
// order and share one browser page, as a newcomer would: sign up, create a key, use it from /docs "try it", register
// a webhook, ping it, watch a delivery fail, resend it. Every page is checked with axe, screenshotted, and must log no console error
// and break no CSP rule.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { buildConsole } from '../../scripts/build-console.js';
import { drain, MAX_ATTEMPTS } from '../../subgraphs/webhooks/index.js';
import { createTribe, join, signupUser, unique } from '../factory.js';
import { answer, isolatedDatabase, ManualClock, Receiver, startWebhookService, type TestService } from '../support.js';
import { axe, launchBrowser, newPage, screenshot } from './browser.js';

const HOUR = 3_600_000;

describe('creator console in a browser', () => {
  let t: TestService;
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  const clock = new ManualClock();
  let receiver: Receiver;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let baseURL: string;

  const me = { email: `creator_${unique()}@example.com`, username: `creator_${unique()}`, password: 'correct horse battery' };
  const myHandle = `console-${unique()}`;
  let copiedKey = '';

  /**
   * The words of the main content broken across lines (each word's boxes on more than one line), at the page's
   * 1280 px: none expected. Only URLs and the boxes the stylesheet lets break anywhere (an endpoint's URL, a handle,
   * a signing secret, a body) may.
   */
  const brokenWords = () =>
    page.evaluate(() => {
      const broken: string[] = [];
      const main = document.querySelector('main');
      if (!main) return ['(no main)'];
      const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
      const range = document.createRange();
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const parent = node.parentElement;
        if (!parent || parent.closest('.url, .handle, .secret, pre')) continue;
        for (const m of (node.textContent ?? '').matchAll(/\S+/g)) {
          if (m[0].includes('://')) continue;
          range.setStart(node, m.index ?? 0);
          range.setEnd(node, (m.index ?? 0) + m[0].length);
          const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
          if (tops.size > 1) broken.push(m[0]);
        }
      }
      return broken;
    });
  /** axe on the page as it is now (no serious or critical violation), no word broken, a screenshot for the reviewer. */
  const check = async (name: string) => {
    expect(await axe(page)).toEqual([]);
    expect(await brokenWords()).toEqual([]);
    await screenshot(page, name);
  };
  /** The page's console, errors and CSP reports so far: none expected. */
  const clean = () => expect(problems).toEqual([]);

  beforeAll(async () => {
    await buildConsole();
    // The /docs page of the "try it" step (scripts/build-docs.mjs, as test/docs-pages.test.ts builds it).
    const docsBuild = spawnSync(process.execPath, ['scripts/build-docs.mjs'], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
    if (docsBuild.status !== 0) throw new Error(`scripts/build-docs.mjs failed: ${docsBuild.stderr}`);
    db = await isolatedDatabase();
    t = await startWebhookService({
      clock: clock.clock,
      databaseUrl: db.url,
      // The test moves the clock by days (webhook retries); the browser's session must outlive that.
      env: { SESSION_TTL_HOURS: String(24 * 365) },
    });
    baseURL = `http://127.0.0.1:${await t.listen(0, '127.0.0.1')}`;
    receiver = await new Receiver(clock.clock).start();
    browser = await launchBrowser();
    ({ page, context, problems } = await newPage(browser, { baseURL }));
    await page.setViewportSize({ width: 1280, height: 800 });
    context.setDefaultTimeout(10_000);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseURL });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await receiver?.stop();
    await t?.stop();
    await db?.drop();
  });

  it('not signed in: the sign-in page; signing up on /console, creating a tribe there (a field error first), landing on its console; a tribe of someone else: 403; an unknown tribe: 404, offering to create it', async () => {
    const other = await signupUser(t);
    const theirs = await createTribe(t, other);
    const res = await page.goto(`/console/${theirs.handle}`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain(`Sign in to the console of ${theirs.handle}`);
    await check('console-1-sign-in');

    await page.goto('/console');
    await page.getByRole('heading', { name: 'Sign in to the creator console' }).waitFor();
    await page.getByLabel('Email').nth(1).fill(me.email);
    await page.getByLabel('Username').fill(me.username);
    await page.getByLabel('Display name').fill('Creator');
    await page.getByLabel('Password').nth(1).fill(me.password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.locator('body[data-page=home][data-ready=true]').waitFor();
    await expect(page.locator('#tribes').textContent()).resolves.toBe('None yet: create one below.');
    await check('console-1a-no-tribes');

    // A refused handle: the API's message (field and rule) under the field; nothing is created.
    const first = `first-${unique()}`;
    await page.getByLabel('Name', { exact: true }).fill('First tribe');
    await page.getByLabel('Handle', { exact: true }).fill('Not A Handle');
    await page.getByRole('button', { name: 'Create tribe' }).click();
    await page.locator('#create-handle-error', { hasText: /^handle: handle must be 3 to 40 of a-z, 0-9 and -/ }).waitFor();
    await expect(page.getByLabel('Handle', { exact: true }).getAttribute('aria-invalid')).resolves.toBe('true');
    await check('console-1b-create-refused');
    await page.getByLabel('Handle', { exact: true }).fill(first);
    await page.getByLabel('Private: members join with an invite').check();
    await page.getByRole('button', { name: 'Create tribe' }).click();
    await page.waitForURL(`${baseURL}/console/${first}`);
    await page.locator('body[data-page=console][data-ready=true]').waitFor();
    await page.getByRole('link', { name: 'Your tribes' }).click();
    await page.locator('body[data-page=home][data-ready=true]').waitFor();
    await expect(page.locator('#tribes li').allTextContents()).resolves.toEqual([`First tribe ${first} (owner)`]);
    await expect(page.getByRole('link', { name: 'First tribe' }).getAttribute('href')).resolves.toBe(`/console/${first}`);
    await check('console-1c-tribes');
    clean();

    const forbidden = await page.goto(`/console/${theirs.handle}`);
    expect(forbidden?.status()).toBe(403);
    await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
    await check('console-2-forbidden');
    // The 403 document itself is the one error Chromium logs (it reports any 4xx load); nothing else.
    expect(problems.splice(0)).toEqual([expect.stringMatching(/^console\.error: Failed to load resource: the server responded with a status of 403/)]);

    // An unknown handle: "No such tribe", a link to /console and the create form with that handle.
    const missing = await page.goto(`/console/${myHandle}`);
    expect(missing?.status()).toBe(404);
    await page.getByRole('heading', { name: 'No such tribe' }).waitFor();
    expect(problems.splice(0)).toEqual([expect.stringMatching(/^console\.error: Failed to load resource: the server responded with a status of 404/)]);
    await expect(page.getByRole('link', { name: 'Your tribes' }).getAttribute('href')).resolves.toBe('/console');
    await expect(page.getByLabel('Handle', { exact: true }).inputValue()).resolves.toBe(myHandle);
    await check('console-2b-not-found');
    await page.getByLabel('Name', { exact: true }).fill('Console test');
    await page.getByRole('button', { name: 'Create tribe' }).click();
    await page.waitForURL(`${baseURL}/console/${myHandle}`);
    await page.locator('body[data-page=console][data-ready=true]').waitFor();
    clean();
  });

  it('signed in as the owner: the console, reached through the sign-in form', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: /^Sign in to the console/ }).waitFor();
    await page.goto(`/console/${myHandle}`);
    await page.getByLabel('Email').first().fill(me.email);
    await page.getByLabel('Password').first().fill(me.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('body[data-ready=true]').waitFor();
    await expect(page.locator('#who').textContent()).resolves.toBe(`Signed in as ${me.username}`);
    await check('console-3-empty');
    clean();
  });

  it('API keys: created with scopes, shown once with a copy button, revoked', async () => {
    await page.getByLabel('Name', { exact: true }).fill('Zapier');
    await page.getByRole('checkbox', { name: 'members:read' }).check();
    await page.getByRole('checkbox', { name: 'posts:read' }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const value = page.getByLabel('Key', { exact: true });
    await page.locator('#new-key').waitFor();
    await expect(value.inputValue()).resolves.toMatch(/^\S{20,}$/);
    copiedKey = await value.inputValue();
    await page.getByRole('button', { name: 'Copy key' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(copiedKey);
    const row = page.locator('#keys-table tbody tr', { hasText: 'Zapier' });
    await expect(row.locator('td').nth(2).textContent()).resolves.toBe('members:read, posts:read');
    await expect(row.locator('td').nth(4).textContent()).resolves.toBe('never');
    await check('console-4-key-created');

    await page.getByLabel('Name', { exact: true }).fill('Old key');
    await page.getByRole('checkbox', { name: 'events:read' }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const old = page.locator('#keys-table tbody tr', { hasText: 'Old key' });
    page.once('dialog', (d) => void d.accept());
    await old.getByRole('button', { name: 'Revoke key Old key' }).click();
    await old.getByText(/^revoked /).waitFor();
    const oldKey = await value.inputValue();
    expect((await fetch(`${baseURL}/v1/me`, { headers: { authorization: `Bearer ${oldKey}` } })).status).toBe(401);
    await check('console-5-key-revoked');
    clean();
  });

  it('the copied key works in /docs "try it", and the console then shows when it was last used', async () => {
    // Scalar's "try it" on GET /v1/me, with the key pasted in its Token field: the browser calls the Platform API.
    const docs = await newPage(browser, { baseURL });
    docs.context.setDefaultTimeout(20_000); // Scalar is a large bundle
    await docs.page.goto('/docs');
    await docs.page.getByLabel('Bearer Token').first().fill(copiedKey);
    await docs.page.getByText('The API key making the request').first().click();
    await docs.page.getByRole('button', { name: /Test Request.*get \/v1\/me/i }).click();
    const tried = docs.page.waitForResponse((r) => r.url() === `${baseURL}/v1/me`);
    await docs.page.getByRole('button', { name: /^Send/ }).first().click();
    const answer_ = await tried;
    expect(answer_.request().headers().authorization).toBe(`Bearer ${copiedKey}`);
    expect(answer_.status()).toBe(200);
    await screenshot(docs.page, 'console-4b-docs-try-it');
    expect(docs.problems).toEqual([]);
    await docs.context.close();
    await page.reload();
    await page.locator('body[data-ready=true]').waitFor();
    const row = page.locator('#keys-table tbody tr', { hasText: 'Zapier' });
    await expect(row.locator('td').nth(4).textContent()).resolves.toBe(`${clock.current.toISOString().slice(0, 19).replace('T', ' ')} UTC`);
    // Shown once: after a reload the page has only the prefix.
    expect(await page.content()).not.toContain(copiedKey);
    clean();
  }, 60_000);

  it('webhooks: registered to a local HTTPS receiver, events edited, disabled and enabled, a test ping shows status and time', async () => {
    await page.getByLabel('HTTPS URL').fill(receiver.url());
    await page.getByLabel('Description (optional)').fill('local receiver');
    await page.getByRole('checkbox', { name: 'member.joined' }).first().check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const card = page.getByRole('article', { name: `Endpoint ${receiver.url()}` });
    await card.waitFor();
    await card.getByText('Signing secret').click();
    receiver.secret = (await card.locator('code.secret').textContent()) ?? '';
    expect(receiver.secret).toMatch(/^whsec_/);

    await card.getByRole('button', { name: 'Edit events' }).click();
    await card.getByRole('checkbox', { name: 'post.created' }).check();
    await card.getByRole('button', { name: 'Save events' }).click();
    await card.getByText('Events: member.joined, post.created').or(card.getByText('Events: post.created, member.joined')).waitFor();

    await card.getByRole('button', { name: 'Disable' }).click();
    await card.getByText('disabled', { exact: true }).waitFor();
    await card.getByRole('button', { name: 'Enable' }).click();
    await card.getByText('enabled', { exact: true }).waitFor();

    await card.getByRole('button', { name: 'Send test ping' }).click();
    await card.getByText(/^Ping delivered: the receiver answered 200 in \d+ ms\.$/).waitFor();
    expect(receiver.events.map((e) => e.type)).toEqual(['ping']);
    expect(receiver.rejected).toEqual([]);
    // A second endpoint with a long URL (for events this test never makes): it wraps inside its own box only.
    const longUrl = receiver.url(`/receivers/tribe-console/${'a-rather-long-path-segment-'.repeat(4)}end`);
    await page.getByLabel('HTTPS URL').fill(longUrl);
    await page.getByRole('checkbox', { name: 'post.created' }).first().check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('article', { name: `Endpoint ${longUrl}` }).waitFor();
    await check('console-6-webhook-pinged');
    clean();
  });

  it('delivery log: a delivery that failed (receiver 500) is found by the filters, shows the body the receiver got, is resent from the console and succeeds', async () => {
    receiver.behaviour = answer(500);
    await join(t, await signupUser(t), myHandle); // member.joined
    for (let n = 0; n < MAX_ATTEMPTS; n += 1) {
      await drain(t.deps);
      clock.advance(7 * HOUR);
    }
    const failedId = receiver.events.at(-1)!.id;
    expect(receiver.events.filter((e) => e.type === 'member.joined')).toHaveLength(MAX_ATTEMPTS);

    const card = page.getByRole('article', { name: `Endpoint ${receiver.url()}` });
    await card.getByRole('button', { name: 'Delivery log' }).click();
    const rows = page.locator('#log-table tbody tr');
    await rows.nth(1).waitFor(); // the ping and the member.joined
    await page.getByLabel('Status', { exact: true }).selectOption('failed');
    await expect(rows.count()).resolves.toBe(1);
    const failed = page.locator(`#log-table tr[data-delivery="${failedId}"]`);
    await expect(failed.locator('td').allTextContents()).resolves.toEqual([
      expect.stringMatching(/ UTC$/),
      'member.joined',
      'failed',
      String(MAX_ATTEMPTS),
      '500',
      expect.stringMatching(/^\d+ ms$/),
      'HTTP 500',
      expect.stringMatching(/^Body of delivery /),
      expect.stringContaining('Resend'),
    ]);
    // The body as the receiver got it, shown (as text) once "Body" is opened.
    await failed.locator('summary', { hasText: 'Body' }).click();
    const body = failed.locator('pre.body');
    await body.waitFor(); // visible
    expect(await body.innerText()).toBe(receiver.received.at(-1)!.rawBody);
    await page.getByLabel('Status', { exact: true }).selectOption('');
    await page.getByLabel('Event', { exact: true }).selectOption('ping');
    await expect(rows.count()).resolves.toBe(1);
    await expect(rows.first().locator('td').nth(2).textContent()).resolves.toBe('success');
    await page.getByLabel('Event', { exact: true }).selectOption('');
    await check('console-7-delivery-failed');

    receiver.behaviour = answer(200);
    await failed.getByRole('button', { name: `Resend delivery ${failedId}` }).click();
    await page.getByText(`Delivery ${failedId} queued again (pending)`).waitFor();
    await failed.getByText('pending', { exact: true }).waitFor();
    expect(await drain(t.deps)).toMatchObject({ attempted: 1, succeeded: 1 });
    await page.getByRole('button', { name: 'Refresh' }).click();
    await failed.getByText('success', { exact: true }).waitFor();
    await expect(failed.locator('td').nth(4).textContent()).resolves.toBe('200');
    expect(receiver.received.at(-1)!.headers['x-svc-delivery']).toBe(failedId);
    expect(receiver.rejected).toEqual([]);
    await check('console-8-delivery-resent');
    clean();
  });

  it('keyboard: the forms are reached and submitted with the keyboard alone', async () => {
    await page.reload();
    await page.locator('body[data-ready=true]').waitFor();
    await page.keyboard.press('Tab');
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Skip to content');
    await page.getByLabel('Name', { exact: true }).focus();
    await page.keyboard.type('Keyboard key');
    await page.keyboard.press('Tab'); // the first scope
    await page.keyboard.press('Space');
    await page.getByRole('button', { name: 'Create key' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('#keys-table tbody tr', { hasText: 'Keyboard key' }).waitFor();
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('new-key');
    clean();
  });

  it('account settings: a read-only personal API key, shown once, works on the resource API and is refused a write, then revoked', async () => {
    await page.getByRole('link', { name: 'Account settings' }).click();
    await page.locator('body[data-ready=true]').waitFor();
    await page.getByLabel('Name', { exact: true }).fill('CI reader');
    await page.getByRole('checkbox', { name: 'write' }).uncheck(); // both are ticked by default
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.locator('#new-key').waitFor();
    const key = await page.getByLabel('Key', { exact: true }).inputValue();
    expect(key).toMatch(/^svc_pk_[A-Za-z0-9_-]{43}$/);
    const row = page.locator('#pkeys-table tbody tr', { hasText: 'CI reader' });
    await expect(row.locator('td').nth(2).textContent()).resolves.toBe('read');
    const call = (method: string, path: string) => fetch(`${baseURL}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: method === 'GET' ? undefined : '{}' });
    expect((await call('GET', '/v1/auth/me')).status).toBe(200);
    expect((await call('POST', '/v1/communities')).status).toBe(403);
    expect((await call('GET', '/v1/me')).status).toBe(401); // not a Platform API key
    await check('console-9-personal-key-created');
    page.once('dialog', (d) => void d.accept());
    await row.getByRole('button', { name: 'Revoke key CI reader' }).click();
    await row.getByText(/^revoked /).waitFor();
    expect((await call('GET', '/v1/auth/me')).status).toBe(401);
    await check('console-10-personal-key-revoked');
    clean();
  });
});
