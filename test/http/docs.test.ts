import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import { startHarness } from '../helpers/harness.js';
import { BACKENDS } from '../helpers/stores.js';

const CHROMIUM = '/usr/bin/chromium';
/** Screenshots go here for a person to look at (git-ignored). */
const OUTPUT_DIR = path.resolve('test-output');
// The page renders the same whatever the store; the store contract is tested elsewhere.
const sqlite = BACKENDS[0] as (typeof BACKENDS)[number];

const noBrowser = existsSync(CHROMIUM) ? false : `Debian's chromium is not installed at ${CHROMIUM}`;
if (noBrowser !== false && process.env.CI === 'true') throw new Error(`${noBrowser}; .ci/run installs it`);

describe('/docs', () => {
  test('the page, its assets and its copy of the document are public and served by the service', async (t) => {
    const h = await startHarness(t, sqlite);
    const page = await h.call('GET', '/docs', { key: null });
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] as string);
    assert.ok(assets.length >= 4, 'the page names its scripts and styles');
    for (const asset of assets) {
      assert.ok(asset.startsWith('/docs/static/'), `${asset} is served by the service, not a CDN`);
      const response = await h.call('GET', asset, { key: null });
      assert.equal(response.status, 200, asset);
    }
    const policy = page.headers.get('content-security-policy') ?? '';
    assert.match(policy, /default-src 'self'/);
    assert.doesNotMatch(policy, /upgrade-insecure-requests/, 'the page must work over plain HTTP');

    // Other methods are 405 with Allow, without asking for a key, like on every other public path.
    for (const [method, path] of [
      ['POST', '/docs'],
      ['DELETE', '/docs/json'],
      ['POST', '/docs/static/index.css'],
    ]) {
      const refused = await h.call(method as string, path as string, { key: null });
      assert.equal(refused.status, 405, `${method} ${path}`);
      assert.match(refused.headers.get('allow') ?? '', /GET/);
    }

    const copy = await h.call('GET', '/docs/json', { key: null });
    const document = await h.call('GET', '/v1/openapi.json', { key: null });
    assert.deepEqual(copy.json, document.json);
  });

  test('in a real browser: every operation, the deprecated one marked, and "try it" with a key returns real data', {
    skip: noBrowser,
    timeout: 120_000,
  }, async (t) => {
    const h = await startHarness(t, sqlite);
    const pets = await h.createPets(2, (i) => ({ name: `Docs pet ${i}`, categoryId: 7 }));
    const document = (await h.call('GET', '/v1/openapi.json', { key: null })).json;
    type PathItems = Record<string, Record<string, { operationId: string }>>;
    const idsOf = (items: PathItems) =>
      Object.values(items).flatMap((item) => Object.values(item).map((operation) => operation.operationId));
    // The paths' operations and, in their own section, the webhooks the service sends.
    const webhookIds = idsOf(document.webhooks);
    assert.equal(webhookIds.length, 4, 'one webhook per event type');
    const operationIds = [...idsOf(document.paths), ...webhookIds].sort();

    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      // Without the background-networking flags Chromium keeps trying hosts this machine cannot reach.
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    t.after(() => browser.close());
    const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
    // Offline: any request that leaves the service is recorded and refused.
    const foreign: string[] = [];
    await page.route('**/*', (route) => {
      if (route.request().url().startsWith(h.url)) return route.continue();
      foreign.push(route.request().url());
      return route.abort();
    });

    await page.goto(`${h.url}/docs`);
    await page.locator('.opblock').first().waitFor();
    const shown = (await page.locator('.opblock-summary-operation-id').allTextContents()).map((s) => s.trim()).sort();
    assert.deepEqual(shown, operationIds);
    const deprecated = await page.locator('.opblock-deprecated .opblock-summary-operation-id').allTextContents();
    assert.deepEqual(
      deprecated.map((s) => s.trim()),
      ['getPet'],
    );

    await page.locator('.auth-wrapper .authorize').click();
    await page.locator('.auth-container input').fill(h.keys.read);
    await page.locator('.auth-btn-wrapper .authorize').click();
    await page.locator('.auth-btn-wrapper .btn-done').click();

    const listPets = page.locator('#operations-pets-listPets');
    await listPets.locator('.opblock-summary').click();
    await listPets.locator('.try-out__btn').click();
    await listPets.locator('.execute').click();
    const status = listPets.locator('.live-responses-table .response .response-col_status');
    await status.waitFor();
    assert.equal((await status.textContent())?.trim(), '200');
    const body = await listPets.locator('.live-responses-table .response-col_description pre').first().textContent();
    for (const pet of pets) assert.ok(body?.includes(pet.name), `the response shows ${pet.name}`);
    assert.deepEqual(foreign, [], 'the page fetched nothing from outside the service');

    await mkdir(OUTPUT_DIR, { recursive: true });
    const screenshot = path.join(OUTPUT_DIR, 'docs.png');
    await page.screenshot({ path: screenshot, fullPage: true });
    t.diagnostic(`screenshot: ${screenshot}`);
  });
});
