// Shared launcher for the browser tests (issue 16): Playwright (`playwright-core`, which downloads no browser)
// driving Debian's Chromium, pages that collect console errors and Content-Security-Policy violations, an axe-core
// accessibility check run inside the page, and screenshots under test-artifacts/screenshots/ (in .gitignore).
//
//   const browser = await launchBrowser();                 // one per test file (beforeAll), browser.close() in afterAll
//   const { page, problems } = await newPage(browser, { baseURL });
//   await page.goto('/console/my-tribe');
//   expect(await axe(page)).toEqual([]);                   // serious and critical violations only
//   await screenshot(page, 'console-keys');
//   expect(problems).toEqual([]);                          // console errors, page errors, CSP violations
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium; `.ci/run` installs the `chromium` package when it is missing. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/**
 * Without these flags Chromium, on a machine with no internet, waits on the network (component updates, sync,
 * QUIC probes) and a test hangs.
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const here = dirname(fileURLToPath(import.meta.url));
/** Where screenshots go; `.gitignore` lists test-artifacts/. */
export const SCREENSHOT_DIR = resolve(here, '../../test-artifacts/screenshots');

/**
 * Chromium on a fresh user-data-dir: Playwright's launch() makes a temporary profile for each browser and removes
 * it on close(). One browser per test file (beforeAll, closed in afterAll); each test takes a new context
 * (newPage), which is cheap.
 */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    chromiumSandbox: false,
    args: CHROMIUM_ARGS,
    timeout: 30_000,
  });
}

export interface OpenedPage {
  page: Page;
  context: BrowserContext;
  /**
   * Everything a page did wrong, as lines: `console.error: ...`, `pageerror: ...`, `csp: <directive> blocked
   * <uri> at <source>:<line>` (from `securitypolicyviolation` events, which fire in every frame of the page).
   * A test ends with expect(problems).toEqual([]).
   */
  problems: string[];
}

/**
 * A new context and page. `baseURL` lets tests goto('/console/x'). The CSP collector is an init script plus a
 * binding: both go through the DevTools protocol, so the page's own CSP does not block them and the page needs no
 * script of ours. Chromium also logs each CSP refusal as a console error, caught by the console collector.
 */
export async function newPage(browser: Browser, options: { baseURL?: string } = {}): Promise<OpenedPage> {
  const context = await browser.newContext({ baseURL: options.baseURL, viewport: { width: 1280, height: 900 } });
  const problems: string[] = [];
  await context.exposeBinding('__svcReportCspViolation', (_source, line: string) => {
    problems.push(`csp: ${line}`);
  });
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      const report = (window as unknown as { __svcReportCspViolation?: (line: string) => void }).__svcReportCspViolation;
      report?.(`${e.effectiveDirective} blocked ${e.blockedURI || '(inline)'} at ${e.sourceFile}:${e.lineNumber}`);
    });
  });
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') {
      const at = message.location();
      problems.push(`console.error: ${message.text()}${at.url ? ` (${at.url}:${at.lineNumber})` : ''}`);
    }
  });
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  return { page, context, problems };
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  /** CSS targets of the failing nodes. */
  targets: string[];
}

let axeSource: string | undefined;

/**
 * Runs axe-core (from npm) in the page and answers its violations of impact `serious` or `critical` (pass
 * `{ impacts: [...] }` for others). The source is evaluated through the DevTools protocol (page.evaluate), which the
 * page's CSP does not govern, so the page under test keeps its real CSP (no bypassCSP) and axe adds no <script>.
 */
export async function axe(page: Page, options: { impacts?: string[] } = {}): Promise<AxeViolation[]> {
  const impacts = options.impacts ?? ['serious', 'critical'];
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  const loaded = await page.evaluate(() => typeof (window as unknown as { axe?: unknown }).axe === 'object');
  if (!loaded) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const engine = (window as unknown as {
      axe: { run(context: Document, options: object): Promise<{ violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[] }> }> }> };
    }).axe;
    const result = await engine.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.map(String).join(' ')) }));
  });
  return violations.filter((v) => v.impact !== null && impacts.includes(v.impact));
}

/** A full-page PNG at test-artifacts/screenshots/<name>.png (the folder is made when missing); answers the path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name.replace(/[^a-zA-Z0-9._-]+/g, '-')}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
