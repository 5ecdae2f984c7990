import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { eventually } from '../../dev/eventually.js';
import { expectError } from '../helpers/calls.js';
import { type Harness, type HarnessOptions, startHarness } from '../helpers/harness.js';
import { portalSession } from '../helpers/portal-session.js';
import { settledFeed } from '../helpers/settled-feed.js';
import { eachBackend } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/**
 * One event by id, `GET /v1/events/{eventId}`, black-box: what a partner's delivery carried, looked up as the
 * portal does, against the feed and what a local receiver got; and every id it does not show.
 */

/** Deliveries to local receivers, one quick retry. */
const SENDING: HarnessOptions = {
  webhooks: { allowPrivateUrls: true },
  webhookDelivery: { timeoutMs: 1000, retrySchedule: [100] },
};

const getEvent = (h: Harness, id: string, key?: string | null) =>
  h.call('GET', `/v1/events/${id}`, key === undefined ? {} : { key });

/** The Error message of a 404 for `id`, with the id taken out: what every unseen id must share. */
async function notFound(h: Harness, id: string, key?: string): Promise<string> {
  const message = expectError(await getEvent(h, id, key), 404, 'not_found');
  assert.ok(message.includes(id), message);
  return message.replace(id, '<id>');
}

async function register(h: Harness, url: string, key: string, events?: readonly string[]): Promise<number> {
  const created = await h.call('POST', '/v1/webhooks', { key, body: { url, ...(events && { events }) } });
  assert.equal(created.status, 201, created.text);
  return created.json.id;
}

/**
 * An endpoint of the key's owner whose receiver answers 410, so the service disables it: the endpoint, and
 * the `webhook_endpoint.disabled` event of that owner it records (read with the key, scope `read`).
 */
async function disabledEndpoint(t: TestContext, h: Harness, key: string) {
  const gone = await startReceiver(t, () => ({ status: 410 }));
  const endpoint = await register(h, gone.url, key, ['pet.created']);
  await h.createPets(1);
  const [disabled] = await eventually('the disable on its owner’s feed', async () => {
    const page = await h.call('GET', '/v1/events?type=webhook_endpoint.disabled', { key });
    return page.json.length > 0 ? page.json : undefined;
  });
  return { endpoint, disabled };
}

eachBackend((backend) => {
  describe(`one event by id [${backend.name}]`, () => {
    test('is the feed’s event and the webhook body of it, for every kind of event', async (t) => {
      const h = await startHarness(t, backend, SENDING);
      const receiver = await startReceiver(t);
      await register(h, receiver.url, h.keys.all);
      const [rex] = await h.createPets(1);
      const changed = await h.call('PATCH', `/v1/pets/${rex.id}`, { body: { name: 'Rex II' } });
      assert.equal(changed.status, 200, changed.text);
      const order = await h.call('POST', '/v1/store/orders', { body: { petId: rex.id } });
      assert.equal(order.status, 201, order.text);
      const cancel = await h.call('PATCH', `/v1/store/orders/${order.json.id}`, { body: { status: 'cancelled' } });
      assert.equal(cancel.status, 200, cancel.text);
      await h.call('DELETE', `/v1/pets/${rex.id}`);

      const feed = await settledFeed((path) => h.call('GET', path), 7);
      assert.deepEqual([...new Set(feed.map((event) => event.type))].sort(), [
        'order.placed',
        'order.status_changed',
        'pet.created',
        'pet.deleted',
        'pet.status_changed',
        'pet.updated',
      ]);
      await receiver.until((got) => got.length >= feed.length, 5000);
      const bodies = new Map(receiver.received.map((got) => [got.headers['webhook-id'], JSON.parse(got.body)]));
      for (const event of feed) {
        const one = await getEvent(h, event.id, h.keys.read);
        assert.equal(one.status, 200, one.text);
        assert.deepEqual(one.json, event, `${event.id} as the feed shows it`);
        assert.deepEqual(one.json, bodies.get(event.id), `${event.id} as its webhook body`);
      }
    });

    test('404, read alike, for an unknown id, one past retention, another owner’s, and a test send’s', async (t) => {
      const h = await startHarness(t, backend, SENDING);
      const acme = await h.issueKey('acme-key', ['read', 'webhooks'], 'acme');
      const globex = await h.issueKey('globex-key', ['read', 'webhooks'], 'globex');
      const admin = await h.issueKey('operator', ['read', 'webhooks', 'admin'], 'operator');
      const { endpoint, disabled } = await disabledEndpoint(t, h, acme);
      for (const key of [acme, admin]) assert.deepEqual((await getEvent(h, disabled.id, key)).json, disabled);

      const unknown = await notFound(h, 'evt_999999999', acme);
      assert.match(unknown, /EVENT_RETENTION_DAYS/);
      assert.equal(await notFound(h, disabled.id, globex), unknown, 'another owner’s reads as never recorded');

      const sent = await h.call('POST', `/v1/webhooks/${endpoint}/test`, { key: acme });
      assert.equal(sent.status, 202, sent.text);
      assert.equal(await notFound(h, sent.json.eventId, acme), unknown, 'a test send’s is not on the feed');
      assert.equal(await notFound(h, sent.json.eventId, admin), unknown);

      const [created] = await settledFeed((path) => h.call('GET', path), 1, 'type=pet.created');
      assert.equal((await getEvent(h, created.id)).status, 200);
      await h.store.events.purge(new Date(Date.now() + 60_000), new Date());
      assert.equal(await notFound(h, created.id), unknown, 'removed by retention');
    });

    test('a portal session looks events up as its owner’s keys do, under /portal/v1 only', async (t) => {
      const h = await startHarness(t, backend, SENDING);
      const acme = await h.issueKey('acme-key', ['read', 'webhooks'], 'acme');
      const globex = await h.issueKey('globex-key', ['webhooks'], 'globex');
      const { endpoint, disabled } = await disabledEndpoint(t, h, acme);
      const [created] = await settledFeed((path) => h.call('GET', path), 1, 'type=pet.created');
      const sent = await h.call('POST', `/v1/webhooks/${endpoint}/test`, { key: acme });
      assert.equal(sent.status, 202, sent.text);
      const acmePortal = await portalSession(h, acme);
      const globexPortal = await portalSession(h, globex);

      assert.deepEqual((await acmePortal(created.id)).json, created, 'a pet’s event, as the feed shows it');
      assert.deepEqual((await acmePortal(disabled.id)).json, disabled, 'its own endpoint’s');
      const unknown = expectError(await acmePortal('evt_999999999'), 404, 'not_found').replace('evt_999999999', '<id>');
      const unseen = [
        [globexPortal, disabled.id],
        [acmePortal, sent.json.eventId],
      ] as const;
      for (const [session, id] of unseen) {
        assert.equal(expectError(await session(id), 404, 'not_found').replace(id, '<id>'), unknown, id);
      }
      expectError(await acmePortal('evt_x'), 400, 'invalid_request');
      // The key's scope is unchanged: `webhooks` alone does not read events under /v1.
      expectError(await getEvent(h, created.id, globex), 403, 'forbidden');
    });

    test('a malformed id is 400 naming it; a key is required, and read scope suffices', async (t) => {
      const h = await startHarness(t, backend);
      for (const id of ['12', 'evt_', 'evt_0', 'evt_012', 'evt_x', 'evt_1.5', 'evt_1234567890123456', 'EVT_1']) {
        const message = expectError(await getEvent(h, id), 400, 'invalid_request');
        assert.match(message, /^path parameter "eventId" must be an event id/, `${id}: ${message}`);
      }
      expectError(await h.call('GET', '/v1/events/evt_1?limit=1'), 400, 'invalid_request');
      const [pet] = await h.createPets(1);
      const [event] = await settledFeed((path) => h.call('GET', path), 1);
      assert.equal(event.data.id, pet.id);
      expectError(await getEvent(h, event.id, null), 401, 'unauthorized');
      expectError(await getEvent(h, event.id, 'psk_nope'), 401, 'unauthorized');
      expectError(await getEvent(h, event.id, h.keys.write), 403, 'forbidden');
      assert.deepEqual((await getEvent(h, event.id, h.keys.read)).json, event);
      expectError(await h.call('DELETE', `/v1/events/${event.id}`), 405, 'method_not_allowed');
    });
  });
});
