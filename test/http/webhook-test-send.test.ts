import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { type CallResult, expectError } from '../helpers/calls.js';
import { type Harness, type HarnessOptions, startHarness } from '../helpers/harness.js';
import { settledFeed } from '../helpers/settled-feed.js';
import { isStream, openStream, type SseStream } from '../helpers/sse-client.js';
import { eachBackend } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { createEndpoint, deliveryLog } from '../helpers/webhooks.js';

/**
 * Test sends, black-box: over HTTP, what local receivers get verified by `standardwebhooks`, and the feed
 * and the live stream read as a client reads them.
 */

/** One retry after 50 ms, then failed. */
const FAST: HarnessOptions = {
  webhooks: { allowPrivateUrls: true },
  webhookDelivery: { timeoutMs: 1000, retrySchedule: [50] },
};

const sendTest = (h: Harness, id: number, key?: string) =>
  h.call('POST', `/v1/webhooks/${id}/test`, key === undefined ? {} : { key });

/** Sends a test and returns its event id (202 asserted, and the endpoint's state as the answer says it). */
async function sentTest(h: Harness, id: number, endpointEnabled = true): Promise<string> {
  const accepted = await sendTest(h, id);
  assert.equal(accepted.status, 202, accepted.text);
  assert.deepEqual(Object.keys(accepted.json), ['eventId', 'endpointEnabled']);
  assert.match(accepted.json.eventId, /^evt_[1-9][0-9]*$/);
  assert.equal(accepted.json.endpointEnabled, endpointEnabled);
  return accepted.json.eventId;
}

/** The endpoint's log, newest first, as `attempt status trigger type eventId`, once it has `n` entries. */
async function logged(h: Harness, id: number, n: number): Promise<string[]> {
  for (let i = 0; ; i++) {
    const log = (await deliveryLog(h, id)).map((e) => `${e.attempt} ${e.status} ${e.trigger} ${e.type} ${e.eventId}`);
    if (log.length >= n || i === 100) return log;
    await sleep(20);
  }
}

async function openFeedStream(t: TestContext, h: Harness): Promise<SseStream> {
  const opened = await openStream(h.url, '/v1/events', { key: h.keys.read });
  assert.ok(isStream(opened), `not a stream: ${(opened as CallResult).status} ${(opened as CallResult).text}`);
  t.after(() => opened.close());
  return opened;
}

eachBackend((backend) => {
  describe(`webhook test send [${backend.name}]`, () => {
    test('arrives signed to this endpoint alone, logged as a test, never on the feed or the stream', async (t) => {
      const h = await startHarness(t, backend, FAST);
      const tested = await startReceiver(t);
      const other = await startReceiver(t);
      const { id, secret } = await createEndpoint(h, { url: tested.url, events: ['order.placed'] });
      await createEndpoint(h, { url: other.url });
      const stream = await openFeedStream(t, h);

      await h.createPets(1);
      const eventId = await sentTest(h, id);
      await h.createPets(1);
      await tested.until((got) => got.length === 1, 5000);
      const [request] = tested.received;
      assert.ok(request);
      assert.equal(request.headers['webhook-id'], eventId);
      const body = new Webhook(secret).verify(request.body, request.headers) as Record<string, unknown>;
      assert.deepEqual(Object.keys(body), ['id', 'type', 'timestamp', 'data'], 'about nothing: no subject');
      assert.deepEqual(body, {
        id: eventId,
        type: 'webhook.test',
        timestamp: new Date(body.timestamp as string).toISOString(),
        data: { webhookId: id },
      });
      assert.deepEqual(await logged(h, id, 1), [`1 succeeded test webhook.test ${eventId}`]);

      const feed = await settledFeed((path) => h.call('GET', path), 2);
      assert.deepEqual(
        feed.map((event) => event.type),
        ['pet.created', 'pet.created'],
      );
      await other.until((got) => got.length === 2, 5000);
      const frames = await stream.waitForEvents(2, 5000);
      await sleep(300);
      assert.deepEqual(other.ids(), [feed[0].id, feed[1].id], 'the other endpoint gets the events, not the test');
      assert.deepEqual(
        stream.events().map((frame) => JSON.parse(frame.data ?? '').id),
        feed.map((event) => event.id),
      );
      assert.equal(frames.length, 2);
      assert.equal(tested.received.length, 1, 'sent once, and its subscription is left as it was');
      const last = frames[1]?.id;
      assert.ok(last);
      const after = await h.call('GET', `/v1/events?cursor=${encodeURIComponent(last)}`);
      assert.deepEqual(after.json, [], 'nothing after the last event of the feed');
    });

    test('a failing receiver gets it retried on the schedule, then failed', async (t) => {
      const h = await startHarness(t, backend, FAST);
      const receiver = await startReceiver(t, () => ({ status: 500 }));
      const { id } = await createEndpoint(h, { url: receiver.url });
      const eventId = await sentTest(h, id);
      await receiver.until((got) => got.length === 2, 5000);
      assert.deepEqual(await logged(h, id, 2), [
        `2 failed test webhook.test ${eventId}`,
        `1 pending test webhook.test ${eventId}`,
      ]);
      await sleep(300);
      assert.deepEqual(receiver.ids(), [eventId, eventId], 'the same webhook-id on each attempt');
    });

    test('a disabled endpoint accepts it and gets it once enabled; each test is an event of its own', async (t) => {
      const h = await startHarness(t, backend, FAST);
      const receiver = await startReceiver(t);
      const { id } = await createEndpoint(h, { url: receiver.url });
      assert.equal((await h.call('PATCH', `/v1/webhooks/${id}`, { body: { enabled: false } })).status, 200);
      const first = await sentTest(h, id, false);
      const second = await sentTest(h, id, false);
      assert.notEqual(first, second);
      await sleep(300);
      assert.equal(receiver.received.length, 0, 'waits while disabled');
      assert.equal((await h.call('PATCH', `/v1/webhooks/${id}`, { body: { enabled: true } })).status, 200);
      await receiver.until((got) => got.length === 2, 5000);
      await sleep(300);
      assert.deepEqual(new Set(receiver.ids()), new Set([first, second]), 'each sent once');
    });

    test('unknown endpoint 404, a read key 403, a query 400; an empty JSON body is no body', async (t) => {
      const h = await startHarness(t, backend, FAST);
      const { id } = await createEndpoint(h, { url: 'http://127.0.0.1:9/in' });
      assert.match(
        expectError(await sendTest(h, id + 1), 404, 'not_found'),
        new RegExp(`^webhook endpoint ${id + 1} does not exist$`),
      );
      expectError(await sendTest(h, id, h.keys.read), 403, 'forbidden');
      expectError(await h.call('POST', `/v1/webhooks/${id}/test?x=1`), 400, 'invalid_request');
      // A JSON content type with nothing after it is no body, for the operations that take none or may.
      const json = { body: '', headers: { 'content-type': 'application/json' } };
      assert.equal((await h.call('POST', `/v1/webhooks/${id}/test`, json)).status, 202);
      assert.equal((await h.call('POST', `/v1/webhooks/${id}/rotate-secret`, json)).status, 200);
      const resend = await h.call('POST', `/v1/webhooks/${id}/resend`, json);
      assert.match(expectError(resend, 400, 'invalid_request'), /the request body is empty/, 'a body it needs');
      assert.equal((await h.call('DELETE', `/v1/webhooks/${id}`)).status, 204);
      expectError(await sendTest(h, id), 404, 'not_found');
    });
  });
});
