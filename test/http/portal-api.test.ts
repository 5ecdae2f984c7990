import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, type TestContext, test } from 'node:test';
import { CLI_AUDIT } from '../../src/domain/audit.js';
import type { Rate } from '../../src/domain/token-bucket.js';
import { MemoryRateLimiter } from '../../src/rate-limit/memory-rate-limiter.js';
import type { RateLimiter } from '../../src/rate-limit/rate-limiter.js';
import { expectError } from '../helpers/calls.js';
import { type Harness, type HarnessOptions, startHarness } from '../helpers/harness.js';
import { redisLimiter } from '../helpers/redis.js';
import { eachBackend, type StoreBackend } from '../helpers/stores.js';
import { testLookup } from '../helpers/webhooks.js';

/**
 * The portal's server side over HTTP, without a browser (the page itself: portal-page.test.ts): links, the
 * trade of a link for a session cookie, and what a session opens and does not.
 */

const URL = 'https://hooks.example.com/in';

async function link(h: Harness, key: string, body?: Record<string, unknown>) {
  const result = await h.call('POST', '/v1/webhooks/portal-links', { key, body });
  assert.equal(result.status, 201, result.text);
  const token = new globalThis.URL(result.json.url).hash.slice(1);
  return { ...(result.json as { url: string; owner: string; expiresAt: string }), token };
}

/** Trades a link's token for a session, as the page does: the answer, and the cookie to send back. */
async function trade(h: Harness, token: string, headers: Record<string, string> = { origin: h.url }) {
  const result = await h.call('POST', '/portal/session', { key: null, body: { token }, headers });
  const setCookie = result.headers.get('set-cookie') ?? '';
  return { result, setCookie, cookie: setCookie.split(';')[0] ?? '' };
}

/** A call of the page's session: its cookie, and the Origin a browser sends with its own page's requests. */
const fromPage = (h: Harness, cookie: string) => ({ key: null, headers: { cookie, origin: h.url } });

/** Five requests, then none for 100 s: no token comes back while a test runs, however slow the machine. */
const FIVE: Rate = { perSecond: 0.05, burst: 5 };

/** The limiters a portal session is limited by: each process's own, and the one Redis shares. */
const LIMITERS: readonly { name: string; make: (t: TestContext) => RateLimiter }[] = [
  { name: 'in memory', make: () => new MemoryRateLimiter() },
  { name: 'through Redis', make: (t) => redisLimiter(t, `petstore-test:${randomBytes(4).toString('hex')}:`) },
];

/** Status and RateLimit header of `count` calls in turn. */
async function spend(h: Harness, count: number, path: string, options: Parameters<Harness['call']>[2]) {
  const answers: { status: number; left: string }[] = [];
  for (let i = 0; i < count; i++) {
    const result = await h.call('GET', path, options);
    answers.push({ status: result.status, left: result.headers.get('ratelimit') ?? '' });
  }
  return answers;
}

function suite(backend: StoreBackend, options: HarnessOptions) {
  test('a link opens its owner’s endpoints once, by a cookie limited to /portal', async (t) => {
    const h = await startHarness(t, backend, options);
    const acme = await h.issueKey('acme-key', ['read', 'webhooks'], 'acme');
    const globex = await h.issueKey('globex-key', ['webhooks'], 'globex');
    const mine = (await h.call('POST', '/v1/webhooks', { key: acme, body: { url: URL } })).json;
    const theirs = (await h.call('POST', '/v1/webhooks', { key: globex, body: { url: URL } })).json;
    const made = await link(h, acme);
    assert.equal(made.owner, 'acme');
    assert.match(made.url, /^http:\/\/127\.0\.0\.1:\d+\/portal#[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    assert.ok(Math.abs(Date.parse(made.expiresAt) - Date.now() - 15 * 60_000) < 60_000, 'PORTAL_LINK_TTL: 15m');

    const { result, setCookie, cookie } = await trade(h, made.token);
    assert.equal(result.status, 200, result.text);
    assert.deepEqual(result.json, { owner: 'acme', expiresAt: made.expiresAt });
    assert.match(setCookie, /^petstore_portal=[^;]+; Path=\/portal; Max-Age=(89\d|900); HttpOnly; SameSite=Strict$/);
    assert.equal((await h.call('GET', '/portal/session', fromPage(h, cookie))).json.owner, 'acme');

    const list = await h.call('GET', '/portal/v1/webhooks', fromPage(h, cookie));
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(
      list.json.map((e: { id: number }) => e.id),
      [mine.id],
    );
    const created = await h.call('POST', '/portal/v1/webhooks', { ...fromPage(h, cookie), body: { url: URL } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.owner, 'acme');
    assert.match(created.json.secret, /^whsec_/);
    expectError(await h.call('GET', `/portal/v1/webhooks/${theirs.id}`, fromPage(h, cookie)), 404, 'not_found');
    const planted = await h.call('POST', '/portal/v1/webhooks', {
      ...fromPage(h, cookie),
      body: { url: URL, owner: 'globex' },
    });
    expectError(planted, 403, 'forbidden');

    // The session is no key: nothing else under /portal/v1, nothing under /v1.
    for (const path of ['/portal/v1/pets', '/portal/v1/events', '/portal/v1/store/orders']) {
      assert.match(
        expectError(await h.call('GET', path, fromPage(h, cookie)), 403, 'forbidden'),
        /webhook endpoints only/,
      );
    }
    // No link from a session: it would outlive the link that opened it.
    const relink = await h.call('POST', '/portal/v1/webhooks/portal-links', fromPage(h, cookie));
    expectError(relink, 405, 'method_not_allowed');
    expectError(await h.call('GET', '/v1/webhooks', fromPage(h, cookie)), 401, 'unauthorized');
    expectError(await h.call('GET', '/portal/v1/webhooks', { key: acme }), 401, 'unauthorized');
    // Nor by another spelling of the portal's path that the router reads as the same route.
    for (const path of ['/%70ortal/v1/webhooks', '/portal/%761/webhooks', '/portal/v1%2Fwebhooks']) {
      const spelled = await h.call('GET', path, { key: acme });
      assert.ok([401, 404].includes(spelled.status), `${path}: ${spelled.status} ${spelled.text}`);
    }
    expectError(await h.call('GET', '/portal/v1/pets', { key: null }), 401, 'unauthorized');

    // Once only, and a forged or altered token is the same refusal.
    const again = await trade(h, made.token);
    const message = expectError(again.result, 401, 'unauthorized');
    assert.match(message, /expired, was used already, or its key was revoked; ask for a new link/);
    assert.equal(again.setCookie, '');
    const altered = `${made.token.slice(0, -2)}AA`;
    assert.equal(expectError((await trade(h, altered)).result, 401, 'unauthorized'), message);
    const forged = (await trade(h, cookie.split('=')[1] ?? '')).result;
    assert.equal(expectError(forged, 401, 'unauthorized'), message, 'a session is no link');

    // Revoking the key that made the link ends its session.
    await h.store.apiKeys.revoke('acme-key', new Date(), CLI_AUDIT);
    expectError(await h.call('GET', '/portal/v1/webhooks', fromPage(h, cookie)), 401, 'unauthorized');
    expectError(await h.call('GET', '/portal/session', fromPage(h, cookie)), 401, 'unauthorized');
  });

  test('who may make links: webhooks for its owner, admin for any; expiry; the OpenAPI document', async (t) => {
    let now = Date.now();
    const h = await startHarness(t, backend, { ...options, clock: () => new Date(now) });
    const acme = await h.issueKey('acme-key', ['webhooks'], 'acme');
    const admin = await h.issueKey('operator', ['admin'], 'operator');
    expectError(await h.call('POST', '/v1/webhooks/portal-links', { key: h.keys.read }), 403, 'forbidden');
    const nosy = await h.call('POST', '/v1/webhooks/portal-links', { key: acme, body: { owner: 'globex' } });
    expectError(nosy, 403, 'forbidden');
    assert.equal((await link(h, admin, { owner: 'globex' })).owner, 'globex');
    const bad = await h.call('POST', '/v1/webhooks/portal-links', { key: admin, body: { owner: '../x' } });
    expectError(bad, 400, 'invalid_request');

    const late = await link(h, acme);
    now += 15 * 60_000 + 1000;
    expectError((await trade(h, late.token)).result, 401, 'unauthorized');
    const fresh = await link(h, acme);
    const { cookie } = await trade(h, fresh.token);
    assert.equal((await h.call('GET', '/portal/v1/webhooks', fromPage(h, cookie))).status, 200);
    now += 15 * 60_000 + 1000;
    expectError(await h.call('GET', '/portal/v1/webhooks', fromPage(h, cookie)), 401, 'unauthorized');

    const document = (await h.call('GET', '/v1/openapi.json')).json;
    assert.ok(document.paths['/webhooks/portal-links'].post, 'the link operation is documented');
    assert.deepEqual(
      Object.keys(document.paths).filter((path) => path.startsWith('/portal')),
      [],
      'the portal’s own routes are not the API',
    );
  });

  test('a change through a session must come from the portal’s own origin; reads need not', async (t) => {
    const h = await startHarness(t, backend, options);
    const made = await link(h, h.keys.all);
    const foreign = 'http://127.0.0.1:1';
    // The trade is a change too: refused from elsewhere, and the link is not spent by the refusal.
    const elsewhere = await trade(h, made.token, { origin: foreign });
    assert.match(expectError(elsewhere.result, 403, 'forbidden'), /portal's own page/);
    assert.equal(elsewhere.setCookie, '');
    expectError((await trade(h, made.token, {})).result, 403, 'forbidden');
    // The same route by an encoded path is refused alike.
    const encoded = { key: null, body: { token: made.token }, headers: { origin: foreign } };
    expectError(await h.call('POST', '/%70ortal/session', encoded), 403, 'forbidden');
    const { cookie } = await trade(h, made.token);
    const endpoint = (await h.call('POST', '/v1/webhooks', { body: { url: URL } })).json;
    const path = `/portal/v1/webhooks/${endpoint.id}`;

    const refused: Record<string, string>[] = [
      {},
      { origin: foreign },
      { origin: 'null' },
      { origin: `${h.url}.evil.example` },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { 'sec-fetch-site': 'none' },
      { 'sec-fetch-site': 'same-site', origin: h.url },
      { 'sec-fetch-site': 'same-origin', origin: foreign },
    ];
    for (const headers of refused) {
      const sent = { key: null, headers: { cookie, ...headers } };
      for (const [method, action] of [
        ['POST', '/rotate-secret'],
        ['POST', '/test'],
        ['DELETE', ''],
      ] as const) {
        expectError(await h.call(method, path + action, sent), 403, 'forbidden');
      }
      expectError(await h.call('PATCH', path, { ...sent, body: { enabled: false } }), 403, 'forbidden');
      expectError(await h.call('POST', '/portal/v1/webhooks', { ...sent, body: { url: URL } }), 403, 'forbidden');
    }
    const untouched = (await h.call('GET', `/v1/webhooks/${endpoint.id}`)).json;
    assert.deepEqual([untouched.enabled, untouched.previousSecretExpiresAt], [true, null], JSON.stringify(untouched));
    const log = await h.call('GET', `/v1/webhooks/${endpoint.id}/deliveries`);
    assert.deepEqual(log.json, [], 'no test was sent');
    assert.equal((await h.call('GET', '/v1/webhooks')).json.length, 1, 'nothing was created');

    // Reads change nothing: a GET needs neither header. The page's own origin, or a browser saying so, may act.
    assert.equal((await h.call('GET', path, { key: null, headers: { cookie } })).status, 200);
    const rotated = await h.call('POST', `${path}/rotate-secret`, fromPage(h, cookie));
    assert.equal(rotated.status, 200, rotated.text);
    const sameOrigin = { key: null, headers: { cookie, 'sec-fetch-site': 'same-origin' } };
    assert.equal((await h.call('POST', `${path}/test`, sameOrigin)).status, 202);
    // An API key under /v1 is no session: no origin is asked of it.
    assert.equal((await h.call('POST', `/v1/webhooks/${endpoint.id}/test`)).status, 202);
  });

  test('the portal’s origin is PUBLIC_URL’s when set, else the request’s as trusted proxies tell it', async (t) => {
    const behind = await startHarness(t, backend, { ...options, publicUrl: 'https://hooks.example.com/petstore' });
    const token = (await link(behind, behind.keys.all)).token;
    expectError((await trade(behind, token)).result, 403, 'forbidden');
    assert.equal((await trade(behind, token, { origin: 'https://hooks.example.com' })).result.status, 200);

    const proxied = await startHarness(t, backend, { ...options, trustProxy: ['127.0.0.1'] });
    const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'portal.example.net' };
    const origin = 'https://portal.example.net';
    const first = (await link(proxied, proxied.keys.all)).token;
    expectError((await trade(proxied, first, { origin })).result, 403, 'forbidden');
    assert.equal((await trade(proxied, first, { ...forwarded, origin })).result.status, 200);

    const direct = await startHarness(t, backend, options);
    const second = (await link(direct, direct.keys.all)).token;
    const untrusted = await trade(direct, second, { ...forwarded, origin });
    expectError(untrusted.result, 403, 'forbidden');
  });

  for (const limiter of LIMITERS) {
    test(`a session spends its owner's portal bucket ${limiter.name}, never the key that made its link`, async (t) => {
      const h = await startHarness(t, backend, {
        ...options,
        rateLimit: () => ({ limiter: limiter.make(t), perKey: FIVE }),
      });
      const admin = await h.issueKey('operator', ['admin'], 'operator');
      const acme = await h.issueKey('acme-key', ['webhooks'], 'acme');
      // Two of the operator's five tokens.
      const acmeSession = (await trade(h, (await link(h, admin, { owner: 'acme' })).token)).cookie;
      const globexSession = (await trade(h, (await link(h, admin, { owner: 'globex' })).token)).cookie;

      const session = await spend(h, 6, '/portal/v1/webhooks', fromPage(h, acmeSession));
      assert.deepEqual(
        session.map((answer) => answer.status),
        [200, 200, 200, 200, 200, 429],
        'the session has a burst of its own',
      );
      assert.match(session[0]?.left ?? '', /^"default";r=4;t=\d+$/);
      assert.match(session[5]?.left ?? '', /^"default";r=0;t=\d+$/);
      const refused = await h.call('GET', '/portal/v1/webhooks', fromPage(h, acmeSession));
      assert.match(expectError(refused, 429, 'rate_limited'), /portal/);
      assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      assert.equal(refused.headers.get('ratelimit-policy'), '"default";q=5;w=100');

      // The operator's key still has the three tokens the session did not touch, and spends them alone.
      const key = await spend(h, 4, '/v1/webhooks', { key: admin });
      assert.deepEqual(
        key.map((answer) => answer.status),
        [200, 200, 200, 429],
        'the key that made the links keeps its own bucket',
      );
      assert.match(key[0]?.left ?? '', /^"default";r=2;t=\d+$/);

      // With that key empty, another owner's session still has its whole burst...
      const globex = await h.call('GET', '/portal/v1/webhooks', fromPage(h, globexSession));
      assert.equal(globex.status, 200, globex.text);
      assert.match(globex.headers.get('ratelimit') ?? '', /^"default";r=4;t=\d+$/);
      // ...and the bucket is the owner's portal, whichever key made the link: acme's own link finds it empty.
      const again = (await trade(h, (await link(h, acme)).token)).cookie;
      expectError(await h.call('GET', '/portal/v1/webhooks', fromPage(h, again)), 429, 'rate_limited');
      assert.equal((await h.call('GET', '/v1/webhooks', { key: acme })).status, 200, "acme's key has its own bucket");
    });
  }
}

eachBackend((backend) => {
  describe(`portal links and sessions [${backend.name}]`, () =>
    suite(backend, { webhooks: { allowPrivateUrls: false, lookup: testLookup } }));
});
