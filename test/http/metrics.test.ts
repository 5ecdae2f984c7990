import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { Rate } from '../../src/domain/token-bucket.js';
import { MemoryRateLimiter } from '../../src/rate-limit/memory-rate-limiter.js';
import { RedisRateLimiter } from '../../src/rate-limit/redis-rate-limiter.js';
import { startHarness } from '../helpers/harness.js';
import { sparePort } from '../helpers/pg-cluster.js';
import { BACKENDS, eachBackend } from '../helpers/stores.js';

const sqlite = BACKENDS[0] as (typeof BACKENDS)[number];

/** The value of one sample line, e.g. `name{a="b"} 3`; 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (wanted.every((pair) => line.includes(pair))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

eachBackend((backend) => {
  describe(`metrics [${backend.name}]`, () => {
    test('counts and times requests per operation and status, and calls to the deprecated operation', async (t) => {
      const h = await startHarness(t, backend);
      const [pet] = await h.createPets(3);
      for (let i = 0; i < 4; i++) await h.call('GET', '/v1/pets');
      await h.call('GET', '/v1/pets?limit=0');
      await h.call('GET', `/v1/pets/${pet.id}`);
      await h.call('GET', '/v1/pets/999');
      await h.call('GET', '/v1/pets', { key: null });
      await h.call('GET', '/nowhere');

      const scrape = await h.call('GET', '/metrics', { key: null });
      assert.equal(scrape.status, 200);
      assert.match(scrape.headers.get('content-type') ?? '', /^text\/plain/);
      const text = scrape.text;
      const requests = 'petstore_http_requests_total';
      assert.equal(sample(text, requests, { operation: 'createPet', status: '201' }), 3);
      assert.equal(sample(text, requests, { operation: 'listPets', status: '200' }), 4);
      assert.equal(sample(text, requests, { operation: 'listPets', status: '400' }), 1);
      assert.equal(sample(text, requests, { operation: 'listPets', status: '401' }), 1);
      assert.equal(sample(text, requests, { operation: 'getPet', status: '200' }), 1);
      assert.equal(sample(text, requests, { operation: 'getPet', status: '404' }), 1);
      assert.equal(sample(text, requests, { operation: 'not_found', status: '404' }), 1);
      assert.equal(
        sample(text, 'petstore_http_request_duration_seconds_count', { operation: 'listPets', status: '200' }),
        4,
      );
      assert.equal(sample(text, 'petstore_deprecated_calls_total', { operation: 'getPet' }), 2);
      assert.ok(sample(text, 'petstore_process_resident_memory_bytes') > 0, 'process metrics are there');

      // Store calls: the 3 creates, and the 4 lists that passed validation (the 400 never reached the store);
      // the 3 repeats of the unchanged page come from the page cache.
      const storeCalls = 'petstore_store_call_duration_seconds_count';
      assert.equal(sample(text, storeCalls, { call: 'pets.create', outcome: 'ok' }), 3);
      assert.equal(sample(text, storeCalls, { call: 'pets.list', outcome: 'ok' }), 1);
      assert.equal(sample(text, storeCalls, { call: 'pets.get', outcome: 'ok' }), 2);
      assert.ok(sample(text, 'petstore_store_call_duration_seconds_sum', { call: 'pets.list' }) > 0);
      const pool = 'petstore_db_pool_connections';
      if (backend.name === 'postgres') {
        assert.ok(sample(text, pool, { state: 'max' }) >= 1, 'the pool size is reported');
        assert.ok(sample(text, pool, { state: 'open' }) >= 1, 'connections were opened');
        assert.equal(sample(text, pool, { state: 'waiting' }), 0);
      } else {
        assert.doesNotMatch(text, /petstore_db_pool/, 'SQLite has no pool');
      }
    });
  });
});

describe('rate-limit metrics', () => {
  const rate: Rate = { perSecond: 0.1, burst: 2 };
  test('rejections are counted by reason', async (t) => {
    const h = await startHarness(t, sqlite, {
      rateLimit: () => ({ limiter: new MemoryRateLimiter(), perKey: rate }),
    });
    for (let i = 0; i < 5; i++) await h.call('GET', '/v1/pets');
    const text = (await h.call('GET', '/metrics', { key: null })).text;
    assert.equal(sample(text, 'petstore_rate_limit_rejections_total', { reason: 'api_key' }), 3);
  });

  test('the operator manual names exactly the reasons rejections are counted by', async (t) => {
    const h = await startHarness(t, sqlite, {
      rateLimit: () => ({ limiter: new MemoryRateLimiter(), perKey: rate }),
    });
    const link = await h.call('POST', '/v1/webhooks/portal-links');
    const token = new URL(link.json.url).hash.slice(1);
    const traded = await h.call('POST', '/portal/session', { key: null, body: { token }, headers: { origin: h.url } });
    const cookie = (traded.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    for (let i = 0; i < 3; i++) await h.call('GET', '/v1/pets');
    for (let i = 0; i < 3; i++) await h.call('GET', '/portal/v1/webhooks', { key: null, headers: { cookie } });
    for (let i = 0; i < 21; i++) await h.call('GET', '/v1/pets', { key: 'psk_wrong' });
    const text = (await h.call('GET', '/metrics', { key: null })).text;
    const counted = [...text.matchAll(/^petstore_rate_limit_rejections_total\{reason="(\w+)"\} [1-9]/gm)].map(
      (m) => m[1],
    );
    const manual = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
    const row = manual.split('\n').find((line) => line.startsWith('| `petstore_rate_limit_rejections_total`')) ?? '';
    const documented = [...(/\(([^)]*)\)/.exec(row)?.[1]?.matchAll(/`(\w+)`/g) ?? [])].map((m) => m[1]);
    assert.deepEqual(documented.sort(), counted.sort(), row);
    assert.equal(counted.length, 3);
  });

  test('a request let through while Redis is unreachable is counted once as fail-open', async (t) => {
    const limiter = new RedisRateLimiter({ url: `redis://127.0.0.1:${await sparePort()}`, prefix: 'nowhere:' });
    t.after(() => limiter.close());
    const h = await startHarness(t, sqlite, {
      rateLimit: () => ({ limiter, perKey: rate }),
    });
    for (let i = 0; i < 4; i++) assert.equal((await h.call('GET', '/v1/pets')).status, 200);
    const failOpen = async () =>
      sample((await h.call('GET', '/metrics', { key: null })).text, 'petstore_rate_limit_fail_open_total');
    assert.equal(await failOpen(), 4, 'one per request with a key: only its own bucket is asked');
    // A failed authentication asks only its address's bucket, which could not be read either.
    for (let i = 0; i < 3; i++) assert.equal((await h.call('GET', '/v1/pets', { key: 'psk_wrong' })).status, 401);
    assert.equal(await failOpen(), 7);
  });
});
