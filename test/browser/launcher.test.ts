// The shared browser launcher itself (test/browser/browser.ts): Chromium starts offline, the collectors catch a
// CSP violation and a console error, axe reports a serious violation, a screenshot is written.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { axe, launchBrowser, newPage, screenshot } from './browser.js';

const PAGE = `<!doctype html><html lang="en"><head><title>t</title><script src="/ok.js"></script></head>
<body><main><h1>Launcher</h1><input id="nolabel"><script>document.title = 'inline ran'</script></main></body></html>`;

let browser: Browser;
let server: Server;
let baseURL: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/ok.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end("console.error('from ok.js');");
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html', 'content-security-policy': "default-src 'self'; script-src 'self'" });
    res.end(PAGE);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => server?.close(r));
});

describe('browser launcher', () => {
  it('collects CSP violations and console errors, runs axe under the CSP, saves a screenshot', async () => {
    const { page, problems, context } = await newPage(browser, { baseURL });
    await page.goto('/');
    expect(await page.title()).toBe('t'); // the inline script was refused
    const violations = await axe(page);
    expect(violations.map((v) => v.id)).toContain('label');
    expect(problems.some((p) => p.startsWith('csp: script-src-elem blocked inline'))).toBe(true);
    expect(problems.some((p) => p.startsWith('console.error: from ok.js'))).toBe(true);
    expect(existsSync(await screenshot(page, 'launcher-self-test'))).toBe(true);
    await context.close();
  });
});
