import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { ConfigError } from '../../src/config/config-error.js';
import type { Rate } from '../../src/domain/token-bucket.js';
import { MemoryRateLimiter } from '../../src/rate-limit/memory-rate-limiter.js';
import { issueApiKey } from '../../src/services/api-keys.js';
import { expectError, request } from '../helpers/calls.js';
import { failUntilRefused } from '../helpers/failed-authentication.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { cliEnv, firstKey, freshDatabaseUrl, startServe } from '../helpers/process.js';
import { privateRedis, redisLimiter } from '../helpers/redis.js';
import { BACKENDS } from '../helpers/stores.js';

const backend = BACKENDS[0];
assert.ok(backend);

async function statuses(h: Harness, count: number, key?: string): Promise<number[]> {
  const results: number[] = [];
  for (let i = 0; i < count; i++) {
    results.push((await h.call('GET', '/v1/pets', key === undefined ? {} : { key })).status);
  }
  return results;
}

const slow: Rate = { perSecond: 0.2, burst: 5 };

describe('rate limits', () => {
  test('per API key: the burst passes with RateLimit headers, then 429 rate_limited with Retry-After', async (t) => {
    const h = await startHarness(t, backend, { rateLimit: () => ({ limiter: new MemoryRateLimiter(), perKey: slow }) });
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const result = await h.call('GET', '/v1/pets');
      assert.equal(result.status, 200);
      assert.equal(result.headers.get('ratelimit-policy'), '"default";q=5;w=25');
      remaining.push(result.headers.get('ratelimit') ?? '');
    }
    assert.match(remaining[0] ?? '', /^"default";r=4;t=\d+$/);
    assert.match(remaining[4] ?? '', /^"default";r=0;t=\d+$/);
    const refused = await h.call('GET', '/v1/pets');
    assert.match(expectError(refused, 429, 'rate_limited'), /over its rate limit/);
    assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    assert.match(refused.headers.get('ratelimit') ?? '', /^"default";r=0;/);
    assert.equal((await h.call('GET', '/v1/pets', { key: h.keys.read })).status, 200, 'another key has its own bucket');
    assert.equal((await h.call('GET', '/healthz', { key: null })).status, 200, 'public endpoints are not limited');
  });

  test('failed authentication is limited per client address; a valid key from it is never refused', async (t) => {
    const h = await startHarness(t, backend, { rateLimit: () => ({ limiter: new MemoryRateLimiter(), perKey: slow }) });
    const bad = 'psk_000000000000000000000000000000000000';
    // Without TRUST_PROXY a client cannot pick its address: each of these is the same 127.0.0.1.
    const refused = await failUntilRefused((i) =>
      h.call('GET', '/v1/pets', { key: i % 2 ? bad : null, headers: { 'x-forwarded-for': `203.0.113.${i % 250}` } }),
    );
    assert.match(expectError(refused, 429, 'rate_limited'), /failed authentications from this address/);
    assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    expectError(await h.call('GET', '/v1/pets', { key: null }), 429, 'rate_limited');
    for (const key of [h.keys.all, h.keys.read]) {
      assert.equal((await h.call('GET', '/v1/pets', { key })).status, 200, 'a valid key from that address passes');
    }
    expectError(await h.call('POST', '/v1/pets', { key: h.keys.read, body: {} }), 403, 'forbidden');
  });

  test('RATE_LIMIT_RPS=0 keeps the failed-authentication limit; TRUST_PROXY gives each client behind a proxy its own', async (t) => {
    const env = cliEnv(await freshDatabaseUrl(t, backend), { RATE_LIMIT_RPS: '0', TRUST_PROXY: '127.0.0.1' });
    const server = await startServe(t, env);
    const key = await firstKey(server);
    const from = (address: string, sent: string | null) =>
      request(server.url, 'GET', '/v1/pets', { key: sent, headers: { 'x-forwarded-for': address } });
    expectError(await failUntilRefused(() => from('203.0.113.7', null)), 429, 'rate_limited');
    assert.equal((await from('203.0.113.8', null)).status, 401, 'another client behind the proxy has its own bucket');
    const valid = await from('203.0.113.7', key);
    assert.equal(valid.status, 200, 'a valid key is never refused by the failed-authentication limit');
    assert.equal(valid.headers.get('ratelimit'), null, 'no per-key limit with RATE_LIMIT_RPS=0');
    // The request log names the client, not the proxy (the log is written asynchronously).
    const logged = () =>
      server
        .stdout()
        .split('\n')
        .filter((line) => line.includes('"msg":"request"'))
        .map((line) => JSON.parse(line).ip);
    for (let i = 0; i < 50 && logged().length < 23; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(new Set(logged()), new Set(['203.0.113.7', '203.0.113.8']));
  });

  test('with Redis, two instances share one limit', async (t) => {
    const prefix = `petstore-test:${randomBytes(4).toString('hex')}:`;
    const rate: Rate = { perSecond: 0.5, burst: 10 };
    const h = await startHarness(t, backend, { rateLimit: () => ({ limiter: redisLimiter(t, prefix), perKey: rate }) });
    const other = await h.startInstance();
    const started = Date.now();
    const results: number[] = [];
    for (let i = 0; i < 30; i++) results.push((await (i % 2 ? other : h).call('GET', '/v1/pets')).status);
    const elapsed = (Date.now() - started) / 1000;
    const allowed = results.filter((status) => status === 200).length;
    const expected = rate.burst + Math.floor(elapsed * rate.perSecond);
    t.diagnostic(`allowed ${allowed} of 30 across two instances; burst ${rate.burst}, ${elapsed.toFixed(2)} s elapsed`);
    assert.ok(allowed >= rate.burst && allowed <= expected + 1, `allowed ${allowed}, expected about ${expected}`);
    assert.ok(
      results.slice(allowed).every((status) => status === 429),
      'every request past the limit is refused',
    );
  });

  test('if Redis goes away the service keeps serving (fails open), and limits return with it', async (t) => {
    const redis = await privateRedis(t);
    const rate: Rate = { perSecond: 0.1, burst: 3 };
    const h = await startHarness(t, backend, {
      rateLimit: () => ({ limiter: redisLimiter(t, 'outage:', redis.url), perKey: rate }),
    });
    const ready = async () => {
      for (let i = 0; i < 50; i++) {
        const status = (await h.call('GET', '/v1/pets')).status;
        if (status === 429) return;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error('the limit never applied');
    };
    await ready();

    await redis.kill();
    assert.deepEqual(await statuses(h, 10), Array(10).fill(200), 'requests pass while Redis is down');
    const metrics = (await h.call('GET', '/metrics')).text;
    const failedOpen = Number(/^petstore_rate_limit_fail_open_total (\d+)/m.exec(metrics)?.[1] ?? 0);
    assert.ok(failedOpen >= 10, `fail-open was reported (${failedOpen})`);

    redis.start();
    await ready();
    assert.equal((await h.call('GET', '/v1/pets')).status, 429, 'the limit applies again once Redis is back');
  });

  test('a hung Redis (SIGSTOP) costs a request a few ms, and when it resumes its backlog is charged to no one', async (t) => {
    const redis = await privateRedis(t);
    const rate: Rate = { perSecond: 0.001, burst: 3 };
    const h = await startHarness(t, backend, {
      rateLimit: () => ({ limiter: redisLimiter(t, 'hung:', redis.url), perKey: rate }),
    });
    /** The first answer the limiter could judge (it says so in RateLimit); those before it took nothing. */
    const judged = async () => {
      for (let i = 0; i < 100; i++) {
        const result = await h.call('GET', '/v1/pets');
        if (result.headers.get('ratelimit') !== null) return result;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error('the limiter never answered');
    };
    assert.match((await judged()).headers.get('ratelimit') ?? '', /^"default";r=2;/);

    redis.process.kill('SIGSTOP');
    const timed = async (key?: string | null) => {
      const started = performance.now();
      const { status } = await h.call('GET', '/v1/pets', key === undefined ? {} : { key });
      return { status, ms: performance.now() - started };
    };
    const first = await timed();
    const rest: Array<{ status: number; ms: number }> = [];
    for (let i = 0; i < 20; i++) rest.push(await timed(i % 4 === 3 ? null : undefined));
    const ms = rest.map((r) => r.ms).sort((a, b) => a - b);
    t.diagnostic(
      `while Redis is stopped: first request ${first.ms.toFixed(1)} ms; the next 20 (5 of them 401) median ` +
        `${ms[10]?.toFixed(1)} ms, max ${ms[19]?.toFixed(1)} ms`,
    );
    assert.equal(first.status, 200, 'fails open');
    assert.ok(first.ms < 500, `one time-out at most for a request (${first.ms} ms)`);
    assert.deepEqual(
      rest.map((r) => r.status),
      Array.from({ length: 20 }, (_, i) => (i % 4 === 3 ? 401 : 200)),
    );
    // A request that waited on Redis takes the limiter's command time-out (250 ms) at least. One of them
    // waits: the first that needs Redis, which is not always the first request (the tokens this instance
    // holds may serve it, and the next ones). A busy machine makes one that did not wait take 100 ms and
    // more (in a full suite one of the 20 took 374 ms), so up to three may: without the breaker, every
    // request that asks Redis would wait.
    const waited = [first, ...rest].filter((r) => r.ms >= 250).length;
    assert.ok(waited <= 3, `one time-out in all, not one per request (${waited} waited 250 ms or more)`);

    redis.process.kill('SIGCONT');
    // 3 - the one before the pause - this one: the commands Redis ran late took nothing.
    assert.match((await judged()).headers.get('ratelimit') ?? '', /^"default";r=1;/);
  });

  test('configuration: on by default, 0 turns it off, bad values are refused', () => {
    assert.deepEqual(loadConfig({}).rateLimit, { perSecond: 100, burst: 200 });
    assert.equal(loadConfig({ RATE_LIMIT_RPS: '0' }).rateLimit, undefined);
    assert.equal(loadConfig({ RATE_LIMIT_RPS: '0' }).authFailureLimit, true, 'failed authentication stays limited');
    assert.equal(loadConfig({ AUTH_FAILURE_LIMIT: 'off' }).authFailureLimit, false);
    assert.equal(loadConfig({ AUTH_FAILURE_LIMIT: 'on' }).authFailureLimit, true);
    assert.throws(() => loadConfig({ AUTH_FAILURE_LIMIT: 'no' }), /AUTH_FAILURE_LIMIT must be "on" or "off"/);
    assert.deepEqual(loadConfig({ RATE_LIMIT_RPS: '2.5', RATE_LIMIT_BURST: '7' }).rateLimit, {
      perSecond: 2.5,
      burst: 7,
    });
    assert.throws(() => loadConfig({ RATE_LIMIT_RPS: '-1' }), ConfigError);
    assert.throws(() => loadConfig({ RATE_LIMIT_BURST: '0' }), ConfigError);
    assert.throws(() => loadConfig({ REDIS_URL: 'http://x' }), ConfigError);
    assert.equal(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).redisUrl, 'redis://127.0.0.1:6379');
  });

  test('keys issued during the test are unaffected by other keys: issuing stays independent of limits', async (t) => {
    const h = await startHarness(t, backend, { rateLimit: () => ({ limiter: new MemoryRateLimiter(), perKey: slow }) });
    await statuses(h, 6);
    const { key } = await issueApiKey(h.store, () => new Date(), { name: 'fresh' });
    assert.equal((await h.call('GET', '/v1/pets', { key })).status, 200);
  });
});

test('memory limiter: sweeping idle buckets judges each by its own rate', async () => {
  let now = 1000;
  const limiter = new MemoryRateLimiter(() => now);
  const strict: Rate = { perSecond: 1, burst: 20 };
  const generous: Rate = { perSecond: 100, burst: 200 };
  for (let i = 0; i < 20; i++) await limiter.take('auth-failures:attacker', strict, 1);
  now += 3;
  // Enough other buckets to trigger a sweep; each is full under the generous rate a moment later.
  for (let i = 0; i < 10_001; i++) await limiter.take(`key:${i}`, generous, 1);
  const decision = await limiter.take('auth-failures:attacker', strict, 0);
  const tokens = decision.outcome === 'unknown' ? Number.NaN : decision.tokens;
  assert.ok(tokens < 5, `the attacker's bucket survived the sweep (tokens ${tokens})`);
});
