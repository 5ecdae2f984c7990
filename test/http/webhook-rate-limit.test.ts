import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { COUNTED_WINDOW_MS, RATE_LIMIT_WINDOW_MS } from '../../src/domain/start-window.js';
import type { RedisStartLimits } from '../../src/webhooks/start-limiter.js';
import { startHarness } from '../helpers/harness.js';
import { eachBackend } from '../helpers/stores.js';
import { startThreadReceiver } from '../helpers/thread-receiver.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { counted, createEndpoint, deliveryLog } from '../helpers/webhooks.js';

/**
 * An endpoint's rate limit (docs/decisions/endpoint-rate-limit.md), black-box: two instances send, sixty
 * events arrive at once, and the limited endpoint's receiver, on a thread of its own, sees at most its limit
 * in every one-second window (the service logged at most that many starts in every 1.1 s), gets each event
 * once with no attempt failed or counted for the wait, while an unlimited endpoint on the same events is
 * not slowed.
 */

const LIMIT = 5;
const EVENTS = 60;
const REDIS_URL = process.env.PETSTORE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The most of `times` (ms) in any window [t, t + `window`) that starts at one of them: every sliding window's count. */
function busiestWindow(times: readonly number[], window: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let end = 0;
  for (let start = 0; start < sorted.length; start++) {
    while (end < sorted.length && (sorted[end] as number) < (sorted[start] as number) + window) end++;
    most = Math.max(most, end - start);
  }
  return most;
}

/** Two instances, the limits in the database, or in Redis (under a key prefix of this test's own). */
async function twoInstances(t: TestContext, backend: Parameters<typeof startHarness>[1], redis: boolean) {
  const redisStartLimits: RedisStartLimits | undefined = redis
    ? { url: REDIS_URL, keyPrefix: `petstore-test:starts:${randomUUID()}:` }
    : undefined;
  const options = {
    webhooks: { allowPrivateUrls: true },
    webhookDelivery: { timeoutMs: 3000, retrySchedule: [1000, 1000], redisStartLimits },
  };
  const h = await startHarness(t, backend, options);
  return [h, await h.startInstance(options)] as const;
}

eachBackend((backend) => {
  describe(`webhook rate limits [${backend.name}]`, () => {
    for (const where of ['database', 'redis'] as const) {
      test(`limited to ${LIMIT}/s through the ${where}: at most ${LIMIT} starts a second, each event once, others not slowed`, async (t) => {
        const instances = await twoInstances(t, backend, where === 'redis');
        const [h, other] = instances;
        const limitedReceiver = await startThreadReceiver(t);
        const freeReceiver = await startReceiver(t);
        const limited = await createEndpoint(h, { url: limitedReceiver.url, rateLimit: LIMIT });
        await createEndpoint(h, { url: freeReceiver.url });

        // Sixty events at once, half written through each instance.
        const pets = Array.from({ length: EVENTS }, (_, i) =>
          (i % 2 === 0 ? h : other).call('POST', '/v1/pets', { body: { name: `pet-${i}`, categoryId: 1 } }),
        );
        for (const created of await Promise.all(pets)) assert.equal(created.status, 201, created.text);

        await freeReceiver.until((got) => got.length >= EVENTS, 30_000);
        const freeDone = Math.max(...freeReceiver.received.map((request) => request.at));
        // 60 at 5 in 1.1 s take 12 s at least; the ceiling is generous for a loaded machine.
        await limitedReceiver.until(EVENTS, 120_000);
        const arrivals = limitedReceiver.arrivals.map((arrival) => arrival.at);
        const limitedDone = Math.max(...arrivals);

        const ids = limitedReceiver.arrivals.map((arrival) => arrival.id);
        assert.equal(new Set(ids).size, EVENTS, 'every event');
        assert.equal(ids.length, EVENTS, 'each once');

        // An attempt is recorded just after its answer (SQLite gathers records for a few milliseconds).
        let log = await deliveryLog(h, limited.id);
        for (const until = Date.now() + 10_000; log.length < EVENTS && Date.now() < until; ) {
          await sleep(100);
          log = await deliveryLog(h, limited.id);
        }
        assert.equal(log.length, EVENTS, 'one attempt each: waiting counted none');
        assert.ok(
          log.every((entry) => entry.status === 'succeeded' && entry.attempt === 1),
          'none failed, none retried',
        );
        const starts = log.map((entry) => Date.parse(entry.attemptedAt));
        const arrivedAt = new Map(limitedReceiver.arrivals.map((arrival) => [arrival.id, arrival.at]));
        const lags = log.map((entry) => (arrivedAt.get(entry.eventId) ?? 0) - Date.parse(entry.attemptedAt));
        const [started, arrived] = [
          busiestWindow(starts, COUNTED_WINDOW_MS),
          busiestWindow(arrivals, RATE_LIMIT_WINDOW_MS),
        ];
        t.diagnostic(
          `busiest: ${started} started in 1.1 s, ${arrived} arrived in 1 s (start to arrival ` +
            `${Math.min(...lags)}–${Math.max(...lags)} ms); limited took ${limitedDone - Math.min(...arrivals)} ms, ` +
            `the other was done ${limitedDone - freeDone} ms earlier`,
        );
        assert.ok(started <= LIMIT, `at most ${LIMIT} started in any 1.1 s: ${started}`);
        assert.ok(arrived <= LIMIT, `at most ${LIMIT} arrived in any second: ${arrived}`);
        assert.ok(Math.max(...starts) - Math.min(...starts) >= (EVENTS / LIMIT - 1) * COUNTED_WINDOW_MS);

        // The unlimited endpoint got all of its sixty before the limited one was half-way.
        assert.ok(freeDone < limitedDone - (EVENTS / LIMIT / 2) * RATE_LIMIT_WINDOW_MS, 'the other is not slowed');
        assert.equal(freeReceiver.received.length, EVENTS);
        assert.ok((await counted([...instances], 'petstore_webhook_deliveries_rate_limited_total')) > 0);
      });
    }
  });
});
