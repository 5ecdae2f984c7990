import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import type { Receiver } from '../../dev/webhook-receiver.js';
import { PER_ENDPOINT } from '../../src/webhooks/dispatcher.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { eachBackend, type StoreBackend } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/**
 * Endpoints that hang cannot starve one that answers (docs/decisions/learned-endpoint-slots.md): however many hang,
 * from the start or after answering for a while, the one that answers gets each event within a second.
 */

/** More hanging endpoints than a process's 64 attempts in all hold at 16 each. */
const HANGING = 6;
const OPTIONS = {
  webhooks: { allowPrivateUrls: true },
  webhookDelivery: { timeoutMs: 3000, retrySchedule: [60_000] },
};

async function register(h: Harness, url: string): Promise<void> {
  const result = await h.call('POST', '/v1/webhooks', { body: { url, events: ['pet.created'] } });
  assert.equal(result.status, 201, result.text);
}

/**
 * Creates `count` pets one after another, each once the healthy receiver got the one before, and returns
 * how late each arrived there (ms after its create answered). Stops waiting for one after the time-out:
 * starved, it would arrive once hanging attempts time out and free their slots.
 */
async function lateness(h: Harness, healthy: Receiver, count: number): Promise<number[]> {
  const late: number[] = [];
  for (let i = 0; i < count; i++) {
    const before = healthy.received.length;
    await h.createPets(1);
    const created = Date.now();
    await healthy.until((got) => got.length > before, 2 * OPTIONS.webhookDelivery.timeoutMs);
    late.push((healthy.received[before]?.at ?? Number.POSITIVE_INFINITY) - created);
  }
  return late;
}

function report(t: TestContext, late: number[]): void {
  const sorted = [...late].sort((a, b) => a - b);
  t.diagnostic(
    `healthy endpoint: ${late.length} events, median ${sorted[sorted.length >> 1]} ms, max ${sorted.at(-1)} ms`,
  );
}

function suite(backend: StoreBackend) {
  test('endpoints that never answer take one slot each, and one that answers is never kept waiting', async (t) => {
    const h = await startHarness(t, backend, OPTIONS);
    const hanging = await Promise.all(Array.from({ length: HANGING }, () => startReceiver(t, () => 'hang')));
    for (const receiver of hanging) await register(h, receiver.url);
    const healthy = await startReceiver(t);
    await register(h, healthy.url);
    const started = Date.now();
    const late = await lateness(h, healthy, 2 * PER_ENDPOINT);
    report(t, late);
    assert.ok(Math.max(...late) < 1000, `every event within 1 s: ${late.join(' ')}`);
    // One attempt at a time: the next only once the last timed out (a loaded machine may get there).
    const oneAtATime = Math.floor((Date.now() - started) / OPTIONS.webhookDelivery.timeoutMs) + 1;
    for (const receiver of hanging) assert.ok(receiver.received.length <= oneAtATime, 'one attempt at a time');
  });

  test('endpoints that answered, then hang, lose their share as their attempts time out', async (t) => {
    const h = await startHarness(t, backend, OPTIONS);
    let hang = false;
    const turning = await Promise.all(
      Array.from({ length: HANGING }, () => startReceiver(t, () => (hang ? 'hang' : { status: 204 }))),
    );
    for (const receiver of turning) await register(h, receiver.url);
    const healthy = await startReceiver(t);
    await register(h, healthy.url);
    // Enough successes, a few at once, for each endpoint to earn its full share.
    for (let i = 0; i < 4; i++) await Promise.all(Array.from({ length: 8 }, () => h.createPets(1)));
    await healthy.until((got) => got.length === 32, 5000);
    hang = true;
    const late = await lateness(h, healthy, 4 * PER_ENDPOINT);
    report(t, late);
    assert.ok(Math.max(...late) < 1000, `every event within 1 s: ${late.join(' ')}`);
  });
}

eachBackend((backend) => {
  describe(`webhook fairness [${backend.name}]`, () => suite(backend));
});
