import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import type { Harness, HarnessOptions } from './harness.js';

/**
 * The webhook portal's page in a real browser (Debian's Chromium through playwright-core), for the files
 * test/http/portal-page*.test.ts: one browser a file, each test in contexts of its own, and what the page
 * requested, violated or threw, for the test to check.
 */

const CHROMIUM = '/usr/bin/chromium';
// Without the background-networking flags Chromium keeps trying hosts this machine cannot reach.
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
/** Screenshots go here for a person to look at (git-ignored). */
export const OUTPUT_DIR = path.resolve('test-output');
export const NARROW = { width: 360, height: 800 };

export const noBrowser = existsSync(CHROMIUM) ? false : `Debian's chromium is not installed at ${CHROMIUM}`;
if (noBrowser !== false && process.env.CI === 'true') throw new Error(`${noBrowser}; .ci/run installs it`);

/** Local receivers; one retry after 50 ms, then failed. */
export const OPTIONS: HarnessOptions = {
  webhooks: { allowPrivateUrls: true },
  webhookDelivery: { timeoutMs: 1000, retrySchedule: [50] },
};

/** One browser for the file, each test in contexts of its own (cookies apart). */
let launched: Promise<Browser> | undefined;
const browser = () => {
  launched ??= chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  return launched;
};
after(async () => (await launched)?.close());

/** What the browser did that the test checks afterwards. */
export interface Portal {
  readonly page: Page;
  /** Every request: method, URL as the server sees it (no fragment), Referer, body. */
  readonly requests: { method: string; url: string; referer: string | undefined; body: string | null }[];
  /** CSP and Trusted Types violations, and uncaught errors. */
  readonly problems: string[];
}

/** Mints a portal link with a key (201 asserted) and returns it for this harness, with its token. */
export async function portalLink(h: Harness, key = h.keys.all): Promise<{ url: string; token: string }> {
  const minted = await h.call('POST', '/v1/webhooks/portal-links', { key });
  assert.equal(minted.status, 201, minted.text);
  assert.ok(!Number.isNaN(Date.parse(minted.json.expiresAt)), 'expiresAt is a time');
  const link = new URL(minted.json.url, h.url);
  assert.equal(link.pathname, '/portal');
  assert.equal(link.search, '', 'the token is in the fragment, which browsers never send');
  const token = link.hash.slice(1);
  assert.ok(token.length >= 20, `a token in the fragment: ${minted.json.url}`);
  return { url: `${h.url}/portal#${token}`, token };
}

/** Opens a page in a fresh context (no cookies), recording what the page requests and any violation. */
export async function openPage(t: TestContext, url: string, viewport = { width: 1024, height: 900 }): Promise<Portal> {
  const context = await (await browser()).newContext({ viewport });
  t.after(() => context.close());
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(url).origin });
  const page = await context.newPage();
  const portal: Portal = { page, requests: [], problems: [] };
  page.on('request', (request) => {
    const seen = new URL(request.url());
    seen.hash = '';
    portal.requests.push({
      method: request.method(),
      url: seen.href,
      referer: request.headers().referer,
      body: request.postData(),
    });
  });
  page.on('console', (message) => {
    if (/content security policy|trusted type|refused to/i.test(message.text())) portal.problems.push(message.text());
  });
  page.on('pageerror', (error) => portal.problems.push(`uncaught: ${error.message}`));
  // As a string: a function would be serialised with whatever the TypeScript loader added to it.
  await page.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (e) =>
      console.error('Content Security Policy violation: ' + e.violatedDirective + ' ' + e.blockedURI));`,
  });
  await page.goto(url);
  return portal;
}

/** Opens a link and waits for the owner's endpoints. */
export async function openPortal(t: TestContext, h: Harness, key = h.keys.all) {
  const link = await portalLink(h, key);
  const portal = await openPage(t, link.url);
  await portal.page.getByRole('heading', { name: 'Your webhook endpoints' }).waitFor();
  return { ...portal, token: link.token };
}

/** The page's alert and status regions, as text. */
export const alertText = async (page: Page) => (await page.locator('#alert').textContent()) ?? '';
export const statusText = async (page: Page) => (await page.locator('#status').textContent()) ?? '';

/** Until the status region says something matching (actions answer asynchronously). */
export async function statusSays(page: Page, pattern: RegExp): Promise<string> {
  await page
    .locator('#status')
    .filter({ hasText: pattern })
    .waitFor({ timeout: 5000 })
    .catch(async () => {
      assert.fail(`status: "${await statusText(page)}", alert: "${await alertText(page)}", expected ${pattern}`);
    });
  return statusText(page);
}

/** Until the locator finds `n` elements (the page's own policy forbids waitForFunction's string eval). */
export async function hasCount(locator: Locator, n: number): Promise<void> {
  for (let i = 0; i < 250 && (await locator.count()) !== n; i++) await sleep(20);
  assert.equal(await locator.count(), n);
}

/** Controls without a label, aria-label or text: none may be. */
export const UNLABELLED = `[...document.querySelectorAll('input, select, textarea, button')]
  .filter((e) => !(e.labels?.length > 0 || e.getAttribute('aria-label') || (e.tagName === 'BUTTON' && e.textContent.trim())))
  .map((e) => e.outerHTML)`;

/** The page's width and the window's: the page must not scroll sideways. */
export const WIDTHS = '[document.documentElement.scrollWidth, window.innerWidth]';

/** Whether `text` (a secret, say) is anywhere in the page: its words, its markup, or a field's value. */
export async function onPage(page: Page, text: string): Promise<boolean> {
  const sought = JSON.stringify(text);
  return (await page.evaluate(`document.body.innerText.includes(${sought})
    || document.documentElement.outerHTML.includes(${sought})
    || [...document.querySelectorAll('input, textarea')].some((field) => field.value.includes(${sought}))`)) as boolean;
}

export async function endpointsOf(h: Harness, key = h.keys.all): Promise<any[]> {
  const list = await h.call('GET', '/v1/webhooks?limit=100', { key });
  assert.equal(list.status, 200, list.text);
  return list.json;
}

export async function createEndpoint(h: Harness, body: Record<string, unknown>, key = h.keys.all): Promise<any> {
  const created = await h.call('POST', '/v1/webhooks', { key, body });
  assert.equal(created.status, 201, created.text);
  return created.json;
}
