import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { EVENT_TYPES } from '../../src/domain/event-types.js';
import { startHarness } from '../helpers/harness.js';
import { isStream, openStream } from '../helpers/sse-client.js';
import { BACKENDS } from '../helpers/stores.js';

const CHROMIUM = '/usr/bin/chromium';
/** Screenshots go here for a person to look at (git-ignored). */
const OUTPUT_DIR = path.resolve('test-output');
// The page renders the same whatever the store; the store contract is tested elsewhere.
const sqlite = BACKENDS[0] as (typeof BACKENDS)[number];

const noBrowser = existsSync(CHROMIUM) ? false : `Debian's chromium is not installed at ${CHROMIUM}`;
if (noBrowser !== false && process.env.CI === 'true') throw new Error(`${noBrowser}; .ci/run installs it`);

interface RawResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  /** The body as it crossed the wire, still in its content coding. */
  readonly wire: Buffer;
}

/** GET by node:http, which (unlike fetch) leaves the body as it was sent. */
function rawGet(url: string, headers: Record<string, string>): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers, agent: false }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, wire: Buffer.concat(chunks) }),
        );
      })
      .on('error', reject);
  });
}

function decoded({ headers, wire }: RawResponse): Buffer {
  if (headers['content-encoding'] === 'br') return brotliDecompressSync(wire);
  if (headers['content-encoding'] === 'gzip') return gunzipSync(wire);
  assert.equal(headers['content-encoding'], undefined, 'a coding the client did not offer');
  return wire;
}

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

  test('its assets and the document are compressed and cacheable; the API answers are neither', async (t) => {
    const h = await startHarness(t, sqlite);
    const bundle = `${h.url}/docs/static/swagger-ui-bundle.js`;
    const plainBundle = await rawGet(bundle, { 'accept-encoding': 'identity' });
    assert.equal(plainBundle.headers['content-encoding'], undefined);
    for (const offered of ['br, gzip', 'gzip']) {
      const coded = await rawGet(bundle, { 'accept-encoding': offered });
      assert.equal(coded.status, 200);
      assert.equal(coded.headers['content-encoding'], offered.split(',')[0], offered);
      assert.ok(decoded(coded).equals(plainBundle.wire), 'the same script');
      assert.ok(
        coded.wire.length * 3 < plainBundle.wire.length,
        `${coded.wire.length} of ${plainBundle.wire.length} bytes`,
      );
      assert.match(coded.headers.vary ?? '', /accept-encoding/i);
    }
    // Swagger UI's files change only with the package: cached a day, then revalidated.
    const cached = await rawGet(bundle, { 'accept-encoding': 'br' });
    assert.equal(cached.headers['cache-control'], 'public, max-age=86400');
    const assetTag = cached.headers.etag ?? '';
    assert.ok(assetTag !== '', 'an ETag to revalidate with');
    const unchanged = await rawGet(bundle, { 'accept-encoding': 'br', 'if-none-match': assetTag });
    assert.equal(unchanged.status, 304);
    assert.equal(unchanged.wire.length, 0);

    // The document changes with any deploy: compressed, kept, and revalidated on every use.
    const documentUrl = `${h.url}/v1/openapi.json`;
    const plainDocument = await rawGet(documentUrl, {});
    const document = await rawGet(documentUrl, { 'accept-encoding': 'gzip' });
    assert.equal(document.headers['content-encoding'], 'gzip');
    assert.match(document.headers['content-type'] ?? '', /^application\/json/);
    assert.deepEqual(JSON.parse(decoded(document).toString()), JSON.parse(plainDocument.wire.toString()));
    for (const response of [document, await rawGet(`${h.url}/docs`, {})]) {
      assert.equal(response.headers['cache-control'], 'no-cache');
      assert.match(response.headers.etag ?? '', /^W\/"/);
    }
    const sameDocument = await rawGet(documentUrl, {
      'accept-encoding': 'gzip',
      'if-none-match': document.headers.etag ?? '',
    });
    assert.equal(sameDocument.status, 304);
    assert.equal(sameDocument.wire.length, 0);
    // A miss among the assets is an error like any other: never cached.
    const missing = await rawGet(`${h.url}/docs/static/missing.js`, { 'accept-encoding': 'gzip' });
    assert.equal(missing.status, 404);
    assert.equal(missing.headers['cache-control'], 'no-store');

    // API answers: not compressed (small pages gain little for their CPU) and never cached.
    await h.createPets(30);
    const page = await rawGet(`${h.url}/v1/pets?limit=30`, {
      authorization: `Bearer ${h.keys.read}`,
      'accept-encoding': 'gzip, br',
    });
    assert.equal(page.status, 200);
    assert.equal(page.headers['content-encoding'], undefined);
    assert.equal(page.headers['cache-control'], 'no-store');
    const stream = await openStream(h.url, '/v1/events', {
      key: h.keys.read,
      headers: { 'accept-encoding': 'gzip, br' },
    });
    assert.ok(isStream(stream));
    stream.close();
    assert.equal(stream.headers['content-encoding'], undefined, 'the event stream is sent as it happens');
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
    assert.equal(webhookIds.length, EVENT_TYPES.length + 1, 'one webhook per event type, and the test send');
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
