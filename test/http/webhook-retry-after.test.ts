import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { eventually } from '../../dev/eventually.js';
import type { Answer, Receiver } from '../../dev/webhook-receiver.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { eachBackend, type StoreBackend } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { deliveryLog } from '../helpers/webhooks.js';

/**
 * Retry-After from a receiver, black-box over HTTP: a 429 or 503 that asks for a wait holds that endpoint's
 * every delivery until then (capped at the schedule's longest delay), on every instance; other endpoints
 * go on at once; a malformed value, or one on another status, is ignored.
 */

/** A harness whose retries follow `retrySchedule` (ms): its longest delay is the cap on a wait. */
const harness = (t: TestContext, backend: StoreBackend, retrySchedule: number[]) =>
  startHarness(t, backend, {
    webhooks: { allowPrivateUrls: true },
    webhookDelivery: { timeoutMs: 1000, retrySchedule },
  });

async function register(h: Harness, url: string) {
  const result = await h.call('POST', '/v1/webhooks', { body: { url, events: ['pet.created'] } });
  assert.equal(result.status, 201, result.text);
  return result.json as { id: number };
}

/** Answers the first requests as listed (a status and its Retry-After, if any), then 204. */
const answering =
  (...first: [number, string?][]): Answer =>
  (n) => {
    const [status, retryAfter] = first[n] ?? [204];
    return { status, headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter } };
  };

/** The log's first entry, once the attempt is recorded. */
const firstEntry = (h: Harness, endpoint: number) =>
  eventually(`endpoint ${endpoint}'s first attempt logged`, async () => (await deliveryLog(h, endpoint)).at(-1));

/** Milliseconds between the receiver's n-th request and the one before it. */
const gap = (receiver: Receiver, n: number) =>
  (receiver.received[n]?.at ?? Number.NaN) - (receiver.received[n - 1]?.at ?? Number.NaN);

function suite(backend: StoreBackend) {
  test('a 429 with Retry-After: 2 holds all of that endpoint for 2 s, on both instances; others go on', async (t) => {
    const h = await harness(t, backend, [100, 3000]);
    await h.startInstance();
    const asking = await startReceiver(t, answering([429, '2']));
    const other = await startReceiver(t);
    const { id } = await register(h, asking.url);
    await register(h, other.url);
    await h.createPets(1);
    await asking.until((got) => got.length === 1, 3000);
    const entry = await firstEntry(h, id);
    assert.equal(entry.status, 'pending');
    assert.equal(entry.responseStatus, 429);
    const waited = Date.parse(entry.nextAttemptAt) - Date.parse(entry.attemptedAt);
    assert.ok(waited >= 2000 && waited < 3000, `the log shows the retry 2 s on (${waited} ms), not 100 ms`);
    const shown = (await h.call('GET', `/v1/webhooks/${id}`)).json;
    assert.equal(shown.pausedUntil, entry.nextAttemptAt, 'the endpoint shows until when it waits');
    // A change meanwhile: the other endpoint gets it at once; this one's new delivery waits with the retry.
    await h.createPets(1);
    await other.until((got) => got.length === 2, 1500);
    assert.equal(asking.received.length, 1, 'nothing sent to the paused endpoint');
    await asking.until((got) => got.length === 3, 6000);
    assert.ok(gap(asking, 1) >= 2000, `retried ${gap(asking, 1)} ms after the 429`);
    assert.ok(gap(asking, 1) < 4000, `retried ${gap(asking, 1)} ms after the 429, once the wait was over`);
    assert.equal(new Set(asking.ids()).size, 2, 'both events, the first retried');
  });

  test('a test send to a paused endpoint goes at once; its retry waits for the pause to end', async (t) => {
    const h = await harness(t, backend, [100, 10_000]);
    const receiver = await startReceiver(t, answering([429, '4'], [500]));
    const { id } = await register(h, receiver.url);
    await h.createPets(1);
    await receiver.until((got) => got.length === 1, 3000);
    const { pausedUntil } = await eventually('the endpoint paused', async () => {
      const shown = (await h.call('GET', `/v1/webhooks/${id}`)).json;
      return shown.pausedUntil === null ? undefined : shown;
    });
    const asked = Date.now();
    assert.equal((await h.call('POST', `/v1/webhooks/${id}/test`)).status, 202);
    await receiver.until((got) => got.length === 2, 3000);
    const sent = receiver.received[1];
    assert.equal(JSON.parse(sent?.body ?? '{}').type, 'webhook.test');
    assert.ok((sent?.at ?? 0) - asked < 1500, `sent ${(sent?.at ?? 0) - asked} ms after it was asked for`);
    assert.ok((sent?.at ?? 0) < Date.parse(pausedUntil), 'before the pause ends');
    // Answered 500: its retry, due 100 ms on, and the pet's wait for the pause, as every delivery of it does.
    await receiver.until((got) => got.length === 4, 8000);
    for (const retry of receiver.received.slice(2)) {
      assert.ok(retry.at >= Date.parse(pausedUntil), `retried ${Date.parse(pausedUntil) - retry.at} ms early`);
    }
  });

  test('Retry-After as an HTTP-date, on a 503: no attempt before that time', async (t) => {
    const h = await harness(t, backend, [100, 10_000]);
    // Whole seconds: at least 2 s from now.
    const date = new Date(Math.ceil((Date.now() + 3000) / 1000) * 1000);
    const receiver = await startReceiver(t, answering([503, date.toUTCString()]));
    const { id } = await register(h, receiver.url);
    await h.createPets(1);
    await receiver.until((got) => got.length === 2, 8000);
    assert.ok((receiver.received[1]?.at ?? 0) >= date.getTime(), `retried before ${date.toUTCString()}`);
    assert.ok(gap(receiver, 1) < 6000, `retried ${gap(receiver, 1)} ms after the 503`);
    const entry = await firstEntry(h, id);
    assert.equal(Date.parse(entry.nextAttemptAt), date.getTime(), 'the log shows the date asked for');
  });

  test("a wait longer than the schedule's longest delay is capped at it", async (t) => {
    const h = await harness(t, backend, [100, 1000]);
    const receiver = await startReceiver(t, answering([429, '600']));
    const { id } = await register(h, receiver.url);
    await h.createPets(1);
    await receiver.until((got) => got.length === 2, 3000);
    assert.ok(gap(receiver, 1) >= 1000, `retried ${gap(receiver, 1)} ms after the 429`);
    const entry = await firstEntry(h, id);
    const waited = Date.parse(entry.nextAttemptAt) - Date.parse(entry.attemptedAt);
    assert.ok(waited >= 1000 && waited < 1500, `the log shows the capped wait (${waited} ms)`);
  });

  test('a malformed or negative Retry-After, or one on another status, is ignored: the schedule goes on', async (t) => {
    const h = await harness(t, backend, [100, 100, 100, 100, 5000]);
    const receiver = await startReceiver(
      t,
      answering([429, 'soon'], [503, '-5'], [429, 'Sun, 31 Feb 2999 00:00:00 GMT'], [500, '3']),
    );
    const { id } = await register(h, receiver.url);
    await h.createPets(1);
    await receiver.until((got) => got.length === 5, 10_000);
    for (let n = 1; n < 5; n++) assert.ok(gap(receiver, n) < 2500, `attempt ${n + 1}: ${gap(receiver, n)} ms`);
    const log = await deliveryLog(h, id);
    for (const entry of log.filter((e) => e.status === 'pending')) {
      const waited = Date.parse(entry.nextAttemptAt) - Date.parse(entry.attemptedAt);
      assert.ok(waited < 2500, `attempt ${entry.attempt}: next on the schedule (${waited} ms)`);
    }
  });
}

eachBackend((backend) => {
  describe(`webhook Retry-After [${backend.name}]`, () => suite(backend));
});
