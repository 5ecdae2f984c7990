import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eventually } from '../../dev/eventually.js';
import type { Answer } from '../../dev/webhook-receiver.js';
import { type Harness, type HarnessOptions, startHarness } from '../helpers/harness.js';
import { eachBackend, type StoreBackend } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { counted, deliveryLog } from '../helpers/webhooks.js';

/**
 * Endpoint health, black-box over HTTP: endpoints disabled by the service (410 Gone, failing for
 * WEBHOOK_DISABLE_AFTER) or by a change, the event that tells of it, and endpoints enabled again.
 */

/** One retry, a minute after the first attempt: a test sees a delivery wait. */
const ONE_LATE_RETRY: HarnessOptions = {
  webhooks: { allowPrivateUrls: true },
  webhookDelivery: { timeoutMs: 1000, retrySchedule: [60_000] },
};

async function register(h: Harness, url: string, body: Record<string, unknown> = {}) {
  const result = await h.call('POST', '/v1/webhooks', { body: { url, events: ['pet.created'], ...body } });
  assert.equal(result.status, 201, result.text);
  return result.json as { id: number; secret: string };
}

async function patch(h: Harness, id: number, body: Record<string, unknown>) {
  const result = await h.call('PATCH', `/v1/webhooks/${id}`, { body });
  assert.equal(result.status, 200, result.text);
  return result.json;
}

const logOf = (h: Harness, endpoint: number, count: number) =>
  eventually(`endpoint ${endpoint}'s ${count} attempts`, async () => {
    const log = await deliveryLog(h, endpoint);
    return log.length >= count ? log : undefined;
  });

/** Retries after 100 ms then 200 ms; failing never disables. */
const FAST: HarnessOptions = {
  webhooks: { allowPrivateUrls: true },
  webhookDelivery: { timeoutMs: 1000, retrySchedule: [100, 200] },
};

/** The feed's webhook_endpoint.disabled events, once `count` are there (PostgreSQL shows them once ended). */
const disabledEvents = (h: Harness, count: number) =>
  eventually(`${count} webhook_endpoint.disabled events in the feed`, async () => {
    const page = await h.call('GET', '/v1/events?type=webhook_endpoint.disabled');
    assert.equal(page.status, 200, page.text);
    return page.json.length >= count ? page.json : undefined;
  });

const failingFirst =
  (times: number, status = 500): Answer =>
  (n) => ({ status: n < times ? status : 204 });

function suite(backend: StoreBackend) {
  test('a 410 disables an endpoint at once, on two instances once; enabled again, it gets what waited', async (t) => {
    const h = await startHarness(t, backend, FAST);
    const other = await h.startInstance();
    const gone = await startReceiver(t, failingFirst(Number.POSITIVE_INFINITY, 410));
    const watcher = await startReceiver(t);
    const { id } = await register(h, gone.url, { ordering: 'none' });
    const watching = await register(h, watcher.url, { events: ['webhook_endpoint.disabled'] });
    await register(h, watcher.url);
    // Both instances send: each may get a 410 before either records the disable.
    await h.createPets(6);
    const [event] = await disabledEvents(h, 1);
    const shown = (await h.call('GET', `/v1/webhooks/${id}`)).json;
    assert.deepEqual([shown.enabled, shown.disabledReason], [false, 'gone']);
    assert.ok(Date.parse(shown.disabledAt) <= Date.now(), shown.disabledAt);
    assert.deepEqual(event.data, shown, 'the event carries the endpoint as GET shows it');
    assert.equal(event.data.ordering, 'none');
    await watcher.until((got) => got.some((r) => r.headers['webhook-id'] === event.id), 3000);
    const sent = watcher.received.filter((r) => r.headers['webhook-id'] === event.id);
    assert.deepEqual(JSON.parse(sent[0]?.body ?? ''), event, 'sent to the endpoint subscribed to it');
    // The attempt is recorded after the receiver answered it: the log may lag the receiver a little.
    const log = await logOf(h, watching.id, 1);
    assert.deepEqual(
      log.map((entry) => entry.type),
      ['webhook_endpoint.disabled'],
      'not sent to endpoints on the default subscription',
    );
    assert.equal(await counted([h, other], 'petstore_webhook_endpoints_disabled_total{reason="gone"}'), 1);
    const answered = gone.received.length;
    assert.ok(answered < 6 * 3, `attempts stop once disabled (${answered})`);
    // Retries were due within 300 ms: none is made while it is disabled.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(gone.received.length, answered, 'nothing is sent to a disabled endpoint');
    assert.equal((await disabledEvents(h, 1)).length, 1, 'recorded once across both instances');
    const promised = (await deliveryLog(h, id)).filter((entry) => entry.nextAttemptAt !== undefined);
    assert.deepEqual(promised, [], 'the log promises no attempt while the endpoint is disabled');

    // What waited: the deliveries still pending (queued before the disable; later events are not sent).
    const waited = new Set((await deliveryLog(h, id)).map((entry) => entry.eventId));
    const receiving = await startReceiver(t);
    await patch(h, id, { url: receiving.url });
    const enabled = await patch(h, id, { enabled: true });
    assert.deepEqual([enabled.enabled, enabled.disabledReason, enabled.disabledAt], [true, null, null]);
    await receiving.until((got) => [...waited].every((e) => got.some((r) => r.headers['webhook-id'] === e)), 3000);
    assert.equal(new Set(receiving.ids()).size, receiving.ids().length, 'each once');
  });

  test('a 410 with events still to fan out: enabled again, it gets every event of its types from before', async (t) => {
    // No dispatcher yet: the events are recorded and wait for fan-out, which queues 256 deliveries a step
    // shared by the endpoints (128 each here), so at the first 410 most are still to fan out.
    const h = await startHarness(t, backend, { webhooks: { allowPrivateUrls: true } });
    const gone = await startReceiver(t, () => ({ status: 410 }));
    const endpoints = [await register(h, gone.url), await register(h, gone.url)];
    const pets = await h.createPets(600);
    await h.startInstance(FAST);
    for (const { id } of endpoints) {
      await eventually(`endpoint ${id} disabled`, async () => {
        const shown = (await h.call('GET', `/v1/webhooks/${id}`)).json;
        return shown.enabled === false ? shown : undefined;
      });
    }
    t.diagnostic(`${gone.received.length} attempts answered 410`);
    await h.createPets(5);
    const expected = pets.map((pet) => String(pet.id)).sort();
    for (const { id } of endpoints) {
      const receiving = await startReceiver(t);
      await patch(h, id, { url: receiving.url, enabled: true });
      const petIds = () => receiving.received.map((r) => String(JSON.parse(r.body).data.id));
      await receiving.until((got) => got.length >= expected.length, 10_000);
      // Past the last one due, in case more come than should.
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(petIds().sort(), expected, 'every pet created before the disable, once; none after');
    }
  });

  test('failing for WEBHOOK_DISABLE_AFTER disables it; a success restarts the count', async (t) => {
    // Attempts come about every 450 ms here (the dispatcher's poll, the endpoint's slot after failures).
    const disableAfterMs = 1500;
    const h = await startHarness(t, backend, {
      webhooks: { allowPrivateUrls: true },
      webhookDelivery: { timeoutMs: 1000, retrySchedule: Array(20).fill(100), disableAfterMs },
    });
    // Fails twice, succeeds once, then fails for good.
    const receiver = await startReceiver(t, (n) => ({ status: n === 2 ? 204 : 503 }));
    const { id } = await register(h, receiver.url);
    await h.createPets(1);
    await receiver.until((got) => got.length >= 3, 3000);
    await h.createPets(1);
    const [event] = await disabledEvents(h, 1);
    const shown = (await h.call('GET', `/v1/webhooks/${id}`)).json;
    assert.deepEqual([shown.enabled, shown.disabledReason], [false, 'failing']);
    assert.deepEqual(event.data, shown);
    const log = (await deliveryLog(h, id)).reverse();
    const success = log.findIndex((entry) => entry.status === 'succeeded');
    const since = Date.parse(log[success + 1].attemptedAt);
    const last = Date.parse(log.at(-1).attemptedAt);
    assert.ok(last - since >= disableAfterMs, `disabled after failing ${last - since} ms`);
    assert.ok(last - since < disableAfterMs + 1000, `disabled once failing ${last - since} ms`);
    assert.equal(await counted([h], 'petstore_webhook_endpoints_disabled_total{reason="failing"}'), 1);
  });

  test('enabled again, an endpoint is sent at once what waited for it', async (t) => {
    const h = await startHarness(t, backend, ONE_LATE_RETRY);
    const receiver = await startReceiver(t, failingFirst(1));
    const { id } = await register(h, receiver.url);
    await h.createPets(1);
    const [first] = await logOf(h, id, 1);
    assert.equal(first.status, 'pending');
    const disabled = await patch(h, id, { enabled: false });
    assert.equal(disabled.disabledReason, 'manual');
    await h.createPets(1);
    const enabled = await patch(h, id, { enabled: true });
    assert.deepEqual([enabled.enabled, enabled.disabledReason, enabled.disabledAt], [true, null, null]);
    // Due a minute after its first attempt; sent within a poll of the enable.
    await receiver.until((got) => got.length === 2, 3000);
    assert.deepEqual(receiver.ids(), [first.eventId, first.eventId], 'the event recorded while disabled is not sent');
  });
}

eachBackend((backend) => {
  describe(`webhook endpoint health [${backend.name}]`, () => suite(backend));
});
