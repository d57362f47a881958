// The creator console's pages over HTTP (issue 16): who gets which page, the pages' policy, their assets. The same
// pages driven in a real browser: test/browser/console.browser.test.ts.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PORTAL_CSP } from '../rest-facade/src/portal/console.js';
import { buildConsole } from '../scripts/build-console.js';
import { createTribe, join, setRole, signupUser, unique, type TestUser } from './factory.js';
import { startService, type TestService } from './support.js';

describe('creator console pages (issue 16)', () => {
  let t: TestService;
  let owner: TestUser;
  let admin: TestUser;
  let member: TestUser;
  let tribe: { id: string; handle: string };

  beforeAll(async () => {
    await buildConsole();
    t = await startService();
    [owner, admin, member] = await Promise.all([signupUser(t), signupUser(t), signupUser(t)]);
    tribe = await createTribe(t, owner);
    await join(t, admin, tribe.handle);
    await join(t, member, tribe.handle);
    await setRole(t, owner, tribe.id, admin.id, 'admin');
  });
  afterAll(async () => {
    await t?.stop();
  });

  const get = (path: string, who?: TestUser) => {
    const req = t.api.get(path).set('accept', 'text/html');
    return who ? req.set('cookie', who.cookie) : req;
  };
  const pageOf = (html: string) => /<body[^>]*data-page="([a-z]+)"/.exec(html)?.[1];

  it('the policy allows our own script and style only: no inline, no eval, nothing from elsewhere', () => {
    expect(PORTAL_CSP).toContain("default-src 'none'");
    expect(PORTAL_CSP).toContain("script-src 'self'");
    expect(PORTAL_CSP).toContain("connect-src 'self'");
    expect(PORTAL_CSP).toContain("frame-ancestors 'none'");
    expect(PORTAL_CSP).not.toMatch(/unsafe-|https?:|\*/);
  });

  it('no session: the sign-in page (200); owner and admin: the console; a member: 403; an unknown tribe: 404', async () => {
    const cases: Array<[TestUser | undefined, string, number, string]> = [
      [undefined, tribe.handle, 200, 'signin'],
      [owner, tribe.handle, 200, 'console'],
      [admin, tribe.handle, 200, 'console'],
      [member, tribe.handle, 403, 'message'],
      [owner, `no-such-${unique()}`, 404, 'message'],
    ];
    for (const [who, handle, status, page] of cases) {
      const res = await get(`/console/${handle}`, who);
      expect([res.status, pageOf(res.text)]).toEqual([status, page]);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['content-security-policy']).toBe(PORTAL_CSP);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['x-frame-options']).toBe('DENY');
      // Only our script, by src; no inline script, style or handler.
      expect([...res.text.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1])).toEqual([' src="/console/assets/console.js" defer']);
      expect(res.text).not.toMatch(/\son[a-z]+=|\bstyle=|<style/);
    }
  });

  it('/console: signed out, the sign-in page; signed in, "Your tribes" and the create form; an unknown handle offers both', async () => {
    const out = await get('/console');
    expect([out.status, pageOf(out.text), out.headers['content-security-policy'], out.headers['cache-control']]).toEqual([200, 'signin', PORTAL_CSP, 'no-store']);
    expect(out.text).toContain('<h1>Sign in to the creator console</h1>');
    expect(out.text).toContain('id="signup-form"');

    const home = await get('/console', member); // a member of a tribe, owner of none: still may create one
    expect([home.status, pageOf(home.text), home.headers['content-security-policy']]).toEqual([200, 'home', PORTAL_CSP]);
    expect(home.text).toContain('<h1>Your tribes</h1>');
    expect(home.text).toContain('<ul id="tribes"');
    expect(home.text).toContain('href="/console/-/settings"');
    // The create form: the fields createCommunity needs, a place for each field's error.
    for (const field of ['id="create-form"', 'id="create-name" name="name"', 'id="create-handle" name="handle"', 'id="create-public"', 'id="create-private"', 'id="create-name-error"', 'id="create-handle-error"']) {
      expect(home.text).toContain(field);
    }
    expect(home.text).toMatch(/id="create-handle" name="handle" required maxlength="40" value=""/);
    expect([...home.text.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1])).toEqual([' src="/console/assets/console.js" defer']);
    expect(home.text).not.toMatch(/\son[a-z]+=|\bstyle=|<style/);

    const wanted = `new-${unique()}`;
    const missing = await get(`/console/${wanted}`, member);
    expect([missing.status, pageOf(missing.text)]).toEqual([404, 'message']);
    expect(missing.text).toContain('<h1>No such tribe</h1>');
    expect(missing.text).toContain('<a href="/console">Your tribes</a>');
    expect(missing.text).toContain(`value="${wanted}"`);
    // The console of a tribe links back to the list.
    expect((await get(`/console/${tribe.handle}`, owner)).text).toContain('<a href="/console">Your tribes</a>');
  });

  it('what the create form sends: createCommunity through /graphql with the session cookie; a bad handle is refused, named with its rule', async () => {
    const send = (handle: string) =>
      t.api
        .post('/graphql')
        .set('cookie', member.cookie)
        .send({ query: 'mutation ConsoleCreateTribe($input: CreateCommunityInput!) { createCommunity(input: $input) { handle } }', variables: { input: { name: 'Made here', handle, isPublic: false } } });
    const bad = await send('Bad Handle!');
    expect(bad.body.errors[0].message).toMatch(/^handle: /);
    expect(bad.body.errors[0].extensions.details).toEqual([{ field: 'handle', message: expect.stringContaining('3 to 40') }]);
    const handle = `made-${unique()}`;
    expect((await send(handle)).body.data.createCommunity.handle).toBe(handle);
    expect((await get(`/console/${handle}`, member)).status).toBe(200);
  });

  it('a handle with markup is escaped in the page', async () => {
    const res = await get(`/console/${encodeURIComponent('<b>"x')}`);
    expect(res.text).not.toContain('<b>');
    expect(res.text).toContain('data-handle="&lt;b&gt;&quot;x"');
  });

  it('serves the built script and stylesheet; other asset names are 404', async () => {
    const js = await t.api.get('/console/assets/console.js');
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.text.length).toBeLessThan(16_000); // a few kilobytes of our own
    expect(js.text).not.toMatch(/\beval\(|new Function\(/);
    const css = await t.api.get('/console/assets/console.css');
    expect(css.status).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect((await t.api.get('/console/assets/secret.txt')).status).toBe(404);
    expect((await t.api.get('/console/assets/..%2f..%2fpackage.json')).status).toBe(404);
  });
});
